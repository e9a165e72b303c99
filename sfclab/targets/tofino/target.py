"""The Tofino target: sfclab's TNA program on a Tofino (or ``tofino-model``)
behind a P4Runtime server.

``bf-p4c`` comes from Intel's SDE: ``SFCLAB_BF_P4C``, else ``$SDE_INSTALL/bin``
(``$SDE/install/bin``), else ``PATH``.  It writes ``<out>/tofino/program.conf``
(the bf_switchd / tofino-model config naming, per P4 pipeline, ``context.json``
and ``tofino.bin``) and ``bfrt.json``.  The P4Runtime ``p4_device_config``
depends on the server:

* ``pi`` — bf_switchd's own server (``bf_switchd --p4rt-server ADDR``) and
  Stratum's older ``stratum_bf``: the PI packing of p4runtime-shell's
  ``config_builders/tofino.py``, three little-endian ``int32`` length-prefixed
  blobs: program name, ``tofino.bin``, ``context.json``;
* ``bfrt`` — ``stratum_bfrt``: a serialized ``stratum.hal.barefoot.BfPipelineConfig``
  (``p4_name``, ``bfruntime_info`` = bfrt.json, one ``Profile`` per pipeline with
  ``profile_name``, ``context``, ``binary``, ``pipe_scope``), as Stratum's
  ``bf_pipeline_builder`` makes.

>>> pack_pi_device_config("myprog", b"\\xab", b"{}")
b'\\x06\\x00\\x00\\x00myprog\\x01\\x00\\x00\\x00\\xab\\x02\\x00\\x00\\x00{}'
>>> TofinoTarget.attach("tofino://10.0.0.2:9559?device_id=1", check=False).grpc_address
'10.0.0.2:9559'
"""

from __future__ import annotations

import json
import os
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ...errors import TargetError
from .stages import TOFINO1_STAGES, PipeletStages, SlotStages, bfa_files, bfa_tables, check_stages, ingress_stages, over_the_chip, pipelet_stages, slot_stages, stage_report, stage_table
from ..process.tools import find_executable, wait_for_port
from ..url_query import INTEGER, VETH, choice, read_query

__all__ = [
    "BF_P4C", "INSTALL_SDE", "CONFIG_FORMATS", "DEFAULT_GRPC_PORT", "find_sde_install",
    "find_bf_p4c", "missing_tools", "TnaPipeline", "TnaBuild", "compile_tna",
    "pack_pi_device_config", "unpack_pi_device_config", "pack_bf_pipeline_config",
    "parse_tofino_url", "TofinoTarget", "tofino_model_command", "bf_switchd_command", "sde_env",
    "bfa_tables", "bfa_files", "SlotStages", "PipeletStages", "pipelet_stages", "slot_stages",
    "stage_table", "stage_report", "ingress_stages", "over_the_chip", "check_stages",
    "TOFINO1_STAGES",
]

BF_P4C = "bf-p4c"
INSTALL_SDE = ("install Intel's Tofino SDE (p4studio) and set SDE / SDE_INSTALL, or put "
               "$SDE_INSTALL/bin on PATH (SFCLAB_BF_P4C may name bf-p4c itself)")
#: p4_device_config formats: bf_switchd's PI server / stratum_bf, and stratum_bfrt.
CONFIG_FORMATS = ("pi", "bfrt")
#: IANA's P4Runtime port (Stratum listens on 9339 by default: give it in the URL).
DEFAULT_GRPC_PORT = 9559
_CHIP_TYPES = {"tofino": 2, "tofino2": 5}


def find_sde_install() -> Path | None:
    """``$SDE_INSTALL``, else ``$SDE/install``, when the directory exists."""
    for cand in (os.environ.get("SDE_INSTALL"),
                 os.environ.get("SDE") and os.path.join(os.environ["SDE"], "install")):
        if cand and os.path.isdir(cand):
            return Path(cand)
    return None


def _sde_bins() -> list[Path]:
    sde = find_sde_install()
    return [sde / "bin"] if sde else []


def find_bf_p4c() -> str | None:
    """bf-p4c: ``SFCLAB_BF_P4C``, else the SDE's ``bin``, else ``PATH``."""
    return find_executable(BF_P4C, env="SFCLAB_BF_P4C", dirs=_sde_bins())


def missing_tools(*names: str) -> list[str]:
    """Which SDE executables (default: bf-p4c, tofino-model, bf_switchd) are missing."""
    out = []
    for name in names or (BF_P4C, "tofino-model", "bf_switchd"):
        found = find_bf_p4c() if name == BF_P4C else find_executable(name, dirs=_sde_bins())
        if found is None:
            out.append(name)
    return out


# -- packing the device config -------------------------------------------------------------------

