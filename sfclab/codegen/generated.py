"""What the back end hands on (:class:`Generated`): the composition, the emitted program and
its entries, with the emitter of each architecture (:func:`emitter_for`) and the files a
generated program is written as (:func:`write_outputs`). Below :func:`sfclab.codegen.generate`
and the server detour (:mod:`.detour`), which both build it, and :mod:`.p4c`, which writes it."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import CompileError, did_you_mean
from .compose import Composition
from .emitter import EmittedProgram, P4Emitter
from .entries import TableEntry, canonical, groups, p4info_fields
from .journeys import ServerDetour
from .v1model import V1ModelEmitter

__all__ = ["Generated", "EMITTERS", "emitter_for", "write_outputs"]

#: Architecture -> emitter class.
EMITTERS: dict[str, type[P4Emitter]] = {"v1model": V1ModelEmitter}


def emitter_for(arch: str) -> type[P4Emitter]:
    """The emitter class of *arch*; :class:`CompileError` for an unknown one."""
    if arch == "tna" and "tna" not in EMITTERS:
        from .tna import TnaEmitter

        EMITTERS["tna"] = TnaEmitter
    try:
        return EMITTERS[arch]
    except KeyError:
        raise CompileError(f"no code generator for architecture {arch!r}",
                           hint=did_you_mean(arch, ["v1model", "tna"])
                           or "use v1model or tna") from None


@dataclass(frozen=True, slots=True)
class Generated:
    """What the back end produced for one chain set and architecture."""

    composition: Composition
    program: EmittedProgram
    entries: tuple[TableEntry, ...]
    #: Paths that detour through a server: how (:mod:`.detour`); None for a program
    #: that runs every NF on the switch.
    detour: ServerDetour | None = None

    @property
    def arch(self) -> str:
        return self.program.arch

    @property
    def compiled(self):
        """The chain set as compiled (``sfclab.compile``): its chains and service paths.
        The composition's are the switch's own, which differ when paths detour
        through a server (their parts before and after it)."""
        return self.detour.source if self.detour is not None else self.composition.compiled

    def path_name(self, switch_path: str | None) -> str | None:
        """The chain set's service path (``web/0``) that the switch's path
        *switch_path* (a trace's) belongs to."""
        if switch_path is None or self.detour is None:
            return switch_path
        return self.detour.path_name(switch_path)

    def groups(self) -> dict[str, list[TableEntry]]:
        """Entries per chain (``chain:NAME``) and per NF slot (``nf:SLOT``)."""
        return groups(self.entries)

    def plan(self) -> str:
        """The passes' explanation and what the emitter did, as text (``plan.txt``)."""
        lines = [self.compiled.explain(), "", f"code generation ({self.arch}):"]
        lines += [f"  {n}" for n in self.program.notes]
        if self.detour is not None:
            lines.append(f"  {len(self.detour.server_paths())} service path(s) detour through "
                         f"the server behind port {self.detour.port}:")
            lines += [f"    {t}" for t in self.detour.text().splitlines()]
        lines.append(f"  {len(self.entries)} table entries in {len(self.groups())} groups")
        return "\n".join(lines)


def write_outputs(gen: Generated, out_dir) -> list:
    """Write ``program.p4``, ``p4info.txt``, ``entries.json`` and ``plan.txt`` (and
    ``servers.txt`` when paths detour through a server) into *out_dir* (created if
    needed); returns the paths written."""
    import json
    from pathlib import Path

    from .p4info import build_p4info, p4info_text

    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise CompileError(f"cannot create {out}: {e.strerror}") from None
    info = build_p4info(gen.program.program, arch=gen.arch)
    fields = p4info_fields(info)        # entries as a P4Runtime server takes them
    files = {
        "program.p4": gen.program.text,
        "p4info.txt": p4info_text(info),
        "entries.json": json.dumps({g: [canonical(e, fields[e.table]).to_dict() for e in es]
                                    for g, es in gen.groups().items()}, indent=2) + "\n",
        "plan.txt": gen.plan() + "\n",
    }
    if gen.detour is not None:
        files["servers.txt"] = gen.detour.text() + "\n"
    written = []
    for name, text in files.items():
        (out / name).write_text(text)
        written.append(out / name)
    return written
