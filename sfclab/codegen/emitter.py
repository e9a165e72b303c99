"""The emitter base: one composed program, one subclass per architecture.

An emitter turns a :class:`~sfclab.codegen.compose.Composition` into a complete
P4 program for its architecture.  What differs between architectures is data:

* capability flags (``RECIRCULATES_DEPARSED``, ``METER_BYTES_AND_PACKETS`` …);
* ``TRANSFORMS``, a dispatch table from a use of sfclab's portable state API
  (``"SfcRegister"`` for a declaration, ``"SfcRegister.read"`` for a call) to the
  method that lowers it to the architecture's externs;
* ``ENUMS``, the architecture's names for the API's enum members;
* ``DEFINES``, the macros the architecture file reads, written before its
  ``#include`` (``V1MODEL_VERSION`` selects v1model's index-typed externs).

Digests are lowered the same way on every architecture up to the last step: an
NF that packs digests gets a third parameter ``dg``, its slot's buffer in the
metadata (``meta.<slot>_dg``, of type ``<nf>_digest_buf_t``), and ``d.pack(data)``
first copies *data* into ``dg.d``.  What is reported is then the data at the call,
whatever later NFs of the pass (or later passes) do to the fields it came from;
the emitter then digests ``dg.d`` (v1model) or flags it for the deparser (TNA).

Anything an architecture cannot express goes through :meth:`P4Emitter.unsupported`,
which raises :class:`~sfclab.errors.CompileError` naming the NF, the construct
and the line.  Every program an emitter writes is parsed back and checked
against its architecture file's declarations (:func:`sfclab.p4.check.check_program`)
before anyone sees it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar, NoReturn

from ..errors import CompileError, P4Error
from ..p4 import ast as A
from ..p4 import parse_p4, to_p4
from ..p4.arch import DEFINES as ARCH_DEFINES
from ..p4.catalog import API_EXTERNS, NFDefinition, nf_types
from ..p4.check import check_program
from ..p4.parser import include_types, library_dir, parse_p4_file
from .compose import SAVED_WIDTH, Composition, Slot, saved_field
from .locate import locate
from .rewrite import REMOVE, rewrite

__all__ = ["P4Emitter", "EmittedProgram", "Use"]


@dataclass(frozen=True, slots=True)
class Use:
    """One use of the state API inside an NF: ``lhs = inst.method(args);`` or
    ``inst.method(args);`` (``lhs`` None), or the declaration (``method`` "")."""

    nf: str
    inst: A.Instance
    method: str = ""
    call: A.Call | None = None
    lhs: A.Node | None = None
    stmt: A.Node | None = None

    @property
    def extern(self) -> str:
        return self.inst.type.name  # type: ignore[union-attr]

    def type_arg(self, i: int) -> A.Node:
        return self.inst.type.args[i]  # type: ignore[union-attr]


@dataclass(frozen=True, slots=True)
class EmittedProgram:
    """The program an emitter wrote: text, its AST and what the emitter did."""

    arch: str
    text: str
    notes: tuple[str, ...] = ()
    program: A.Program | None = field(default=None, compare=False)


class P4Emitter:
    """Base of the per-architecture emitters."""

    arch: ClassVar[str] = ""
    includes: ClassVar[tuple[str, ...]] = ("core.p4",)
    #: The pass ends by sending the deparsed packet round again (rewrites survive).
    RECIRCULATES_DEPARSED: ClassVar[bool] = True
    #: A meter may count packets and bytes at once.
    METER_BYTES_AND_PACKETS: ClassVar[bool] = False
    #: Use of the state API -> name of the method that lowers it.
    TRANSFORMS: ClassVar[dict[str, str]] = {}
    #: (enum, member) of sfc_api.p4 -> the architecture's expression.
    ENUMS: ClassVar[dict[tuple[str, str], str]] = {}
    #: Macros the architecture file reads (sfclab.p4.arch), defined before its #include.
    DEFINES: ClassVar[dict[str, int]] = {}
    #: The CPU port when the options do not name one.
    DEFAULT_CPU_PORT: ClassVar[int] = 255
    #: What the program's first comment calls the architecture and its target.
    LABEL: ClassVar[str] = ""
    #: A digest buffer holds a ``<d>_valid`` flag next to each digest's data.
    DIGEST_FLAGS: ClassVar[bool] = False

    def __init__(self, comp: Composition) -> None:
        self.comp = comp
        self.notes: list[str] = []
        o = comp.options
        self.cpu_port = o.cpu_port if o.cpu_port is not None else self.DEFAULT_CPU_PORT
        self._digests: dict[str, list[A.Instance]] = {}   # NF control -> its digest instances

    def preamble(self) -> list[str]:
        """The program's first lines: what it is, its slots, its includes."""
        lines = [f"/* sfclab: the composed service-function-chain program for {self.LABEL}.",
                 f" * slots: {' | '.join(s.instance for s in self.comp.slots) or 'none'}",
                 " * Chains are table entries (entries.json); generated: edit the chains, not this",
                 " * file. */"]
        for inc in self.includes:
            lines += [f"#define {k} {v}" for k, v in self.DEFINES.items() if ARCH_DEFINES[k] == inc]
            lines.append(f"#include <{inc}>")
        return [*lines, ""]

    def keep_use(self, use: Use):
        """A use the architecture's extern has in the same form."""
        return None

    # -- the one way to refuse ---------------------------------------------------------
    def unsupported(self, what: str, node: A.Node | None = None, *, nf: str = "",
                    hint: str = "") -> NoReturn:
        pos = getattr(node, "pos", None)
        where = f" (NF {nf!r}, {pos})" if nf and pos else f" (NF {nf!r})" if nf else ""
        raise CompileError(f"{self.arch} cannot express {what}{where}",
                           hint=hint or "see p4/README.md for what each architecture supports")

    # -- shared pieces -------------------------------------------------------------------
    def header_decls(self) -> list[A.Node]:
        """The library's header file: constants, types, headers, headers_t, sfc_meta_t;
        the SFC header ends with the composition's saved metadata fields, if any
        (``bit<32> saved_md0;`` …: :mod:`.compose`)."""
        prog = parse_p4_file(library_dir() / "include" / "sfc_headers.p4")
        saved = tuple(A.Field(A.BitType(SAVED_WIDTH), saved_field(k))
                      for k in range(self.comp.saved))
        out = [d for d in prog.decls if not isinstance(d, A.Include)]
        if not saved:
            return out
        for i, d in enumerate(out):
            if isinstance(d, A.HeaderDecl) and d.name == "sfc_t":
                out[i] = A.HeaderDecl(d.name, d.fields + saved, d.annotations, d.pos)
                size = sum(f.type.width for f in out[i].fields) // 8    # type: ignore[attr-defined]
                self.notes.append(f"SFC header: {size} bytes, with {len(saved)} saved metadata "
                                  f"field(s) (saved_md0 …): the value of an NF a later branch "
                                  f"tests")
        return out

    def api_consts(self) -> list[A.Node]:
        """The state API's constants (meter colours)."""
        prog = parse_p4_file(library_dir() / "include" / "sfc_api.p4")
        return [d for d in prog.decls if isinstance(d, A.ConstDecl)]

    def nf_decls(self) -> list[A.Node]:
        """Every NF's top-level declarations (its control lowered), without clashes."""
        out: list[A.Node] = []
        owner: dict[str, str] = {}
        for d in self.comp.nfs:
            for decl in d.program.decls:
                if isinstance(decl, A.Include):
                    continue
                name = getattr(decl, "name", "")
                if name in owner and owner[name] != d.name:
                    raise CompileError(f"NFs {owner[name]!r} and {d.name!r} both declare "
                                       f"{name!r}", hint="rename one of them (prefix it with "
                                                         "the NF's name)")
                owner[name] = d.name
                if isinstance(decl, A.ControlDecl):
                    decl = self.lower_control(decl, d)
                    out += self._digest_buffer(decl.name)
                out.append(decl)
        return out

    # -- lowering the state API ----------------------------------------------------------
    def lower_control(self, control: A.ControlDecl, nf: NFDefinition) -> A.ControlDecl:
        """*control* with every use of the state API lowered through ``TRANSFORMS``."""
        insts = {i.name: i for i in control.instances() if isinstance(i.type, A.NamedType)
                 and i.type.name in API_EXTERNS}

        def api_call(call: A.Node) -> tuple[A.Instance, str] | None:
            if (isinstance(call, A.Call) and isinstance(call.func, A.Member)
                    and isinstance(call.func.expr, A.Name) and call.func.expr.name in insts):
                return insts[call.func.expr.name], call.func.name
            return None

        self._digests[control.name] = [i for i in insts.values()
                                       if i.type.name == "SfcDigest"]  # type: ignore[union-attr]
        self.prepare(control, nf, insts)

        def fn(n: A.Node):
            if isinstance(n, A.Instance) and n.name in insts:
                return self._dispatch(Use(nf.name, n))
            if isinstance(n, A.Assign) and (hit := api_call(n.rhs)):
                return self._dispatch(Use(nf.name, hit[0], hit[1], n.rhs, n.lhs, n))
            if isinstance(n, A.CallStmt) and (hit := api_call(n.call)):
                return self._dispatch(Use(nf.name, hit[0], hit[1], n.call, None, n))
            if (isinstance(n, A.Member) and isinstance(n.expr, A.TypeName)
                    and (n.expr.name, n.name) in self.ENUMS):
                return self.expr(self.ENUMS[n.expr.name, n.name])
            return None

        out = rewrite(control, fn)
        if self._digests[control.name]:
            out = A.ControlDecl(out.name, out.params + (
                A.Param("inout", A.NamedType(f"{control.name}_digest_buf_t"), "dg"),),
                out.locals, out.apply, out.type_params, out.annotations, out.pos)
        return out

    def prepare(self, control: A.ControlDecl, nf: NFDefinition,
                insts: dict[str, A.Instance]) -> None:
        """Called before an NF's control is lowered (an architecture that must see
        every use of an instance before declaring it looks here)."""

    def _dispatch(self, use: Use):
        key = f"{use.extern}.{use.method}" if use.method else use.extern
        name = self.TRANSFORMS.get(key)
        if name is None:
            self.unsupported(f"{key}", use.stmt or use.inst, nf=use.nf)
        method: Callable[[Use], object] = getattr(self, name)
        return method(use)

    # -- digests: the data is copied into the slot's buffer at the call ---------------------
    def digest_decl(self, use: Use):
        """``SfcDigest<T>() d;`` leaves no instance in the NF (its buffer holds the data)."""
        return self.remove()

    def digest_copy(self, use: Use) -> A.Assign:
        """``d.pack(data);`` -> ``dg.d = data;``, the copy every architecture starts with."""
        return A.Assign(A.Member(A.Name("dg"), use.inst.name), use.call.args[0], use.stmt.pos)

    def _digest_buffer(self, control: str) -> list[A.Node]:
        """The struct an NF control's digests are copied into (none without digests)."""
        fields: list[A.Field] = []
        for inst in self._digests.get(control, []):
            fields.append(A.Field(inst.type.args[0], inst.name))  # type: ignore[union-attr]
            if self.DIGEST_FLAGS:
                fields.append(A.Field(A.BitType(1), f"{inst.name}_valid"))
        return [A.StructDecl(f"{control}_digest_buf_t", tuple(fields))] if fields else []

    def digest_slots(self) -> list[tuple[int, Slot, A.Instance]]:
        """(number from 1, slot, digest instance) for every digest of every slot; call
        after :meth:`nf_decls`."""
        out = []
        for s in self.comp.slots:
            for inst in self._digests.get(s.nf, []):
                out.append((len(out) + 1, s, inst))
        return out

    def digest_meta_fields(self) -> str:
        """``meta_t``'s fields for the slots' digest buffers (one line each)."""
        return "".join(f"    {s.nf}_digest_buf_t {s.instance}_dg;\n"
                       for s in self.comp.slots if self._digests.get(s.nf))

    def digest_args(self) -> dict[int, str]:
        """Slot index -> the buffer its NF gets (:func:`~.compose.core_apply`'s extra args)."""
        return {s.index: f"meta.{s.instance}_dg" for s in self.comp.slots
                if self._digests.get(s.nf)}

    # -- helpers for the subclasses ------------------------------------------------------
    @staticmethod
    def expr(text: str) -> A.Node:
        """A P4 expression from text."""
        prog = parse_p4(f"const bit<1> x = {text};", types=_known_types())
        return prog.decls[0].value

    @staticmethod
    def stmt(text: str) -> A.Node:
        """A P4 statement from text (types of the architecture and the NFs known)."""
        prog = parse_p4(f"control c() {{ apply {{ {text} }} }}", types=_known_types())
        return prog.controls()[0].apply.stmts[0]

    @staticmethod
    def keep() -> object:
        return None

    @staticmethod
    def remove() -> object:
        return REMOVE

    def program(self) -> EmittedProgram:  # pragma: no cover - subclasses
        raise NotImplementedError

    def _finish(self, text: str) -> EmittedProgram:
        """Parse what was written back (it must: the front end reads every program it
        emits) and package it."""
        try:
            prog = parse_p4(text, source=f"<{self.arch} program>")
        except Exception as e:   # a bug in an emitter, not in the user's input
            raise CompileError(f"the {self.arch} program sfclab wrote does not parse: {e}",
                               hint="report this as a bug in sfclab") from None
        try:
            check_program(prog, text=text)
        except P4Error as e:   # a bug in an emitter too: say where, as p4c would
            raise CompileError(
                f"the {self.arch} program sfclab wrote would not compile "
                f"(line {e.line}, in {locate(prog, e.line)}): {e.message}",
                hint=(e.hint + "; " if e.hint else "") + "report this as a bug in sfclab"
            ) from None
        seen: set[str] = set()
        for d in prog.decls:
            name = getattr(d, "name", None)
            if name is not None and not isinstance(d, A.Instance):
                if name in seen:
                    raise CompileError(f"the {self.arch} program declares {name!r} twice",
                                       hint="two NFs (or an NF and sfclab) use the same name: "
                                            "rename one")
                seen.add(name)
        return EmittedProgram(self.arch, text, tuple(self.notes), prog)

    @staticmethod
    def print_decls(decls: list[A.Node]) -> str:
        return to_p4(A.Program(tuple(decls)))


def _known_types() -> frozenset[str]:
    return nf_types() | include_types("v1model.p4", "tna.p4")