def pack_pi_device_config(name: str, tofino_bin: bytes, context_json: bytes) -> bytes:
    """The PI packing: ``<i32 len><name><i32 len><tofino.bin><i32 len><context.json>``."""
    out = bytearray()
    for blob in (name.encode(), bytes(tofino_bin), bytes(context_json)):
        out += struct.pack("<i", len(blob)) + blob
    return bytes(out)


def unpack_pi_device_config(data: bytes) -> tuple[str, bytes, bytes]:
    """Inverse of :func:`pack_pi_device_config`; :class:`TargetError` if malformed.

    >>> unpack_pi_device_config(pack_pi_device_config("p", b"bin", b"{}"))
    ('p', b'bin', b'{}')
    """
    parts, off = [], 0
    for what in ("program name", "tofino.bin", "context.json"):
        if off + 4 > len(data):
            raise TargetError(f"Tofino device config ends before the length of its {what}")
        (n,) = struct.unpack_from("<i", data, off)
        off += 4
        if n < 0 or off + n > len(data):
            raise TargetError(f"Tofino device config: {what} length {n} runs past its end")
        parts.append(bytes(data[off:off + n]))
        off += n
    if off != len(data):
        raise TargetError(f"Tofino device config has {len(data) - off} trailing bytes")
    return parts[0].decode(), parts[1], parts[2]


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _ld(field_no: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field (omitted when empty, as proto3 does)."""
    if not payload:
        return b""
    return _varint(field_no << 3 | 2) + _varint(len(payload)) + payload


def pack_bf_pipeline_config(name: str, bfrt_json: bytes,
                            profiles: Iterable[tuple[str, bytes, bytes, Sequence[int]]]) -> bytes:
    """A serialized ``BfPipelineConfig`` (Stratum's ``bf.proto``): *profiles* are
    ``(profile_name, context.json, tofino.bin, pipe_scope)``.

    >>> pack_bf_pipeline_config("p", b"{}", [("pipe", b"{}", b"B", [0, 1])]).hex()
    '0a017012027b7d1a110a047069706512027b7d1a014222020001'
    """
    body = _ld(1, name.encode()) + _ld(2, bytes(bfrt_json))
    for prof_name, context, binary, scope in profiles:
        packed = b"".join(_varint(int(s)) for s in scope)
        body += _ld(3, _ld(1, prof_name.encode()) + _ld(2, bytes(context))
                    + _ld(3, bytes(binary)) + _ld(4, packed))
    return body


# -- bf-p4c's output -------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class TnaPipeline:
    """One P4 pipeline (``Pipeline(...) pipe``) of a bf-p4c build."""

    name: str
    context_path: Path
    binary_path: Path
    scope: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class TnaBuild:
    """bf-p4c's output: the ``.conf``, ``bfrt.json`` and per-pipeline files."""

    program_name: str
    conf_path: Path
    bfrt_path: Path | None
    pipelines: tuple[TnaPipeline, ...]
    p4info_path: Path | None = None

    @classmethod
    def from_conf(cls, conf: str | os.PathLike, p4info: str | os.PathLike | None = None
                  ) -> TnaBuild:
        """Read bf-p4c's ``<program>.conf`` (paths in it may be absolute, or
        relative to the conf's directory)."""
        path = Path(conf)
        try:
            cfg = json.loads(path.read_text())
            prog = cfg["p4_devices"][0]["p4_programs"][0]
            pipes = []
            for p in prog["p4_pipelines"]:
                pname = p["p4_pipeline_name"]
                pipes.append(TnaPipeline(
                    pname, _resolve(path.parent, p["context"], pname),
                    _resolve(path.parent, p["config"], pname),
                    tuple(int(s) for s in p.get("pipe_scope", ()))))
            bfrt = prog.get("bfrt-config")
            return cls(prog["program-name"], path,
                       _resolve(path.parent, bfrt, "") if bfrt else None, tuple(pipes),
                       Path(p4info) if p4info else None)
        except OSError as e:
            raise TargetError(f"cannot read bf-p4c's config {path}: {e.strerror}") from None
        except (ValueError, KeyError, IndexError, TypeError) as e:
            raise TargetError(f"{path} is not a bf-p4c program config ({type(e).__name__}: {e})",
                              hint="give the <program>.conf that bf-p4c wrote") from None

    @classmethod
    def from_dir(cls, out_dir: str | os.PathLike, p4info: str | os.PathLike | None = None
                 ) -> TnaBuild:
        """The build in bf-p4c's ``-o`` directory (its one ``*.conf``)."""
        confs = sorted(Path(out_dir).glob("*.conf"))
        if len(confs) != 1:
            raise TargetError(f"expected one bf-p4c .conf in {out_dir}, found "
                              f"{len(confs) or 'none'}")
        return cls.from_conf(confs[0], p4info)

    def _read(self, path: Path | None, what: str) -> bytes:
        if path is None:
            raise TargetError(f"the build of {self.program_name} has no {what}")
        try:
            return path.read_bytes()
        except OSError as e:
            raise TargetError(f"cannot read {what} {path}: {e.strerror}") from None

    def pi_device_config(self) -> bytes:
        """The PI packing (bf_switchd's P4Runtime server, stratum_bf): one pipeline."""
        if len(self.pipelines) != 1:
            raise TargetError(f"{self.program_name} has {len(self.pipelines)} pipelines; the PI "
                              "device config holds one", hint="use format 'bfrt' (stratum_bfrt)")
        p = self.pipelines[0]
        return pack_pi_device_config(self.program_name, self._read(p.binary_path, "tofino.bin"),
                                     self._read(p.context_path, "context.json"))

    def bf_pipeline_config(self) -> bytes:
        """A ``BfPipelineConfig`` (stratum_bfrt)."""
        return pack_bf_pipeline_config(
            self.program_name, self._read(self.bfrt_path, "bfrt.json"),
            [(p.name, self._read(p.context_path, "context.json"),
              self._read(p.binary_path, "tofino.bin"), p.scope) for p in self.pipelines])

    def device_config(self, fmt: str = "pi") -> bytes:
        if fmt == "pi":
            return self.pi_device_config()
        if fmt == "bfrt":
            return self.bf_pipeline_config()
        raise TargetError(f"unknown Tofino device config format {fmt!r}",
                          hint="'pi' (bf_switchd --p4rt-server, stratum_bf) or 'bfrt' "
                               "(stratum_bfrt)")


def _resolve(base: Path, given: str, pipeline: str) -> Path:
    p = Path(given)
    if p.is_absolute() and p.exists():
        return p
    for cand in (base / given, base / pipeline / p.name):
        if cand.exists():
            return cand
    return p if p.is_absolute() else base / given


def compile_tna(source: Any, out_dir: str | os.PathLike, *, timeout: float = 1800) -> TnaBuild:
    """Compile with bf-p4c into *out_dir* (``tofino/``, ``p4info.p4c.txt``).

    *source* is a :class:`sfclab.codegen.Generated` for TNA (written first) or a
    P4 file's path.  :class:`TargetError` if bf-p4c is missing or fails."""
    from ...codegen.p4c import check_arch, compile_program

    check_arch(source, "tna", "Tofino")
    out = Path(out_dir)
    (out / "tofino").mkdir(parents=True, exist_ok=True)
    exe = find_bf_p4c()             # the SDE's bf-p4c (SDE_INSTALL), not only PATH's
    if exe is None:
        raise TargetError(f"{BF_P4C} is not installed (not on PATH, no SDE_INSTALL/SDE, and "
                          "SFCLAB_BF_P4C is not set)", hint=INSTALL_SDE)
    compile_program(source, "tna", out, what="Tofino", timeout=timeout, exe=exe)
    return TnaBuild.from_dir(out / "tofino", out / "p4info.p4c.txt")


# -- the stages the compiler used: tofino_stages.py ------------------------------------------------

# -- the target ------------------------------------------------------------------------------------

#: The parameters of a Tofino URL (see :func:`parse_tofino_url`).
_URL_PARAMS = {"device_id": INTEGER,
               "format": choice(*CONFIG_FORMATS,
                                hint="pi (bf_switchd --p4rt-server, stratum_bf) or bfrt "
                                     "(stratum_bfrt)"),
               "veth": VETH}


def parse_tofino_url(url: str) -> dict[str, Any]:
    """``tofino://HOST:PORT?device_id=N[&format=pi|bfrt][&veth=1@veth0,…]`` (``veth``:
    the switch's ends of the veth pairs its ports are on, as for ``tofino-model``).

    >>> parse_tofino_url("tofino://switch1:9339?device_id=1&format=bfrt")
    {'host': 'switch1', 'port': 9339, 'device_id': 1, 'format': 'bfrt', 'veth': None}
    """
    parts = urlsplit(url)
    if parts.scheme != "tofino":
        raise TargetError(f"not a Tofino URL: {url!r}",
                          hint="tofino://HOST:PORT?device_id=0[&format=pi|bfrt]")
    try:
        port = parts.port or DEFAULT_GRPC_PORT
    except ValueError:
        raise TargetError(f"bad port in {url!r}") from None
    out: dict[str, Any] = {"host": parts.hostname or "127.0.0.1", "port": port,
                           "device_id": 0, "format": "pi", "veth": None}
    out |= read_query(url, _URL_PARAMS)
    return out


@dataclass(eq=False)
class TofinoTarget:
    """A Tofino's P4Runtime server (bf_switchd or Stratum) and what to push to it."""

    host: str
    port: int
    device_id: int = 0
    build: TnaBuild | None = None
    #: ``pi`` or ``bfrt``: how :meth:`device_config` packs the build.
    config_format: str = "pi"

    @property
    def grpc_address(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"

    @property
    def url(self) -> str:
        return (f"tofino://{self.grpc_address}?device_id={self.device_id}"
                f"&format={self.config_format}")

    @property
    def p4info_path(self) -> Path | None:
        return self.build.p4info_path if self.build else None

    def device_config(self) -> bytes:
        """The ``p4_device_config`` for ``SetForwardingPipelineConfig``."""
        if self.build is None:
            raise TargetError(f"no bf-p4c build for the Tofino at {self.url}",
                              hint="compile with compile_tna(), or pass build=TnaBuild.from_dir(…)")
        return self.build.device_config(self.config_format)

    @classmethod
    def attach(cls, url: str, *, build: TnaBuild | None = None, check: bool = True,
               timeout: float = 2.0) -> TofinoTarget:
        """The server at ``tofino://HOST:PORT?device_id=N&format=pi|bfrt``; with
        *check*, :class:`TargetError` unless its port accepts connections."""
        u = parse_tofino_url(url)
        if check:
            wait_for_port(u["host"], u["port"], timeout=timeout,
                          what=f"the Tofino P4Runtime server at {url}")
        return cls(u["host"], u["port"], u["device_id"], build, u["format"])

    def __repr__(self) -> str:
        return f"<TofinoTarget {self.url}>"


# -- SDE command lines (for tofino-model packet tests) ---------------------------------------------

def sde_env(sde_install: str | os.PathLike, base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment the SDE's programs need (``PATH``, ``LD_LIBRARY_PATH``, ``SDE_INSTALL``)."""
    env = dict(os.environ if base is None else base)
    sde = str(Path(sde_install))
    env["SDE_INSTALL"] = sde
    env["PATH"] = os.pathsep.join([f"{sde}/bin", env.get("PATH", "")]).rstrip(os.pathsep)
    env["LD_LIBRARY_PATH"] = os.pathsep.join(
        [f"{sde}/lib", "/usr/local/lib", env.get("LD_LIBRARY_PATH", "")]).rstrip(os.pathsep)
    return env


def tofino_model_command(conf: str | os.PathLike, *, sde_install: str | os.PathLike,
                         ports_json: str | os.PathLike | None = None, chip: str = "tofino",
                         log_dir: str | os.PathLike | None = None, devices: int = 1,
                         exe: str = "tofino-model") -> list[str]:
    """``tofino-model``'s command line, as the SDE's ``run_tofino_model.sh`` builds it
    (root and the SDE's ``veth_setup.sh`` veths are needed to pass packets).

    >>> tofino_model_command("/o/program.conf", sde_install="/sde/install")
    ... # doctest: +NORMALIZE_WHITESPACE
    ['tofino-model', '-d', '1', '--p4-target-config', '/o/program.conf',
     '--install-dir', '/sde/install', '--chip-type', '2']
    """
    if chip not in _CHIP_TYPES:
        raise TargetError(f"unknown Tofino chip {chip!r}", hint="tofino or tofino2")
    cmd = [exe, "-d", str(devices)]
    if ports_json is not None:
        cmd += ["-f", str(ports_json)]
    cmd += ["--p4-target-config", str(conf), "--install-dir", str(sde_install),
            "--chip-type", str(_CHIP_TYPES[chip])]
    if log_dir is not None:
        cmd += ["--log-dir", str(log_dir)]
    return cmd


def bf_switchd_command(conf: str | os.PathLike, *, sde_install: str | os.PathLike,
                       p4rt_addr: str = f"127.0.0.1:{DEFAULT_GRPC_PORT}", skip_p4: bool = True,
                       status_port: int | None = None, background: bool = True,
                       exe: str = "bf_switchd") -> list[str]:
    """``bf_switchd`` with its P4Runtime server on *p4rt_addr*; ``--skip-p4``: the
    program comes over P4Runtime (format ``pi``).

    >>> bf_switchd_command("/o/program.conf", sde_install="/sde/install")
    ... # doctest: +NORMALIZE_WHITESPACE
    ['bf_switchd', '--install-dir', '/sde/install', '--conf-file', '/o/program.conf',
     '--skip-p4', '--p4rt-server', '127.0.0.1:9559', '--background']
    """
    cmd = [exe, "--install-dir", str(sde_install), "--conf-file", str(conf)]
    if skip_p4:
        cmd.append("--skip-p4")
    cmd += ["--p4rt-server", p4rt_addr]
    if status_port is not None:
        cmd += ["--status-port", str(status_port)]
    if background:
        cmd.append("--background")
    return cmd
