"""IPython magics: ``%%chain``, ``%%nf`` and ``%sfc``.  ``%load_ext sfclab`` registers them.

The magics are thin: they parse their options and call the shell's current
:class:`~sfclab.lab.Lab` (:func:`current_lab`; created on first use), which
does the work.

``%%chain [--name N] [--arch v1model|tna] [--show VIEWS] [--from-lab | --force]``
    Parses the cell (FlexMesh blocks, one-line chains, P4SC sentences or a P4SFC
    JSON intent), adds its chains to the Lab (a chain with a known name replaces
    it), recompiles, and displays the live view.  Every ``%%chain`` cell
    displays *the same* view widget: one model shown in several outputs, so
    earlier outputs update in place too and nothing is re-created.  ``--show``
    displays a view with just those tabs (one widget per selection, updated the
    same way).  ``--arch`` stays in effect for later cells.  Chains are kept by
    name across cells: to drop one, ``%sfc remove NAME``.  A cell whose chains were
    changed since it ran (in the chain editor, from Python) is refused, saying what
    differs (:mod:`.cell_sync`): ``--from-lab`` replaces the cell's text with the
    Lab's, ``--force`` runs the cell's text anyway; ``%sfc chains`` prints the Lab's.
``%%topology``
    Parses the cell as a topology (switches, hosts, servers, links, generators
    such as ``use fat_tree(4)``), runs the Lab's chains on that network from now
    on and displays the live view's topology tab: where every NF runs.  With a
    topology, ``%sfc push`` pushes every switch, ``%sfc send h1 h16 [CHAIN] [N]``
    and ``%sfc send CHAIN [N]`` go from host to host, ``%sfc tables SWITCH`` reads
    one switch, ``%sfc trace`` shows network-wide traces; ``%sfc topology off``
    goes back to one switch.
``%%nf NAME [--layer L] [--offload C] [--field F:W] [--replace]``
    Adds the NF written in P4 in the cell to the Lab's catalogue (re-running the
    cell redefines it; ``--replace`` is needed to shadow a library NF).
``%sfc COMMAND …``
    One method per command: ``sfc_<command>`` (``-`` in a command name becomes
    ``_``); the first line of its docstring is its line in ``%sfc help``.  To add
    a command, add such a method.

Errors are short: the message, the offending line with a caret, and a hint;
positions count the cell's lines as the editor shows them (the ``%%chain`` line
is line 1).  ``%config SfcMagics.traceback = True`` shows Python tracebacks again.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import (MagicArgumentParser, argument, magic_arguments,
                                          parse_argstring)
from IPython.display import display
from traitlets import Bool, CaselessStrEnum
from traitlets.config import Configurable

from ..compiler import ARCHS
from ..errors import SfclabError, SourceError, did_you_mean
from ..ir.model import ChainSet
from ..lang import format as format_chains
from ..api.lab import Lab
from ..nfinfo import OFFLOAD_CLASSES
from .cell_sync import CellSync, sync_of

__all__ = ["SfcMagics", "SfcUsageError", "current_lab", "load_ipython_extension"]


class SfcUsageError(UsageError):
    """An sfclab error raised by a magic: IPython shows the message, not a traceback
    (unless ``SfcMagics.traceback`` is on)."""

    def __init__(self, error: BaseException, *, traceback: bool = False) -> None:
        super().__init__(str(error))
        self.error = error
        self.traceback = traceback

    def _render_traceback_(self) -> list[str]:
        e = self.error
        if self.traceback:
            from IPython import get_ipython
            from IPython.core.ultratb import FormattedTB

            shell = get_ipython()
            tb = shell.InteractiveTB if shell is not None else FormattedTB(mode="Context")
            return tb.structured_traceback(type(e), e, e.__traceback__)
        return [f"{type(e).__name__}: {e}"]


def in_cell(error: SfclabError, magic: str, body: str) -> SfclabError:
    """*error* about the *body* of a cell, with its position counted as the user sees
    the cell: the magic's own line (*magic*, ``%%chain …``) is line 1.

    >>> from sfclab.errors import ChainSyntaxError
    >>> e = in_cell(ChainSyntaxError("bad", line=1, column=7, text="chain x"), "%%chain", "chain x")
    >>> e.location
    '<input>:2:7'
    """
    if isinstance(error, SourceError) and error.line and error.text == body:
        error.line += 1
        error.text = f"{magic}\n{body}"
    return error


def _views(text: str) -> tuple[str, ...]:
    from .views import normalize_show

    try:
        return normalize_show(text)
    except ValueError as e:
        raise UsageError(str(e)) from None


@magics_class
class SfcMagics(Magics, Configurable):
    """``%%chain``, ``%%nf`` and ``%sfc`` on the shell's :class:`~sfclab.lab.Lab`."""

    traceback = Bool(False, help="Show the Python traceback of sfclab errors in magics "
                     "(to debug sfclab itself); off: the message and caret only.").tag(config=True)
    arch = CaselessStrEnum(ARCHS, default_value="v1model", help="Architecture of the Lab "
                           "the magics create (%%chain --arch changes it later).").tag(config=True)

    def __init__(self, shell: Any = None, **kwargs: Any) -> None:
        super().__init__(shell=shell, **kwargs)
        self._lab: Lab | None = None

    @property
    def lab(self) -> Lab:
        """The Lab the magics work on (created on first use; assign your own to use it)."""
        if self._lab is None:
            self._lab = Lab(arch=self.arch)
            self.cell_sync                   # sees every change from the start
        return self._lab

    @lab.setter
    def lab(self, lab: Lab) -> None:
        self._lab = lab
        self.cell_sync

    def _call(self, fn: Callable[..., Any], *args: Any, cell: tuple[str, str] | None = None,
              **kwargs: Any) -> Any:
        """Run a library call; its sfclab errors become short UsageErrors (positions in
        *cell*, ``(magic line, body)``, counted as the cell shows them)."""
        try:
            return fn(*args, **kwargs)
        except SfclabError as e:
            if cell is not None:
                in_cell(e, *cell)
            raise SfcUsageError(e, traceback=self.traceback) from None

    # -- cell magics ---------------------------------------------------------------------------
    @magic_arguments()
    @argument("--name", "-n", help="name of the chain (a cell with one chain; renames it)")
    @argument("--arch", "-a", choices=ARCHS, help="compile for this architecture from now on")
    @argument("--show", "-s", help="comma-separated tabs to display (default: all): "
              "chains, ir, pipeline, fsm, placement, offload, topology, p4, entries")
    @argument("--force", "-f", action="store_true", help="run the cell even where it "
              "discards changes made to its chains since it ran (by the chain editor …)")
    @argument("--from-lab", action="store_true", help="replace this cell's text with the "
              "Lab's text of its chains (the Lab is unchanged)")
    @cell_magic
    def chain(self, line: str, cell: str) -> None:
        """Add the cell's chains to the lab, recompile, and display the live view.

        A cell whose chains were changed since it ran (by the chain editor, or by
        anything but a ``%%chain`` cell) is refused with what differs
        (:mod:`sfclab.notebook.cell_sync`): ``--from-lab`` takes the Lab's text into
        the cell instead, ``--force`` runs the cell's text anyway."""
        args = parse_argstring(self.chain, line)
        show = _views(args.show) if args.show else None
        if not cell.strip():
            raise UsageError("the cell is empty: write chains below %%chain, e.g.\n"
                             "    chain web: firewall -> nat -> l3fwd")
        where = (f"%%chain {line}".rstrip(), cell)
        if args.from_lab:
            if args.force:
                raise UsageError("--from-lab takes the Lab's text, --force the cell's: "
                                 "give one of them")
            self._cell_from_lab(args, cell, where)
        else:
            self._call(self.cell_sync.apply, cell, name=args.name, arch=args.arch,
                       force=args.force, cell=where)
        display(self.lab.live_view(show))
        warnings = _chain_warnings(self.lab)
        if warnings:
            display(_warnings_output(warnings))

    @property
    def cell_sync(self) -> CellSync:
        """What the ``%%chain`` cells put in :attr:`lab` (:mod:`sfclab.notebook.cell_sync`)."""
        return sync_of(self.lab)

    def _cell_from_lab(self, args: Any, cell: str, where: tuple[str, str]) -> None:
        """``%%chain --from-lab``: the cell's text becomes the Lab's text of its chains."""
        sync = self.cell_sync
        text, kept, gone = self._call(sync.lab_text, cell, args.name, cell=where)
        if not kept:
            raise UsageError(f"the lab has none of this cell's chains "
                             f"({', '.join(gone)}): there is no text to take; run the cell "
                             f"without --from-lab to add them")
        magic = " ".join(["%%chain", *(["--arch", args.arch] if args.arch else []),
                          *(["--show", shlex.quote(args.show)] if args.show else [])])
        self.shell.set_next_input(f"{magic}\n{text}\n", replace=True)
        sync.took(kept)
        left = (f"; {', '.join(gone)} left out: the lab no longer has "
                f"{'it' if len(gone) == 1 else 'them'}" if gone else "")
        # the text is in the cell now: said once (``%sfc chains`` prints it where a front
        # end cannot replace a cell)
        print(f"this cell now holds the lab's text of {', '.join(kept)} (the lab is "
              f"unchanged){left}; run it to go on from there")

    @cell_magic
    def topology(self, line: str, cell: str) -> None:
        """Run the lab's chains on the cell's topology; show where every NF runs."""
        if line.strip():
            raise UsageError(f"%%topology takes no options, not {line.strip()!r}: name the "
                             f"network in the cell (`topology campus`)")
        if not cell.strip():
            raise UsageError("the cell is empty: write a topology below %%topology, e.g.\n"
                             "    use fat_tree(4)\nor\n    switch s1, s2\n    host h1 at s1\n"
                             "    host h2 at s2\n    link s1 -- s2")
        self._call(self.lab.set_topology, cell, source="<cell>", cell=("%%topology", cell))
        display(self.lab.live_view(("topology",)))
        state = self.lab.network_state()
        if state.stopped:
            print(f"the topology changed ({state.stopped}): the network that ran is stopped, "
                  f"with the NFs' state in registers; %sfc push runs the chains on this one")
        warnings = state.warnings
        if warnings:
            display(_warnings_output(warnings))

    @magic_arguments()
    @argument("name", help="the NF's name: the name of the control in the cell")
    @argument("--layer", type=int, help="protocol layer, for ordering pipelines (default 4)")
    @argument("--offload", choices=OFFLOAD_CLASSES, help="P4SFC offloadability (default fully)")
    @argument("--field", help="NAME:WIDTH of the metadata value the NF sets (for conditions)")
    @argument("--replace", action="store_true", help="redefine an NF of the library")
    @cell_magic
    def nf(self, line: str, cell: str) -> None:
        """Add the NF written in P4 in the cell to the lab's catalogue."""
        args = parse_argstring(self.nf, line)
        manifest: dict[str, Any] = {}
        if args.layer is not None:
            manifest["layer"] = args.layer
        if args.offload:
            manifest["offload"] = args.offload
        if args.field:
            fname, _, width = args.field.partition(":")
            if not (fname and _count(width) is not None):
                raise UsageError(f"--field is NAME:WIDTH (e.g. score:8), not {args.field!r}")
            manifest["field"] = {"name": fname, "width": _count(width)}
        if not cell.strip():
            raise UsageError(f"the cell is empty: write the NF below %%nf, e.g.\n"
                             f"    control {args.name}(inout headers_t hdr, inout sfc_meta_t sfc)"
                             " { apply { } }")
        name = self._call(self.lab.add_nf, cell, name=args.name, manifest=manifest,
                          replace=True if args.replace else None,
                          cell=(f"%%nf {line}".rstrip(), cell))
        info = self.lab.catalog.resolve(name)
        print(f"NF {name!r}: layer {info.layer}, {info.offload} offloadable, "
              f"{info.tables} tables; chains can use it now")

    # -- %sfc ------------------------------------------------------------------------------------
    @line_magic
    def sfc(self, line: str) -> Any:
        """``%sfc COMMAND [ARGS]``: run a lab command (``%sfc help`` lists them)."""
        cmd, rest = (line.split(None, 1) + ["", ""])[:2]
        method = getattr(self, f"sfc_{cmd.replace('-', '_')}", None) if cmd else self.sfc_help
        if method is None:
            raise UsageError(f"unknown %sfc command {cmd!r}; "
                             + (did_you_mean(cmd, self.commands()) or "%sfc help lists them"))
        return method(rest.strip())

    @classmethod
    def commands(cls) -> list[str]:
        """The ``%sfc`` commands, in the order they are defined."""
        seen: dict[str, None] = {}
        for klass in reversed(cls.__mro__):
            for attr in vars(klass):
                if attr.startswith("sfc_"):
                    seen[attr[4:].replace("_", "-")] = None
        return list(seen)

    def _parser(self, command: str) -> MagicArgumentParser:
        return MagicArgumentParser(prog=f"%sfc {command}", add_help=False)

    def sfc_help(self, args: str) -> Any:
        """help                       this list"""
        from .runtime_views import help_output, target_text

        cells = [("%%chain [--name N] [--arch v1model|tna] [--show VIEWS] [--from-lab|--force]",
                  "add chains, show the live view"),
                 ("%%topology", "run the chains on a network of switches, show where NFs run"),
                 ("%%nf NAME [--layer L] [--offload C] [--field F:W] [--replace]",
                  "add an NF written in P4")]
        for cmd in self.commands():
            doc = (getattr(self, f"sfc_{cmd.replace('-', '_')}").__doc__ or cmd).strip()
            usage, _, what = doc.splitlines()[0].partition("  ")
            cells.append((f"%sfc {usage.strip()}", what.strip()))
        lab = self.lab
        where = target_text(lab.started_target) if lab.started_target is not None else \
            "the embedded model (started on first use)"
        return help_output(cells, f"lab: {len(lab.chains)} chains ({lab.arch}), target: {where}")

    def sfc_show(self, args: str) -> None:
        """show [VIEW …]              display the live view, or just some tabs of it"""
        show = _views(",".join(args.split())) if args else None
        display(self.lab.live_view(show))

    def sfc_export(self, args: str) -> None:
        """export DIR [--arch A]      write program.p4, p4info.txt, entries.json, plan.txt"""
        p = self._parser("export")
        p.add_argument("dir")
        p.add_argument("--arch", choices=ARCHS)
        ns = p.parse_args(shlex.split(args))
        paths = self._call(self.lab.export, ns.dir, arch=ns.arch)
        print(f"wrote {', '.join(p.name for p in paths)} to {ns.dir}")

    def sfc_remove(self, args: str) -> None:
        """remove CHAIN …             remove chains from the lab (the views update)"""
        names = shlex.split(args)
        if not names:
            raise UsageError("name the chains to remove: %sfc remove CHAIN …")
        sync = self.cell_sync
        self._call(sync.ours, self.lab.remove, *names)
        sync.removed(tuple(names))
        left = self.lab.chains.names()
        print(f"removed {', '.join(names)}; chains left: {', '.join(left) or 'none'}")

    def sfc_chains(self, args: str) -> None:
        """chains [CHAIN …] [--cell]  the lab's chains as %%chain cell text (--cell: in a new cell below)"""
        p = self._parser("chains")
        p.add_argument("names", nargs="*")
        p.add_argument("--cell", action="store_true")
        ns = p.parse_args(shlex.split(args))
        have = self.lab.chains
        for n in ns.names:
            if n not in have:
                raise UsageError(f"no chain {n!r} in the lab; " + (
                    did_you_mean(n, have.names()) or
                    f"chains: {', '.join(have.names()) or 'none'}"))
        if not len(have):
            print("the lab has no chains yet: write them in a %%chain cell, or draw them "
                  "(%sfc edit)")
            return
        text = "%%chain\n" + format_chains(ChainSet.of([have[n] for n in
                                                        ns.names or have.names()])) + "\n"
        if ns.cell:
            self.shell.set_next_input(text, replace=False)
            print(f"a new cell below holds {', '.join(ns.names or have.names())} as the lab "
                  f"has them")
        else:
            print(text, end="")

    # -- the target -----------------------------------------------------------------------------
    def sfc_target(self, args: str) -> None:
        """target [URL]               show or set the switch: model, model://H:P, bmv2, bmv2://H:P?device_id=N (a network: model, mininet)"""
        from .network_views import network_target_text
        from .runtime_views import target_text

        lab = self.lab
        describe = target_text if lab.topology is None else network_target_text
        if not args:
            current = lab.target if lab.topology is None else \
                self._call(lambda: lab.network.target)
            print(f"target: {describe(current)}")
            return
        t = self._call(lab.connect, None if args == "model" else args)
        print(f"target: {describe(t)} (nothing pushed yet: %sfc push)")

    def sfc_push(self, args: str) -> Any:
        """push                       push the program and every entry to the target (every switch)"""
        from .runtime_views import PushSummary, installed_beyond

        if not len(self.lab.chains):
            raise UsageError("nothing to push: the lab has no chains yet. Write them in a "
                             "%%chain cell (chain web match tcp.dport == 80: firewall -> "
                             "l3fwd), then %sfc push")
        if self.lab.topology is not None:
            from .network_views import NetworkPushSummary

            self._call(self.lab.push)
            net = self.lab.network
            return NetworkPushSummary(net, {s: len(sp.generated.entries)
                                            for s, sp in net.program.switches.items()})
        n = self._call(self.lab.push)
        return PushSummary(self.lab.target, self.lab.pushed, n,
                           installed=installed_beyond(getattr(self.lab.target, "session", None)))

    def sfc_update(self, args: str) -> None:
        """update [--reload]          apply the changed chains by entries, or say a reload is needed"""
        from .runtime_views import update_text

        p = self._parser("update")
        p.add_argument("--reload", action="store_true", help="reload the program if needed")
        ns = p.parse_args(shlex.split(args))
        plan = self._call(self.lab.update, allow_reload=ns.reload)
        print(update_text(plan))

    def sfc_send(self, args: str) -> Any:
        """send CHAIN [N] [--port P]  send N packets of CHAIN's class, varied to cover its paths; on a network also send SRC DST [CHAIN] [N]"""
        if self.lab.topology is not None:
            self._warn_drift()
            return self._send_network(shlex.split(args))
        p = self._parser("send")
        p.add_argument("chain")
        p.add_argument("n", nargs="?", type=int, default=1)
        p.add_argument("--port", type=int, default=None)
        ns = p.parse_args(shlex.split(args))
        self._warn_drift()
        return self._sent_view(self.lab.send, ns.chain, ns.n, port=ns.port)

    def sfc_send_pcap(self, args: str) -> Any:
        """send-pcap FILE [--port P]  send the packets of a pcap file in on port P (default 1)"""
        p = self._parser("send-pcap")
        p.add_argument("file")
        p.add_argument("--port", type=int, default=1)
        ns = p.parse_args(shlex.split(args))
        return self._sent_view(self.lab.send_pcap, ns.file, port=ns.port, label=ns.file)

    def _sent_view(self, send: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Run a send of the lab (an interrupt stops it between packets: what was sent
        shows, saying so) and show its packets, the last ones whole."""
        from ..targets.traffic.sending import SendInterrupted

        before = len(self.lab.traces)
        try:
            sent = self._call(send, *args, **kwargs)
        except SendInterrupted as e:
            sent = e.result
        shown = self.lab.traces[before:]
        lines = [getattr(sent, "interrupted", "")]
        if len(shown) < len(sent):
            lines.append(f"the last {len(shown):,} of these {len(sent):,} packets are kept "
                         f"whole; {len(sent) - len(shown):,} older traces were dropped "
                         f"(lab.keep_traces = N keeps more); the counts are of every packet")
        # what the sender says it covered (a send result of a class with covered / missed)
        said = bool(getattr(sent, "paths", True))
        return self._trace_view(shown, covered=getattr(sent, "covered", None) if said else None,
                                missed=getattr(sent, "missed", None) if said else None,
                                counts=getattr(sent, "counts", None),
                                note="\n".join(x for x in lines if x))

    def _send_network(self, words: list[str]) -> Any:
        """``%sfc send`` on a network: ``SRC [DST] [CHAIN] [N]`` or ``CHAIN [N]``."""
        from .network_views import NetworkSendView

        usage = "%sfc send SRC DST [CHAIN] [N] (hosts), or %sfc send CHAIN [N]"
        n = _count(words.pop()) if words and _count(words[-1]) is not None else 1
        topo = self.lab.topology
        ends = [w for w in words[:2] if w in topo.hosts or w in topo.servers]
        rest = words[len(ends):]
        if not words or len(rest) > 1 or (not ends and not rest):
            raise UsageError(f"usage: {usage}")
        src, dst = (ends + [None, None])[:2]
        sent = self._call(self.lab.send_between, src, dst, rest[0] if rest else None, n)
        return NetworkSendView(self.lab, sent, summary=sent.summary())

    def sfc_trace(self, args: str) -> Any:
        """trace [N]                  the last N packets' traces (default 10); select one to see its path"""
        n = _count(args.strip()) or 10
        self._warn_drift()
        if self.lab.topology is not None:
            from .network_views import NetworkSendView

            traces = self._call(lambda: self.lab.network.traces)
            if not traces:
                print("no packets sent on the network yet: %sfc send CHAIN N, or %sfc send "
                      "SRC DST [CHAIN] [N]")
                return None
            return NetworkSendView(self.lab, traces[-n:])
        if not self.lab.traces:
            print("no packets sent yet: %sfc send CHAIN N")
            return None
        return self._trace_view(self.lab.traces[-n:], counts=self.lab.traces.summary,
                                note=self.lab.traces.note())

    def sfc_tables(self, args: str) -> Any:
        """tables [SWITCH]            occupancy (entries / size) and hits of every table (of SWITCH on a network)"""
        from .runtime_views import TablesView, installed_beyond

        switch = args.strip() or None
        self._warn_drift()
        rows = self._call(self.lab.tables, switch)
        if switch is not None:
            from .network_views import SwitchTables

            return SwitchTables(switch, rows)
        if self.lab.topology is not None:
            return TablesView(rows)
        return TablesView(rows, installed_beyond(getattr(self.lab.target, "session", None)))

    def sfc_counters(self, args: str) -> None:
        """counters                   counters the NFs updated (non-zero cells)"""
        counters = self._call(self.lab.counters)
        if not counters:
            print("no counter has counted anything yet")
        for name, cells in counters.items():
            print(name + ": " + ", ".join(f"[{i}] {pk} pkts / {by} B" for i, pk, by in cells))

    def sfc_topology(self, args: str) -> Any:
        """topology [off]             show the network the chains run on; off: one switch again"""
        if args.strip() == "off":
            self._call(self.lab.set_topology, None)
            print("no topology: the chains run on one switch again")
            return None
        if args.strip():
            raise UsageError(f"%sfc topology takes `off` or nothing, not {args.strip()!r}")
        return self.lab.live_view(("topology",))

    def _warn_drift(self) -> None:
        """Show first that the target runs other chains than the Lab, if it does."""
        from ..api.drift import drift
        from .runtime_views import drift_output

        found = self._call(drift, self.lab)
        if found is not None:
            display(drift_output(found))

    def sfc_edit(self, args: str) -> Any:
        """edit [CHAIN]               draw CHAIN (default: the first; a new name: a new chain) in an editor bound to the lab"""
        words = shlex.split(args)
        if len(words) > 1:
            raise UsageError(f"%sfc edit takes one chain name, not {args.strip()!r}")
        return self._call(self.lab.editor, words[0] if words else None)

    def _trace_view(self, traces, **coverage: Any):
        from .send_view import SendView

        return SendView(self.lab, traces, **coverage)


def _count(word: str) -> int | None:
    """*word* as a count (ASCII digits), None if it is not one; a count of more digits
    than anyone means is a usage error, not Python's int-conversion limit.

    >>> _count("12"), _count("x"), _count("²")
    (12, None, None)
    """
    if not (word.isascii() and word.isdigit()):
        return None
    if len(word) > 12:
        raise UsageError(f"{word[:12]}… ({len(word)} digits) is not a count: give a number "
                         f"below 10^12")
    return int(word)


def _chain_warnings(lab: Lab) -> list[str]:
    """What sfclab warns about the lab's chains (a chain no packet reaches because
    earlier chains take them all …): the compiled chains' ``warnings`` and the Lab's
    own ``warnings()``, when they have them."""
    found = list(getattr(lab.compiled, "warnings", ()) or ())
    extra = getattr(lab, "warnings", None)
    found += list((extra() if callable(extra) else extra) or ())
    return [getattr(w, "message", None) or str(w) for w in found]


def _warnings_output(warnings: list[str]) -> Any:
    from .markup import esc
    from .runtime_views import Rich

    text = "\n".join(f"warning: {w}" for w in warnings)
    html = "".join(f"<div class='sfc-warning' style='background:#fff8e1;border-left:3px solid "
                   f"#f9a825;padding:2px 8px;margin:2px 0;white-space:pre-wrap'>⚠ {esc(w)}</div>"
                   for w in warnings)
    return Rich(text, html)


def current_lab(shell: Any = None) -> Lab:
    """The Lab behind the magics of *shell* (default: the running IPython)."""
    if shell is None:
        from IPython import get_ipython

        shell = get_ipython()
    magics = shell.magics_manager.registry.get("SfcMagics") if shell is not None else None
    if magics is None:
        raise UsageError("the sfclab magics are not loaded: run %load_ext sfclab")
    return magics.lab


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext sfclab``: register ``%%chain``, ``%%nf`` and ``%sfc``."""
    ipython.register_magics(SfcMagics(ipython))
