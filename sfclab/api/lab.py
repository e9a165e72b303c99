"""The :class:`Lab`: chains, their compiled program and the views of it, in one object.

Everything the notebook magics do goes through a Lab, so the same work runs in a
script::

    >>> lab = Lab()
    >>> lab.add("chain web: firewall -> nat -> l3fwd")
    ('web',)
    >>> lab.compiled.pipeline.slots
    ('firewall', 'nat', 'l3fwd')
    >>> lab.add("chain web: firewall -> l3fwd")          # same name: replaces
    ('web',)
    >>> lab.remove("web"); len(lab.chains)
    ('web',)
    0

Every change is atomic: the new chain set is parsed and compiled first, and on
any :class:`~sfclab.errors.SfclabError` the Lab stays as it was.  Compiled
results are cached by the chains' signatures, the architecture and the
catalogue, so re-running an unchanged cell (or undoing a change) recompiles
nothing; generated programs are cached the same way.  The passes are global
(merge, pipeline order, FSM plan all look at every chain), so the unit of
caching is the whole chain set.

The live view (:attr:`Lab.view`, a :class:`sfclab.notebook.views.LiveView`) is
created on first use and updated in place after every change; so is every view
made by :meth:`Lab.live_view`.  A change refreshes only the tab on show; the P4
program and its entries are generated when a tab showing them is opened (and
cached, as above), so an edit stays cheap whatever the program's size; in a kernel,
the NFs' P4 (which compiling reads) is parsed between cells after the first live view
(:meth:`Lab.parse_nfs`), so an edit bringing in a new NF does not parse it either.
:meth:`Lab.on_change` callbacks get a :class:`LabChange` naming the chains added,
replaced and removed.

A Lab with a topology (:meth:`Lab.set_topology`) runs its chains on that
network (:mod:`sfclab.api.labnet`): :meth:`Lab.push` pushes every switch,
:meth:`Lab.send` goes from a chain's ingress host to its egress host (and
:meth:`Lab.send_between` from any host), :meth:`Lab.tables` reads one switch.
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..compiler import CompiledChains, compile
from ..errors import CatalogError, ChainError, SfclabError, did_you_mean
from ..frontends import front_end
from ..ir.model import Chain, ChainSet
from ..lang import format as format_chains
from ..lang import parse
from ..nfinfo import NFCatalog
from .labsend import LabTrace, Sender, SendResult
from .values import TableUse

if TYPE_CHECKING:
    from ..ir.topology import Topology
    from .labnet import LabNetwork, NetworkSendResult
    from .network import Network
    from ..codegen import Generated
    from ..notebook.views import LiveView

__all__ = ["Lab", "LabChange", "LabTrace", "SendResult", "TableUse"]

#: How many compiled chain sets (and their generated programs) a Lab keeps.
CACHE_SIZE = 16


@dataclass(frozen=True, slots=True)
class LabChange:
    """What one change did: chain names added, replaced and removed, and the
    compiled program before and after.  ``reason`` is ``"add"``, ``"remove"``,
    ``"arch"``, ``"nf"`` (an NF was added to the Lab's catalogue) or ``"edit"``
    (:meth:`set_chains`: a bound chain editor)."""

    reason: str
    added: tuple[str, ...]
    replaced: tuple[str, ...]
    removed: tuple[str, ...]
    previous: CompiledChains
    compiled: CompiledChains


class Lab:
    """Chains, the compiler's result for them, code, and live views.

    *arch* is the architecture compiled for (``"v1model"`` or ``"tna"``);
    *catalog* the NF catalogue (default: the NF library).  The Lab works on its
    own copy of the catalogue, so NFs added with :meth:`add_nf` stay in this Lab.
    *options* are :class:`~sfclab.passes.CompileOptions` fields (``pipeline="optimal"``…).
    """

    def __init__(self, arch: str = "v1model", catalog: NFCatalog | None = None,
                 **options: Any) -> None:
        if catalog is None:
            from ..p4.catalog import load_default

            catalog = load_default()
        self.catalog: NFCatalog = catalog.copy()
        self.options: dict[str, Any] = dict(options)
        self._catalog_version = 0
        self._user_nfs: set[str] = set()
        self._compiled_cache: OrderedDict[Hashable, CompiledChains] = OrderedDict()
        # (id of the compiled chains, arch) -> (those compiled chains, code or its error)
        self._generated_cache: OrderedDict[Hashable, tuple[CompiledChains, Any]] = OrderedDict()
        self._callbacks: list[Callable[[LabChange], Any]] = []
        self._views: dict[tuple[str, ...] | None, LiveView] = {}
        self._parsing_nfs = False    # the kernel parses the NFs' P4 between cells
        self._chains = ChainSet()
        self._arch = arch
        #: Values of run-time names in multibranch cases (``p1@nat``): ``{"p1": 1}``.
        self.bindings: dict[str, int] = {}
        self._target = None
        self._target_url: str | None = None
        self._pushed = None
        self._oracle = None          # the model that tells which path a class packet takes
        self._kinds: tuple[Any, Any] | None = None
        self._sender = Sender()      # what was sent: the last traces whole, all counted
        self._net: LabNetwork | None = None        # the network side, once a topology is set
        self._compiled = self._compile(self._chains, arch)  # checks arch and options

    # -- state ---------------------------------------------------------------------------------
    @property
    def chains(self) -> ChainSet:
        """The chains, by name in the order added (read it; change it with add/remove)."""
        return self._chains

    @property
    def compiled(self) -> CompiledChains:
        """Every pass's output for :attr:`chains` (kept up to date by every change)."""
        return self._compiled

    @property
    def arch(self) -> str:
        """The architecture compiled for; setting it recompiles."""
        return self._arch

    @arch.setter
    def arch(self, arch: str) -> None:
        self._commit("arch", self._chains, arch)

    def generated(self, arch: str | None = None) -> Generated:
        """The composed P4 program and table entries for *arch* (default: :attr:`arch`),
        generated once per compiled chain set and architecture."""
        out = self._generate(arch or self._arch)
        if isinstance(out, SfclabError):
            raise out.with_traceback(None)       # cached: do not grow its traceback
        return out

    def export(self, out_dir: str | Path, *, arch: str | None = None) -> list[Path]:
        """Write ``program.p4``, ``p4info.txt``, ``entries.json`` and ``plan.txt`` for
        *arch* into *out_dir*; returns the paths written.  With a topology: one folder
        per switch and the placement (:meth:`sfclab.network.Network.export`)."""
        if self._net is not None:
            return self.network.export(out_dir)
        from ..codegen import write_outputs

        return write_outputs(self.generated(arch), out_dir)

    # -- changes -------------------------------------------------------------------------------
    def add(self, chains: str | Chain | ChainSet | Iterable[Chain], *, name: str | None = None,
            arch: str | None = None, source: str = "<string>") -> tuple[str, ...]:
        """Add chains (text in any of the three styles, or Chain objects); a chain with
        the name of one already here replaces it.  *name* renames the one chain given;
        *arch* switches the architecture in the same step.  Returns the names added.

        Raises the parser's or compiler's :class:`~sfclab.errors.SfclabError`; the Lab
        is then unchanged.  Weights are shares of all traffic: chains whose weights,
        with the Lab's other chains', add up to more than 1 are refused (located at the
        weight that goes past 1 when *chains* is text).
        """
        new = self._chainset(chains, source)
        if self._net is not None:
            self._net.check_endpoints(chains, new, source)
        if name is not None:
            if len(new) != 1:
                raise ChainError(f"a name is for one chain; got {len(new)} "
                                 f"({', '.join(new.names()) or 'none'})", source=source,
                                 hint="drop the name, or give one chain at a time")
            new = ChainSet.of([dataclasses.replace(next(iter(new)), name=name)])
        merged = ChainSet(dict(self._chains.chains))
        for c in new:
            merged.add(c, replace=True)
        self._check_weights(new, chains, source)
        self._commit("add", merged, arch or self._arch)
        return tuple(new.names())

    def set_chains(self, chains: str | ChainSet | Iterable[Chain], *,
                   source: str = "<string>") -> tuple[str, ...]:
        """Make *chains* the Lab's chains in one change (the Lab's other chains are
        removed): what a chain editor bound to the Lab (:meth:`editor`) does after each
        edit.  Returns the names; raises as :meth:`add`, and the Lab is then unchanged."""
        new = self._chainset(chains, source)
        if self._net is not None:
            self._net.check_endpoints(chains, new, source)
        total = sum(c.weight for c in new if c.weight is not None)
        if total > 1 + 1e-9:
            raise ChainError(f"the chain weights add up to {total:g}, more than all the "
                             f"traffic", source=source, hint="lower some weights")
        self._commit("edit", new, self._arch)
        return tuple(new.names())

    # -- the network ---------------------------------------------------------------------------
    @property
    def topology(self) -> Topology | None:
        """The network the chains run on (:meth:`set_topology`), or None: one switch."""
        return self._net.topology if self._net is not None else None

    def set_topology(self, topology: Topology | str | bytes | None, *,
                     source: str = "<topology>") -> Topology | None:
        """Run the chains on *topology* (a :class:`~sfclab.ir.topology.Topology` or
        topology text) from now on; None goes back to one switch.  A topology that does
        not parse raises its :class:`~sfclab.errors.TopologyError` and changes nothing;
        a running network is stopped (push again): :meth:`network_state` says what
        changed (``stopped``) until the next push."""
        if isinstance(topology, (str, bytes)):
            from ..lang import parse_topology

            topology = parse_topology(topology, source=source, catalog=self.catalog)
        url, ran = None, None
        if self._net is not None:
            if topology is not None and self._net.topology.signature() == topology.signature():
                return self._net.topology              # the same network: keep it running
            ran = self._net.topology if self._net.running is not None else self._net.ran
            self._net.close()
            url = self._net.url                        # the network target stays
        if topology is None:
            self._net = None
        else:
            from .labnet import LabNetwork

            self._net = LabNetwork(topology, catalog=self.catalog, bindings=self.bindings,
                                   url=url)
            self._net.ran = ran                        # its views say it was stopped
        self._refresh_views()
        return topology

    @property
    def network(self) -> Network:
        """The chains on the topology (:class:`~sfclab.network.Network`: placement,
        per-switch programs, the running network); once pushed, what runs."""
        return self._network_side().network(self._chains)

    def network_state(self):
        """What the topology view shows: the topology, the network (None: no topology)
        and whether the chains changed since the push (:class:`~sfclab.api.labnet.NetworkState`)."""
        return None if self._net is None else self._net.state(self._chains)

    def send_between(self, src: str | None, dst: str | None = None, chain: str | None = None,
                     n: int = 1, *, packet: Any = None,
                     seed: int | None = None) -> NetworkSendResult:
        """Send *n* packets from host *src* to host *dst* across the network: of
        *chain*'s class (from its ingress to its egress when *src* is None), of the
        chain from *src* to *dst*, or *packet*.  Returns the network traces."""
        side = self._network_side()
        return self._pushing(side, side.send, self._chains, src, dst, chain, n=n,
                             packet=packet, seed=seed)

    def _pushing(self, side: LabNetwork, fn: Callable[..., Any], *args: Any, **kwargs: Any):
        """``fn(*args, **kwargs)``, which pushes the network first when nothing runs: the
        views follow when it did (or failed to)."""
        before = side.running is not None
        try:
            return fn(*args, **kwargs)
        finally:
            if not before and (side.running is not None or side.holding()):
                self._refresh_views()

    def _network_side(self) -> LabNetwork:
        if self._net is None:
            raise SfclabError("this lab has no topology: its chains run on one switch",
                              hint="write one in a %%topology cell (lab.set_topology(…)), "
                                   "e.g. `use fat_tree(4)`")
        return self._net

    def remove(self, *names: str) -> tuple[str, ...]:
        """Remove chains by name (all or none: an unknown name removes nothing)."""
        for n in names:
            if n not in self._chains:
                have = self._chains.names()
                raise ChainError(f"no chain {n!r}", source="lab",
                                 hint=did_you_mean(n, have) or
                                 (f"chains: {', '.join(have)}" if have else "there are no chains"))
        kept = ChainSet({k: c for k, c in self._chains.chains.items() if k not in names})
        self._commit("remove", kept, self._arch)
        return tuple(dict.fromkeys(names))

    def add_nf(self, source: str, *, name: str | None = None,
               manifest: Mapping[str, Any] | None = None, replace: bool | None = None) -> str:
        """Add an NF written in P4 (a ``control NAME(inout headers_t hdr, inout
        sfc_meta_t sfc)``) to this Lab's catalogue; *manifest* as in a ``NAME.json``
        (layer, offload, field, …).  Returns the NF's name.

        *replace*: redefine an NF of the same name (``None``: only NFs added to this
        Lab, so re-running a cell works but the library is not shadowed by mistake).
        The chains are checked and recompiled against the new catalogue first.
        """
        add_source = getattr(self.catalog, "add_source", None)
        if add_source is None:
            raise CatalogError("this Lab's catalogue has no P4 definitions",
                               hint="create the Lab with a P4Catalog (the default)")
        trial = self.catalog.copy()
        nf = name or _control_name(source)
        again = replace if replace is not None else (nf is not None and nf in self._user_nfs)
        added = trial.add_source(source, name=name, manifest=manifest, replace=bool(again))
        chains = self._chains
        if again and len(chains):        # the NF's fields may have changed: re-check the chains
            chains = parse(format_chains(chains), source="<chains>", catalog=trial)
        compiled = self._compile(chains, self._arch, catalog=trial,
                                 version=self._catalog_version + 1)
        self.catalog, self._catalog_version = trial, self._catalog_version + 1
        if self._net is not None:         # the network follows (a running one: by update)
            self._net.catalog = trial
        self._user_nfs.add(added)
        self._apply("nf", chains, self._arch, compiled, force=True)
        return added

    def on_change(self, fn: Callable[[LabChange], Any], *, remove: bool = False):
        """Call ``fn(change)`` after every change that alters the compiled program."""
        if remove:
            self._callbacks.remove(fn)
        else:
            self._callbacks.append(fn)
        return fn

    # -- views ---------------------------------------------------------------------------------
    @property
    def view(self) -> LiveView:
        """The live view with every tab (created on first use, updated in place)."""
        return self.live_view()

    def live_view(self, show: Sequence[str] | str | None = None) -> LiveView:
        """A live view of *show* (tab names, see :data:`sfclab.notebook.views.TABS`;
        ``None``: all).  One view per selection of tabs, updated in place on every change.
        The view is the registered front end's (:mod:`sfclab.frontends`: the notebook's
        widgets); a Lab that is never shown needs none."""
        fe = front_end()
        key = fe.view_key(show)
        view = self._views.get(key)
        if view is None or view.comm is None:       # never made, or closed
            view = fe.live_view(key, self.installed)
            if hasattr(view, "follow_packets"):     # it shows what packets did (TNA model)
                view.follow_packets(self.ran_paths)
            view.update(self._compiled, self._generate, network=self.network_state)
            self._views[key] = view
            self._parse_nfs_between_cells()
        return view

    def editor(self, chain: str | None = None, **kwargs: Any):
        """A chain editor bound to this Lab (:mod:`sfclab.notebook.lab_editor`): it
        draws *chain* (default: the first chain; a new name starts a new chain), every
        valid edit goes into the Lab as a ``%%chain`` re-run does (the views follow),
        and a change of the Lab's chains redraws it.  *kwargs* go to the editor."""
        return front_end().editor(self, chain, **kwargs)

    def parse_nfs(self) -> int:
        """Parse the P4 of every NF in the catalogue now; returns how many NFs have P4.

        Compiling chains reads the P4 of their NFs (which headers the program parses,
        for the warnings about chains no packet reaches); each NF's is parsed once and
        kept.  After a Lab shows its first live view in a kernel, the kernel does this
        between cells, one NF at a time, so that an edit bringing in an NF no chain used
        before does not wait for its parse.

        >>> Lab().parse_nfs() > 10
        True
        """
        return sum(1 for _ in self._parse_each_nf())

    def _parse_each_nf(self):
        """Parse the catalogue's NFs' P4, one per step (a generator)."""
        definition = getattr(self.catalog, "definition", None)
        for name in self.catalog.names() if definition is not None else ():
            try:
                nf = definition(name)
                if getattr(nf, "has_p4", False):
                    nf.program                        # parsed once, kept by the definition
                    yield name
            except Exception:  # noqa: BLE001 - compiling a chain with it will say what
                continue

    def _parse_nfs_between_cells(self) -> None:
        """In a kernel (an event loop runs in this thread, between cells), parse the NFs'
        P4 one at a time while the loop is free (see :meth:`parse_nfs`); a cell arriving
        meanwhile waits for one NF's parse at most.  Outside an event loop: nothing."""
        import asyncio

        if self._parsing_nfs:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._parsing_nfs = True
        steps = self._parse_each_nf()

        def step() -> None:
            if next(steps, None) is not None:
                loop.call_later(0.02, step)

        loop.call_later(0.3, step)

    # -- target side ---------------------------------------------------------------------------
    @property
    def target(self):
        """The switch this Lab runs on (an embedded model until :meth:`connect` says
        otherwise; it starts on first use)."""
        if self._target is None:
            self.connect(self._target_url)
        return self._target

    @property
    def started_target(self):
        """The target if it runs already, else None (reading this starts nothing)."""
        return self._target

    def connect(self, url: str | None = None):
        """Use the target *url* names (``model``, ``model?arch=tna``, ``model://…``,
        ``bmv2``, ``bmv2://…``, ``tofino://…``; with a topology, a network target:
        ``model``, ``mininet``…); the old one is closed.  Nothing is pushed yet.  None:
        the embedded model, of the Lab's architecture (a Tofino model for ``tna``)."""
        if self._net is not None:
            return self._net.connect(self._chains, url)
        from ..targets.connect import open_target

        new = open_target(url if url is not None or self._arch != "tna" else "model?arch=tna")
        if self._target is not None:
            self._target.close()
        self._target, self._target_url = new, url
        self._pushed = None
        self.traces.clear()
        return new

    def push(self) -> int:
        """Push the compiled program and every entry to the target; returns the count of
        entries installed (the generated ones and those the switch needs beyond them:
        :meth:`installed`; with a topology: to every switch of the network)."""
        from ..targets.network.detour import for_targets

        if self._net is not None:
            try:
                counts = self._net.push(self._chains)
            finally:                             # failed: the views say what each switch holds
                self._refresh_views()
            return sum(counts.values())
        self._follow_arch()
        # paths that detour through a server: its port as the target's URL says, if it does
        gen = for_targets(self.generated(self._target_arch()), self.target)
        try:
            n = self.target.push(gen)
        except SfclabError:
            self._after_failure()
            raise
        self._pushed = gen
        self._switch_changed()
        return n

    def _after_failure(self) -> None:
        """After a failed push or update: the target took it back (the Lab's
        :attr:`pushed` stays), unless the switch's state is unknown (nothing is pushed)."""
        session = getattr(self._target, "session", None)
        if session is not None and session.generated is None and self._pushed is not None:
            self._pushed = None
            self._switch_changed()

    def installed(self):
        """What the switch holds beyond the generated entries (flood's entries and
        multicast groups for its ports) and what the last push or update could not do:
        a :class:`sfclab.runtime.installed.Installed` (empty before a push)."""
        from ..runtime.installed import installed_beyond

        session = getattr(self._target, "session", None) if self._pushed is not None else None
        return installed_beyond(session)

    def _switch_changed(self) -> None:
        for view in self._views.values():
            if view.comm is not None:
                view.pushed()

    @property
    def pushed(self) -> Generated | None:
        """The program and entries last pushed to (or updated on) the target, if any."""
        return self._pushed

    def value_kinds(self):
        """How to print the values of the program on the target (or, before a push, of
        the generated one): addresses, MACs, ports (:class:`sfclab.ir.values.ValueKinds`)."""
        from ..ir.values import ValueKinds

        gen = self._pushed
        if gen is None:
            out = self._generate(self._target_arch())
            gen = None if isinstance(out, SfclabError) else out
        if gen is None:
            return ValueKinds.library()
        cached = self._kinds
        if cached is None or cached[0] is not gen:
            self._kinds = cached = (gen, ValueKinds.of_program(gen.program.program))
        return cached[1]

    def update(self, *, allow_reload: bool = False):
        """Bring the target to the current chains: by table entries only when the
        installed program can run them (FlexMesh / P4NFV's pipeline manipulation),
        else a program reload if *allow_reload* (else TargetError says why)."""
        if self._net is not None:
            plan = self._net.update(self._chains, allow_reload=allow_reload)
            self._refresh_views()
            return plan
        from ..codegen import generate
        from ..errors import TargetError

        self._follow_arch()
        if self._pushed is None:
            self.push()
            from ..runtime.session import UpdatePlan

            return UpdatePlan("reload", reason="nothing was pushed before", done=True)
        session = self.target.session
        options, slots = session.options_for_update()
        options = dataclasses.replace(options, bindings=dict(self.bindings))
        try:
            compiled = compile(self._chains, arch=self._target_arch(), catalog=self.catalog,
                               **{**self.options, "pipeline": slots})
            gen = generate(compiled, options=options)
        except SfclabError as e:
            if not allow_reload:
                raise TargetError(f"this change needs a program reload: {e.message}",
                                  hint="%sfc update --reload (lab.update(allow_reload=True)), "
                                       "or %sfc push") from None
            gen = self.generated(self._target_arch())
        try:
            plan = self.target.update(gen, allow_reload=allow_reload)
        except SfclabError:
            self._after_failure()
            raise
        self._pushed = gen
        self._switch_changed()
        return plan

    # -- sending (sfclab.api.labsend) ---------------------------------------------------------------
    @property
    def traces(self):
        """Every packet sent from this Lab, by number (:class:`LabTrace` records): the last
        :attr:`keep_traces` kept whole, every one counted in ``traces.summary`` (per
        service path, egress, drop reason and table); ``traces.note()`` says how many
        older traces were dropped (:class:`~sfclab.targets.traces.store.TraceStore`)."""
        return self._sender.traces

    @property
    def keep_traces(self) -> int:
        """How many of the last packets' traces are kept whole (default 2,000)."""
        return self._sender.traces.keep

    @keep_traces.setter
    def keep_traces(self, keep: int) -> None:
        self._sender.traces.keep = keep

    def send(self, chain: str, n: int = 1, *, port: int | None = None,
             seed: int | None = None, progress: bool | None = None) -> SendResult:
        """Send *n* packets of *chain*'s class through the target, chosen so they cover
        every service path of the class the embedded model finds (branch outcomes,
        loop counts); returns the results as a :class:`SendResult` (their traces are
        added to :attr:`traces`).  With a topology: from the chain's ingress host to its
        egress host (:meth:`send_between`).

        A send taking more than a second shows a progress bar (*progress*: True at
        once, False never); an interrupt stops it between two packets, raising
        :class:`~sfclab.targets.traffic.sending.SendInterrupted` (whose ``result`` is what was
        sent, recorded in :attr:`traces` as any other packet)."""
        if self._net is not None:
            return self.send_between(None, None, self._chain_name(chain), n, seed=seed)
        from ..targets.traffic.sending import SendInterrupted
        from .drift import drift

        if self._pushed is None:
            self.push()

        name = self._chain_name(chain)
        gen = self._pushed if self._pushed.arch == "v1model" else self.generated("v1model")
        if name not in gen.compiled.chains:
            raise SfclabError(f"chain {name!r} is not on the switch yet",
                              hint="bring the switch up to date: %sfc update (lab.update())")
        said = drift(self)
        try:
            out = self._sender.send_class(self.target, gen, self._oracle_for(gen), name, n,
                                          port=port, seed=seed, progress=progress)
        except SendInterrupted as e:
            e.result.drift = said
            raise
        out.drift = said
        self._packets_sent()
        return out

    def _packets_sent(self) -> None:
        """Packets ran: the views showing what they did (the placement tab) refresh."""
        for view in self._views.values():
            if view.comm is not None and hasattr(view, "sent"):
                view.sent()

    def ran_paths(self, last: int = 500):
        """What the last *last* packets did on a TNA model, per service path (their
        recirculations and the pipelets they ran in, beside the placement's plan):
        ``{path: RanPath}`` (:mod:`sfclab.targets.model.tna.route`); empty before any
        packet ran on one."""
        from ..targets.model.tna.route import ran_by_path

        kept = list(self.traces)[-last:]
        return ran_by_path((r.path, r.trace) for r in kept if getattr(r, "path", None))

    def traffic(self, chain: str, *, pause: float = 0.002):
        """``with lab.traffic(chain) as t:``: *chain*'s packets keep going through the
        target while the block runs (a change, an update), one by one, and ``t.sent``
        says what each did (:class:`~sfclab.api.traffic.Traffic`: on a thread, or where
        no thread starts, as in the browser, between the block's writes to the switches)."""
        from .traffic import Traffic

        return Traffic(self, chain, pause=pause)

    def _oracle_for(self, gen: Generated):
        from ..targets.traffic.coverage import Oracle

        if self._oracle is None or self._oracle.generated is not gen:
            self._close_oracle()
            self._oracle = Oracle(gen)
        return self._oracle

    def _close_oracle(self) -> None:
        if self._oracle is not None:
            self._oracle.close()
            self._oracle = None

    def send_packet(self, packet, *, port: int = 1, label: str = ""):
        """Send one packet (scapy or bytes) in on *port*; returns the target's result."""
        if self._pushed is None:
            self.push()
        out = self._sender.send_one(self.target, port, packet, label)
        self._packets_sent()
        return out

    def send_pcap(self, path: str | Path, *, port: int = 1, label: str | None = None,
                  progress: bool | None = None) -> SendResult:
        """Send every packet of a pcap (or pcapng) file in on *port*, read as it goes;
        returns a :class:`SendResult` (traces in :attr:`traces`, labelled *label*,
        default the file's name).  Progress and interrupts as for :meth:`send`."""
        from .labsend import pcap_frames

        if self._net is not None:
            raise SfclabError("a pcap file is sent into one switch; this lab runs its chains "
                              "on a network", hint="send from a host: lab.send_between(src, "
                              "dst, packet=…), or %sfc topology off")
        frames = pcap_frames(path)         # a bad file says so before anything is pushed
        if self._pushed is None:
            self.push()
        out = self._sender.send_frames(self.target, ((port, f) for f in frames),
                                       label if label is not None else Path(path).name,
                                       progress=progress)
        self._packets_sent()
        return out

    def tables(self, switch: str | None = None) -> list[TableUse]:
        """Every table of the target: entries / size, and the hits and misses of the
        packets this Lab sent (with a topology: of *switch*)."""
        if self._net is not None:
            return self._pushing(self._net, self._net.tables, self._chains, switch)
        if switch is not None:
            raise SfclabError(f"this lab runs on one switch, not a network: no switch "
                              f"{switch!r} to choose", hint="%sfc tables (no switch)")
        hits, misses = self.traces.summary.hits, self.traces.summary.misses   # every packet
        pipes: dict[str, tuple[int, ...]] = {}
        sw = getattr(getattr(self.target, "server", None), "switch", None)
        for pipe, names in (sw.pipe_tables() if hasattr(sw, "pipe_tables") else {}).items():
            for n in names:                                  # a TNA model: its pipes
                pipes[n] = pipes.get(n, ()) + (pipe,)
        return [TableUse(o.table, o.entries, o.size, hits.get(o.table, 0),
                         misses.get(o.table, 0), pipes.get(o.table, ()))
                for o in self.target.occupancy()]

    def counters(self) -> dict[str, list[tuple[int, int, int]]]:
        """Counters with non-zero cells: name -> [(index, packets, bytes)] (the model)."""
        if getattr(self.target, "kind", "") != "model" or not hasattr(self.target, "switch"):
            from ..errors import TargetError

            raise TargetError("counters are read from the embedded model's switch; "
                              f"this lab's target is {self.target!r}",
                              hint="use %sfc tables for table occupancy on any target")
        sw = self.target.switch
        out = {}
        for name, ext in sorted(sw.externs.items()):
            arrays = getattr(ext.state, "pipes", None) or [ext.state]    # TNA: one per pipe
            if type(arrays[0]).__name__ != "CounterArray":
                continue
            cells = [(i, pk, by) for i, (pk, by) in enumerate(sw.read_counter(name)) if pk or by]
            if cells:
                out[name] = cells
        return out

    def close(self) -> None:
        """Stop the target (the embedded model's server, or the network)."""
        self._close_oracle()
        if self._net is not None:
            self._net.close()
        if self._target is not None:
            self._target.close()
            self._target = None
        if self._pushed is not None or self._net is not None:   # nothing runs: views say so
            self._pushed = None
            self._switch_changed()
            self._refresh_views()

    def _target_arch(self) -> str:
        """The architecture the target runs (the default embedded model: the Lab's)."""
        if self._target is None:
            return self._arch if self._target_url is None else "v1model"
        return getattr(self._target, "arch", "v1model")

    def _follow_arch(self) -> None:
        """The default embedded model runs the Lab's architecture: after ``lab.arch = …``
        the next push starts one of the new architecture (what the old one held is gone)."""
        t = self._target
        if (t is not None and self._target_url is None and getattr(t, "kind", "") == "model"
                and getattr(t, "arch", self._arch) != self._arch):
            self.connect(None)

    def _chain_name(self, name: str) -> str:
        if name in self._chains:
            return name
        raise SfclabError(f"no chain {name!r} in the lab",
                         hint=did_you_mean(name, self._chains.names())
                         or f"chains: {', '.join(self._chains.names()) or 'none'}")

    # -- internals -----------------------------------------------------------------------------
    def __repr__(self) -> str:
        names = ", ".join(self._chains.names()[:6]) + (", …" if len(self._chains) > 6 else "")
        return (f"<Lab {self._arch}: {len(self._chains)} chains"
                f"{f' ({names})' if names else ''}, {len(self._compiled.paths)} service paths>")

    def _chainset(self, chains: str | Chain | ChainSet | Iterable[Chain],
                  source: str) -> ChainSet:
        if isinstance(chains, (str, bytes)):
            return parse(chains, source=source, catalog=self.catalog)
        if isinstance(chains, Chain):
            return ChainSet.of([chains])
        if isinstance(chains, ChainSet):
            return chains
        return ChainSet.of(chains)

    def _check_weights(self, new: ChainSet, given: Any, source: str) -> None:
        """Refuse *new* chains whose weights take the Lab's total past 1 (the chains they
        replace left out)."""
        others = ChainSet({n: c for n, c in self._chains.chains.items() if n not in new})
        weighted = [(c.name, c.weight) for c in (*others, *new) if c.weight is not None]
        total = sum(w for _, w in weighted)
        if total <= 1 + 1e-9:
            return
        if isinstance(given, (str, bytes)):       # the parser locates the weight at fault
            parse(given, source=source, catalog=self.catalog, into=others)
        terms = " + ".join(f"{w:g} ({n})" for n, w in weighted)
        raise ChainError(f"the chain weights add up to {total:g}, more than all the traffic: "
                         f"{terms}", source=source,
                         hint="a weight is a share of all traffic, so the weights add up to "
                              "at most 1: lower some, or remove a chain (lab.remove)")

    def _commit(self, reason: str, chains: ChainSet, arch: str) -> None:
        compiled = self._compile(chains, arch)
        self._apply(reason, chains, arch, compiled)

    def _apply(self, reason: str, chains: ChainSet, arch: str, compiled: CompiledChains, *,
               force: bool = False) -> None:
        before, previous = self._chains, self._compiled
        self._chains, self._arch, self._compiled = chains, arch, compiled
        if compiled is previous and not force:
            return                               # same chains, same arch: nothing to show
        old = {c.name: c.signature() for c in before}
        change = LabChange(
            reason,
            added=tuple(n for n in chains.names() if n not in old),
            replaced=tuple(c.name for c in chains if c.name in old
                           and c.signature() != old[c.name]),
            removed=tuple(n for n in old if n not in chains),
            previous=previous, compiled=compiled)
        self._refresh_views()
        for fn in list(self._callbacks):
            fn(change)

    def _refresh_views(self) -> None:
        for key, view in list(self._views.items()):
            if view.comm is None:                # closed by the user
                del self._views[key]
                continue
            view.update(self._compiled, self._generate,   # code: when a code tab shows
                        network=self.network_state)

    def _compile(self, chains: ChainSet, arch: str, *, catalog: NFCatalog | None = None,
                 version: int | None = None) -> CompiledChains:
        version = self._catalog_version if version is None else version
        key = (arch, version, tuple(c.signature() for c in chains))
        hit = self._compiled_cache.get(key)
        if hit is not None:
            self._compiled_cache.move_to_end(key)
            return hit
        out = compile(chains, arch=arch, catalog=catalog or self.catalog, **self.options)
        _remember(self._compiled_cache, key, out)
        return out

    def _generate(self, arch: str) -> Generated | SfclabError:
        key = (id(self._compiled), arch, tuple(sorted(self.bindings.items())))
        hit = self._generated_cache.get(key)
        if hit is not None and hit[0] is self._compiled:
            self._generated_cache.move_to_end(key)
            return hit[1]
        from ..codegen import generate

        from ..codegen import CodegenOptions

        try:
            out: Generated | SfclabError = generate(
                self._compiled, arch=arch, options=CodegenOptions(bindings=dict(self.bindings)))
        except SfclabError as e:
            out = e
        _remember(self._generated_cache, key, (self._compiled, out))
        return out


def _remember(cache: OrderedDict, key: Hashable, value: Any) -> None:
    cache[key] = value
    cache.move_to_end(key)
    while len(cache) > CACHE_SIZE:
        cache.popitem(last=False)


def _control_name(source: str) -> str | None:
    """The name of the first ``control`` in P4 *source* (a cheap look, no parse)."""
    import re

    m = re.search(r"\bcontrol\s+([A-Za-z_]\w*)", source)
    return m.group(1) if m else None
