"""Open a target by URL: the embedded model, or a switch spoken to over P4Runtime.

=========================================  =================================================
``model`` (default)                         an embedded model switch in this process
``model?server_port=8``                     the same; it plays a program's server behind
                                            port 8 (:mod:`sfclab.codegen.detour`)
``model?arch=tna&pipes=4``                  an embedded Tofino 1 running TNA programs
                                            (pipes 1, 2 (default) or 4; ``loopback=4,132``:
                                            ports set to loopback) (:mod:`.model.tna`)
``model://127.0.0.1:9559``                  a model switch started with ``sfclab model-switch``
                                            (``?arch=tna`` for one running TNA programs)
``bmv2``                                    a ``simple_switch_grpc`` sfclab starts and stops;
                                            packets go over its packet-in socket (no root)
``bmv2?veth=1@veth0,2@veth2``               the same, its ports on veth pairs (root);
                                            ``server_port=N`` as for the model
``bmv2://127.0.0.1:9559?device_id=0``       a running ``simple_switch_grpc``; add
                                            ``packet_in=…`` or ``veth=…`` to send packets and
                                            ``nanolog=…`` for traces
``tofino://127.0.0.1:9559?device_id=0``     bf_switchd's or Stratum's P4Runtime server (the
                                            TNA program is compiled with ``bf-p4c``); add
                                            ``veth=1@veth0,…`` to send packets (tofino-model)
=========================================  =================================================

Every target has ``push(generated)``, ``update(generated)``, ``occupancy()`` and
``close()``.  The embedded model and BMv2 (:class:`~sfclab.targets.bmv2.switch.Bmv2Switch`: the
program is compiled with ``p4c-bm2-ss`` when pushed) also run packets (``send``)
and return their outputs and traces; a Tofino (or ``tofino-model``) runs packets
when its veth ports are given, and its traces are the outputs only.

>>> t = open_target("model")
>>> t.kind
'model'
>>> t.close()
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from urllib.parse import urlsplit

from ..codegen import Generated
from ..errors import TargetError, did_you_mean
from ..runtime.client import Client
from ..runtime.replication import DEFAULT_PORTS
from ..runtime.session import Session
from .url_query import INTEGER, PORTS, Param, choice, read_query

__all__ = ["open_target", "RemoteTarget", "SCHEMES", "MODEL_PARAMS"]

SCHEMES = ("model", "bmv2", "tofino")


class RemoteTarget:
    """A switch sfclab drives over P4Runtime, and through its veth ports when *ports*
    (:class:`~sfclab.targets.ports.packet_io.PacketPorts`) reach them; it has no per-packet event log,
    so a packet's trace is what came out of which port."""

    #: How long ``send`` waits for a packet's outputs (see :meth:`~sfclab.targets.ports.packet_io.drain`).
    quiet = 0.15
    timeout = 3.0

    def __init__(self, kind: str, address: str, *, device_id: int,
                 device_config: Callable[[Generated], bytes], arch: str,
                 ports=None) -> None:
        self.kind, self.address, self.arch = kind, address, arch
        self.ports = ports
        self.results: list = []
        self.client = Client(address, device_id=device_id).connect()
        self.session = Session(self.client, device_config, grace=0.1 if kind != "model" else 0,
                               ports=self.switch_ports)

    def __repr__(self) -> str:
        return f"<RemoteTarget {self.kind}://{self.address}>"

    def switch_ports(self) -> tuple[int, ...] | None:
        """The data-plane ports a flood floods out of: the veth ports given, a model's
        1..8, else None (unknown: no flood groups are written)."""
        if self.ports is not None:
            return tuple(self.ports.peers)
        return DEFAULT_PORTS if self.kind == "model" else None

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
        """Send one packet into *port* through its veth; its outputs, and a trace of them."""
        from .ports.packet_io import PacketResult, outputs_trace, with_output

        if self.ports is None:
            raise TargetError(f"sfclab cannot put packets on a {self.kind} switch's ports "
                              "from here",
                              hint="give its veth ports in the URL (veth=1@veth0,2@veth2: the "
                                   "switch's ends), or use the embedded model (target 'model')")
        frame = bytes(packet)
        self.ports.collect(quiet=0.0, timeout=0.0)          # leftovers of earlier packets
        self.ports.send(port, frame)
        outputs = self.ports.collect(quiet=self.quiet, timeout=self.timeout)
        trace = outputs_trace(len(self.results), port, outputs,
                              f"a {self.kind} switch keeps no per-packet event log: only "
                              "its outputs are known")
        result = PacketResult(outputs, with_output(trace, outputs))
        self.results.append(result)
        return result

    def close(self) -> None:
        if self.ports is not None:
            self.ports.close()
        self.client.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _tofino_config(fmt: str) -> Callable[[Generated], tuple]:
    def config(gen: Generated):
        from ..codegen.p4c import compiler_p4info
        from .tofino.target import compile_tna

        with tempfile.TemporaryDirectory(prefix="sfclab-tofino-") as out:
            build = compile_tna(gen, out)
            blob = build.bf_pipeline_config() if fmt == "bfrt" else build.pi_device_config()
            return blob, compiler_p4info(build.p4info_path)
    return config


