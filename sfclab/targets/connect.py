"""Open a target by URL: the embedded model, or a switch spoken to over P4Runtime.

=========================================  =================================================
``model`` (default)                         an embedded model switch in this process
``model://127.0.0.1:9559``                  a model switch started with ``sfclab model-switch``
``bmv2://127.0.0.1:9559?device_id=0``       a running ``simple_switch_grpc`` (the program is
                                            compiled with ``p4c-bm2-ss`` when pushed)
``tofino://127.0.0.1:9559?device_id=0``     bf_switchd's or Stratum's P4Runtime server (the
                                            TNA program is compiled with ``bf-p4c``)
=========================================  =================================================

Every target has ``push(generated)``, ``update(generated)``, ``occupancy()`` and
``close()``; the embedded model also runs packets (``send``) and returns their
traces.

>>> t = open_target("model")
>>> t.kind
'model'
>>> t.close()
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from urllib.parse import parse_qs, urlsplit

from ..codegen import Generated
from ..errors import TargetError, did_you_mean
from ..runtime.client import Client
from ..runtime.session import Session

__all__ = ["open_target", "RemoteTarget", "SCHEMES"]

SCHEMES = ("model", "bmv2", "tofino")


class RemoteTarget:
    """A switch sfclab drives over P4Runtime only (it does not own its ports)."""

    def __init__(self, kind: str, address: str, *, device_id: int,
                 device_config: Callable[[Generated], bytes], arch: str) -> None:
        self.kind, self.address, self.arch = kind, address, arch
        self.client = Client(address, device_id=device_id).connect()
        self.session = Session(self.client, device_config, grace=0.1 if kind != "model" else 0)

    def __repr__(self) -> str:
        return f"<RemoteTarget {self.kind}://{self.address}>"

    def push(self, gen: Generated) -> int:
        if gen.arch != self.arch:
            raise TargetError(f"a {self.kind} switch runs {self.arch} programs, not {gen.arch}",
                              hint=f"compile with arch={self.arch!r}")
        return self.session.push(gen)

    def update(self, gen: Generated, *, allow_reload: bool = False):
        return self.session.update(gen, allow_reload=allow_reload)

    def occupancy(self):
        return self.session.occupancy()

    def send(self, port: int, packet):
        raise TargetError(f"sfclab cannot put packets on a {self.kind} switch's ports from here",
                          hint="send them on the switch's interfaces (e.g. scapy's sendp on its "
                               "veth), or use the embedded model (target 'model') for traces")

    def close(self) -> None:
        self.client.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _compiler_p4info(path):
    """The compiler's P4Info (the one to push: its ids are the switch's), if it wrote one."""
    from ..codegen.p4info import p4info_from_text

    return p4info_from_text(path.read_text()) if path is not None and path.is_file() else None


def _bmv2_config(gen: Generated):
    """BMv2 JSON from p4c-bm2-ss, and p4c's P4Info."""
    from .bmv2 import compile_v1model

    with tempfile.TemporaryDirectory(prefix="sfclab-bmv2-") as out:
        build = compile_v1model(gen, out)
        return build.device_config(), _compiler_p4info(build.p4info_path)


def _tofino_config(fmt: str) -> Callable[[Generated], tuple]:
    def config(gen: Generated):
        from .tofino import compile_tna

        with tempfile.TemporaryDirectory(prefix="sfclab-tofino-") as out:
            build = compile_tna(gen, out)
            blob = build.bf_pipeline_config() if fmt == "bfrt" else build.pi_device_config()
            return blob, _compiler_p4info(build.p4info_path)
    return config


def open_target(url: str | None = None):
    """The target *url* names (see the module's table); ``None`` or ``"model"`` is a new
    embedded model."""
    if url in (None, "", "model"):
        from .model import ModelTarget

        return ModelTarget()
    parts = urlsplit(url)
    if parts.scheme not in SCHEMES or not parts.netloc:
        guess = did_you_mean(parts.scheme, SCHEMES) if parts.scheme else ""
        raise TargetError(f"cannot read the target {url!r}",
                          hint=" ".join(filter(None, [guess, "use model, model://HOST:PORT, "
                                                      "bmv2://HOST:PORT?device_id=N or "
                                                      "tofino://HOST:PORT?device_id=N"])))
    query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    try:
        device_id = int(query.get("device_id", 1 if parts.scheme == "model" else 0))
    except ValueError:
        raise TargetError(f"device_id must be a number in {url!r}") from None
    if parts.scheme == "model":
        return RemoteTarget("model", parts.netloc, device_id=device_id, arch="v1model",
                            device_config=lambda g: g.program.text.encode())
    if parts.scheme == "bmv2":
        return RemoteTarget("bmv2", parts.netloc, device_id=device_id, arch="v1model",
                            device_config=_bmv2_config)
    return RemoteTarget("tofino", parts.netloc, device_id=device_id, arch="tna",
                        device_config=_tofino_config(query.get("format", "pi")))
