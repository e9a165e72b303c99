"""Running the real P4 compilers on a composed program, when they are installed.

sfclab never needs p4c to work (the embedded model runs its own AST), but when
``p4c-bm2-ss`` (v1model) or ``bf-p4c`` (TNA, from an SDE) is on ``PATH`` — or
named by ``SFCLAB_P4C`` / ``SFCLAB_BF_P4C`` — ``sfclab compile --p4c`` runs it,
and its error messages are mapped back to the NF or the part of the composed
program (``slot3_firewall``, ``rewinder``) that a line belongs to.

>>> from sfclab.p4 import parse_p4
>>> prog = parse_p4("header h_t { bit<8> a; }\\ncontrol firewall(inout h_t h) {\\n  apply { }\\n}")
>>> locate(prog, 3)
"control 'firewall'"
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..errors import TargetError
from ..p4 import ast as A
from .locate import locate

__all__ = ["COMPILERS", "P4C_BAREFOOT", "find_compiler", "tna_include", "P4cResult", "run_p4c", "compile_program", "check_arch",
           "locate", "compiler_p4info"]

#: Architecture -> (environment variable, executable name, what to install).
COMPILERS = {
    "v1model": ("SFCLAB_P4C", "p4c-bm2-ss",
                "install p4c (https://github.com/p4lang/p4c: Ubuntu packages 'p4lang-p4c')"),
    "tna": ("SFCLAB_BF_P4C", "bf-p4c",
            "install Intel's Tofino SDE and put $SDE_INSTALL/bin on PATH"),
}

_ERR = re.compile(r"^(?P<file>[^:()\s]+)\((?P<line>\d+)\):?\s*(?P<kind>\[?\w*\]?\s*\w*):?\s*(?P<msg>.*)$")


#: p4c's open Tofino back end, run without the SDE's ``bf-p4c`` driver: it needs
#: ``tna.p4``'s directory (``-I``) and ``__TARGET_TOFINO__`` defined.
P4C_BAREFOOT = "p4c-barefoot"


def find_compiler(arch: str) -> str | None:
    """The compiler for *arch*: its environment variable, else ``PATH`` (for TNA
    ``bf-p4c``, else ``p4c-barefoot``); None if absent."""
    env, exe, _ = COMPILERS[arch]
    found = os.environ.get(env) or shutil.which(exe)
    if found is None and arch == "tna":
        found = shutil.which(P4C_BAREFOOT)
    return found


def tna_include(exe: str) -> Path | None:
    """The directory holding ``tna.p4`` for *exe* (``p4c-barefoot``):
    ``SFCLAB_TNA_INCLUDE``, else ``tna-include`` or ``share/p4c/p4include`` next to
    the executable's ``bin``; None when there is none."""
    given = os.environ.get("SFCLAB_TNA_INCLUDE")
    if given:
        return Path(given)
    root = Path(exe).resolve().parent.parent
    for cand in (root / "tna-include", root / "share" / "p4c" / "p4include"):
        if (cand / "tna.p4").is_file():
            return cand
    return None


@dataclass(frozen=True, slots=True)
class P4cResult:
    """What the compiler said: exit status, output, and its messages with their place."""

    command: tuple[str, ...]
    returncode: int
    output: str
    messages: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def run_p4c(program_file: Path, arch: str, out_dir: Path, prog: A.Program | None = None,
            *, timeout: float = 600, exe: str | None = None) -> P4cResult:
    """Compile *program_file* with the architecture's compiler (*exe*, else the one
    :func:`find_compiler` finds) into *out_dir* (BMv2 JSON and P4Info for v1model;
    the SDE's layout for TNA)."""
    exe = exe or find_compiler(arch)
    if exe is None:
        env, name, how = COMPILERS[arch]
        raise TargetError(f"{name} is not installed (not on PATH, and {env} is not set)",
                          hint=how)
    if arch == "v1model":
        cmd = [exe, "--arch", "v1model", "--std", "p4-16", "-o", str(out_dir / "program.json"),
               "--p4runtime-files", str(out_dir / "p4info.p4c.txt"), str(program_file)]
    else:
        (out_dir / "tofino").mkdir(parents=True, exist_ok=True)
        cmd = [exe, "--arch", "tna", "--target", "tofino", "--std", "p4-16", "-o",
               str(out_dir / "tofino"), "--bf-rt-schema", str(out_dir / "tofino" / "bfrt.json"),
               "--p4runtime-files", str(out_dir / "p4info.p4c.txt"), str(program_file)]
        if Path(exe).name.startswith(P4C_BAREFOOT):
            inc = tna_include(exe)
            cmd[1:1] = [*(("-I", str(inc)) if inc else ()), "-D__TARGET_TOFINO__=1"]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise TargetError(f"{Path(exe).name} did not finish in {timeout:.0f} s") from None
    except OSError as e:
        raise TargetError(f"cannot run {exe}: {e.strerror}") from None
    output = done.stdout + done.stderr
    messages = []
    for raw in output.splitlines():
        m = _ERR.match(raw.strip())
        if m and prog is not None:
            messages.append(f"{raw.strip()}\n    (in {locate(prog, int(m['line']))})")
        elif m:
            messages.append(raw.strip())
    return P4cResult(tuple(cmd), done.returncode, output, tuple(messages))


def check_arch(source, arch: str, what: str) -> None:
    """:class:`TargetError` when *source* is a generated program for another architecture."""
    if getattr(source, "arch", arch) != arch and hasattr(source, "program"):
        label = {"tna": "TNA"}.get(arch, arch)
        raise TargetError(f"{what} runs {label} programs; this one is for {source.arch}",
                          hint=f"generate with arch={arch!r}")


def compiler_p4info(path):
    """The P4Info a compiler wrote (``--p4runtime-files``), or None if it wrote none: the
    one to push, since its ids are the ones the switch uses."""
    from .p4info import p4info_from_text

    return p4info_from_text(path.read_text()) if path is not None and path.is_file() else None


def compile_program(source, arch: str, out_dir: Path, *, what: str, timeout: float = 600,
                    exe: str | None = None) -> P4cResult:
    """Compile *source* — a generated program for *arch* (its outputs are written to
    *out_dir* first, so the compiler's messages name the NF each line belongs to) or a
    P4 file's path — and raise :class:`TargetError` with the compiler's messages if
    it fails.  *what* names the target in errors (``BMv2``, ``Tofino``)."""
    check_arch(source, arch, what)
    out_dir.mkdir(parents=True, exist_ok=True)
    prog = None
    if hasattr(source, "program") and hasattr(source, "arch"):
        from .generated import write_outputs

        write_outputs(source, out_dir)
        program_file, prog = out_dir / "program.p4", source.program.program
    else:
        program_file = Path(source)
    res = run_p4c(program_file, arch, out_dir, prog, timeout=timeout, exe=exe)
    if not res.ok:
        name = Path(res.command[0]).name
        detail = "\n".join(res.messages) or res.output.strip()[-4000:]
        raise TargetError(f"{name} failed on {program_file} (exit {res.returncode})"
                          + (f":\n{detail}" if detail else ""),
                          hint="command: " + " ".join(res.command))
    return res