#: The embedded model's URL parameters.
MODEL_PARAMS = {"server_port": INTEGER, "arch": Param(str), "pipes": INTEGER, "loopback": PORTS}
#: A model switch's (``model://HOST:PORT``, ``sfclab model-switch``).
_REMOTE_MODEL_PARAMS = {"device_id": INTEGER, "arch": choice("v1model", "tna")}


def _model_query(url: str) -> dict:
    """The keyword arguments of ``model?server_port=N&arch=tna&pipes=N&loopback=P,Q``."""
    from .model.tna.target_options import tna_options

    out = read_query(url, MODEL_PARAMS)
    tna_options(out.get("arch", "v1model"), out.get("pipes"), out.get("loopback", ()), None)
    return out


def open_target(url: str | None = None):
    """The target *url* names (see the module's table); ``None`` or ``"model"`` is a new
    embedded model."""
    if url in (None, "", "model"):
        from .model import ModelTarget

        return ModelTarget()
    parts = urlsplit(url)
    if (parts.scheme, parts.netloc, parts.path) == ("", "", "model"):
        from .model import ModelTarget

        return ModelTarget(**_model_query(url))
    if parts.scheme == "bmv2" or (parts.scheme, parts.netloc, parts.path) == ("", "", "bmv2"):
        from .bmv2.switch import Bmv2Switch

        return Bmv2Switch.open(url)
    if parts.scheme not in SCHEMES or not parts.netloc:
        guess = did_you_mean(parts.scheme, SCHEMES) if parts.scheme else ""
        raise TargetError(f"cannot read the target {url!r}",
                          hint=" ".join(filter(None, [guess, "use model, model://HOST:PORT, "
                                                      "bmv2, bmv2://HOST:PORT?device_id=N or "
                                                      "tofino://HOST:PORT?device_id=N"])))
    if parts.scheme == "model":
        query = read_query(url, _REMOTE_MODEL_PARAMS)
        arch = query.get("arch", "v1model")
        return RemoteTarget("model", parts.netloc, device_id=query.get("device_id", 1),
                            arch=arch, device_config=lambda g: g.program.text.encode())
    from .tofino.target import parse_tofino_url

    u = parse_tofino_url(url)
    ports = None
    if u["veth"]:
        from .ports.packet_io import VethPorts

        ports = VethPorts(u["veth"])
    try:
        return RemoteTarget("tofino", parts.netloc, device_id=u["device_id"], arch="tna",
                            device_config=_tofino_config(u["format"]), ports=ports)
    except BaseException:
        if ports is not None:
            ports.close()
        raise
