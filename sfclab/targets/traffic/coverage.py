"""Class traffic that covers every service path: candidates checked on the embedded model.

Which service path a packet of a class takes depends on the NFs: a branch on
``firewall.verdict`` follows the firewall's ACL entries, a multibranch on the
ingress port follows the port.  :func:`class_traffic` builds candidate packets
of the class (:func:`sfclab.runtime.traffic.candidates`: every region of the
solved classifier, free fields drawn from a *dictionary* of the key values of
the entries installed in the chain's NF tables and of the values its branches
test, and at random), runs each through an :class:`Oracle` — the embedded model
with the same program and entries — and picks packets round-robin over the
paths they took.  Paths no candidate reached are reported with the reason when
it can be told (``web/1 (firewall.verdict == 1): no packet found; the
firewall's entries never set verdict 1``).

>>> import sfclab
>>> from sfclab.codegen import generate
>>> gen = generate(sfclab.compile(open("examples/web.sfc").read()))
>>> with Oracle(gen) as oracle:
...     t = class_traffic(gen, "web", 4, oracle=oracle)
>>> t.covered, t.missed
(('web/0', 'web/1'), {})
>>> [t.expected[i] for i in range(4)]
['web/0', 'web/1', 'web/0', 'web/1']
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ...codegen import Generated
from ...codegen.entries import Exact, Lpm, Range, Ternary
from ...errors import SfclabError, TargetError
from ...ir.classifier import format_value
from ...ir.fields import FIELDS
from ...ir.model import Chain, ServicePath
from ...runtime.traffic import ClassPacket, ClassUnreachable, candidates, contradicted
from .nf_values import metadata_values

__all__ = ["Oracle", "ClassTraffic", "class_traffic", "all_class_traffic", "entry_dictionary",
           "address_warnings"]


class Oracle:
    """The embedded model running *gen* (v1model), on the side: which service path
    a packet takes.  Its state (registers, counters) grows with what it is sent.
    *port*: every packet arrives on it, whatever port its candidate names (a
    network chain's packets all enter where the chain does)."""

    def __init__(self, gen: Generated, *, port: int | None = None) -> None:
        from ..model import ModelTarget

        if gen.arch != "v1model":
            raise TargetError(f"the oracle is the embedded model, which runs v1model, "
                              f"not {gen.arch}", hint="generate the same chains for v1model for the oracle")
        self.generated = gen
        self.port = port
        #: chain -> path -> why no candidate reached it (not searched for again).
        self.missed: dict[str, dict[str, str]] = {}
        self._nfs = {p.id: p.nfs for p in gen.compiled.paths}
        self._ends = {p.id: p.terminal for p in gen.compiled.paths}
        self.target = ModelTarget()
        try:
            self.target.push(gen)
        except BaseException:
            self.target.close()
            raise

    def path(self, cp: ClassPacket) -> tuple[str | None, bool]:
        """The service path (``web/1``) the model runs *cp* on (None: unclassified), and
        whether the packet ran the whole path: no NF dropped it part-way, nor at the
        end of a path that ends in ``output`` (l3fwd without a route for it)."""
        r = self.target.send(cp.port if self.port is None else self.port, cp.packet)
        took = self.target.session.path_of(r.trace)
        whole = self._nfs.get(took) == tuple(r.trace.nfs())
        return took, whole and (self._ends.get(took) != "output" or bool(r.outputs))

    def send(self, packet, port: int | None = None):
        """The model's result for *packet* (on *port*, else the oracle's port)."""
        return self.target.send(port if port is not None else self.port, packet)

    def close(self) -> None:
        self.target.close()

    def __enter__(self) -> Oracle:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


@dataclass(frozen=True)
class ClassTraffic:
    """Packets of one class and the service paths the oracle saw them take."""

    chain: str
    packets: tuple[ClassPacket, ...]
    #: The path the oracle ran each packet on.
    expected: tuple[str, ...]
    #: Every service path of the chain, in order.
    paths: tuple[str, ...]
    #: Path id -> why no packet of the class reaches it.
    missed: Mapping[str, str] = field(default_factory=dict)
    #: Path id -> the path with the branch decisions it takes (``web/1 (firewall.verdict == 1)``).
    labels: Mapping[str, str] = field(default_factory=dict)
    #: How many candidates the oracle ran.
    tried: int = 0
    #: Candidates the oracle did not put on this chain (none when the classes are right).
    strays: tuple[tuple[ClassPacket, str | None], ...] = ()
    #: Where the chain's match contradicts the sender's own addresses (the packets
    #: follow the match): a line each (:func:`address_warnings`).
    warnings: tuple[str, ...] = ()

    @property
    def covered(self) -> tuple[str, ...]:
        """The paths some packet takes, in path order."""
        return tuple(p for p in self.paths if p in self.expected)

    def text(self) -> str:
        """``web: 4 packets cover 2 of 3 service paths (web/0 ×2, web/1 ×2)`` and a line
        per missed path."""
        counts = ", ".join(f"{p} ×{self.expected.count(p)}" for p in self.covered)
        head = (f"{self.chain}: {len(self.packets)} packet{'s' * (len(self.packets) != 1)} cover "
                f"{len(self.covered)} of {len(self.paths)} service path"
                f"{'s' * (len(self.paths) != 1)}" + (f" ({counts})" if counts else ""))
        return "\n".join([head, *self.missed_lines(), *(f"  warning: {w}" for w in self.warnings)])

    def missed_lines(self) -> list[str]:
        """A line per missed path with the reason (one line when the class is empty)."""
        if not self.packets and len(set(self.missed.values())) == 1:
            return [f"  {next(iter(self.missed.values()))}"]    # "chain 'x' gets no packets: …"
        return [f"  {self.labels.get(p, p)}: {why}" for p, why in self.missed.items()]


# --- the dictionary: values the entries and branches care about ---------------------------------

#: NF-local key names that hold a header field (the library's NFs copy the
#: transport ports of TCP or UDP into locals before their tables).
_LOCAL_KEYS = {"l4_sport": ("tcp.sport", "udp.sport"), "l4_dport": ("tcp.dport", "udp.dport"),
               "vlan_id": ("vlan.vid",), "meta.sfc.ingress_port": ("std.ingress_port",),
               "standard_metadata.ingress_port": ("std.ingress_port",)}
_BY_P4 = {f.p4: (name,) for name, f in FIELDS.items()}


def _key_fields(key: str) -> tuple[str, ...]:
    return _BY_P4.get(key) or _LOCAL_KEYS.get(key) or _LOCAL_KEYS.get(key.rpartition(".")[2], ())


def _match_values(m) -> list[int]:
    if isinstance(m, Exact):
        return [m.value]
    if isinstance(m, Lpm):
        return [m.value, m.value | 1]
    if isinstance(m, Ternary):
        return [m.value]
    if isinstance(m, Range):
        return [m.low, m.high, (m.low + m.high) // 2]
    return []


def _nf_of_table(gen: Generated) -> dict[str, str]:
    """Slot instance (``slot6_firewall``) -> NF type."""
    return {s.instance: s.nf for s in gen.composition.slots}


def entry_dictionary(gen: Generated, chain: Chain) -> dict[str, list[int]]:
    """Field -> interesting values for *chain*'s class: the keys of the entries
    installed in the tables of its NFs, and the values its branches test on
    standard fields (the ingress port, with run-time names bound)."""
    nfs, slots = set(chain.nf_types()), _nf_of_table(gen)
    out: dict[str, set[int]] = {}
    for e in gen.entries:
        parts = e.table.split(".")
        if len(parts) < 3 or slots.get(parts[-2]) not in nfs:
            continue
        for key, m in e.match:
            for f in _key_fields(key):
                out.setdefault(f, set()).update(v for v in _match_values(m)
                                                if 0 <= v < 1 << FIELDS[f].width)
    bindings = gen.composition.options.bindings
    for _, _, d in chain.graph.edges(data=True):
        cond = d.get("cond")
        if cond is None or cond.nf or cond.field not in FIELDS:
            continue
        values = [*d.get("cases", ()), cond.value]
        for v in values:
            v = bindings.get(v) if isinstance(v, str) else v
            if isinstance(v, int):
                out.setdefault(cond.field, set()).update(
                    x for x in (v - 1, v, v + 1) if 0 <= x < 1 << FIELDS[cond.field].width)
    return {f: sorted(vs) for f, vs in out.items()}


# --- coverage ---------------------------------------------------------------------------------

def _label(p: ServicePath) -> str:
    when = p.describe().partition("  when ")[2]
    return f"{p.id} ({when})" if when else p.id


def class_traffic(gen: Generated, chain: str | Chain, n: int, *, seed: int = 0,
                  oracle: Oracle | None = None, budget: int | None = None,
                  own: Mapping[str, int] | None = None, sender: str = "",
                  receiver: str = "") -> ClassTraffic:
    """*n* packets of *chain*'s class that cover as many of its service paths as the
    oracle finds (round-robin over them), trying at most *budget* candidates
    (default: enough for a few per path).  Raises ``ClassUnreachable`` when no
    packet is in the class.

    *own*: the addresses every packet carries wherever the chain's match allows
    (:func:`~sfclab.runtime.traffic.host_fields`: traffic from host *sender* to host
    *receiver*); the result's ``warnings`` say where the match makes the packets carry
    others."""
    compiled = gen.compiled
    c = compiled.chains[chain] if isinstance(chain, str) else chain
    paths = [p for p in compiled.paths if p.chain == c.name]
    ids = tuple(p.id for p in paths)
    made = oracle is None
    oracle = oracle or Oracle(gen)
    try:
        return _cover(gen, c, n, ids, paths, seed, oracle,
                      budget if budget is not None else max(4 * n, 48 + 24 * len(ids)),
                      dict(own or {}), (sender, receiver))
    finally:
        if made:
            oracle.close()


def _cover(gen: Generated, c: Chain, n: int, ids: tuple[str, ...], paths: list[ServicePath],
           seed: int, oracle: Oracle, budget: int, own: dict[str, int],
           ends: tuple[str, str]) -> ClassTraffic:
    found: dict[str, list[tuple[bool, int, int, ClassPacket]]] = {p: [] for p in ids}
    key = (c.name, tuple(sorted(own.items())))
    known = oracle.missed.get(key, {})         # missed before: not worth the budget again
    want = max(1, math.ceil(n / max(1, len(ids) - len(known))))
    strays, tried = [], 0
    stream = candidates(c, gen.compiled.chains, seed=seed, own=own,
                        parsed=gen.composition.headers, dictionary=entry_dictionary(gen, c))
    for cp in stream:
        if tried >= budget or (tried >= n and all(     # enough packets that run it whole
                sum(not x[0] for x in v) >= want for p, v in found.items() if p not in known)):
            break
        tried += 1
        took, whole = oracle.path(cp)
        if took in found:
            found[took].append((not whole, cp.region, tried, cp))
        else:
            strays.append((cp, took))
    picked: list[tuple[ClassPacket, str]] = []
    # a path's packets: those that run it whole first, then the simplest headers, then the
    # earliest found (the defaults)
    ranked = {p: sorted(v, key=lambda x: x[:3]) for p, v in found.items() if v}
    for k in range(n):                      # round-robin over the paths found
        if not ranked:
            break
        p = list(ranked)[k % len(ranked)]
        pool = ranked[p]
        picked.append((pool[(k // len(ranked)) % len(pool)][3], p))
    missed = {sp.id: known.get(sp.id) or why_missed(gen, c, sp, tried)
              for sp in paths if not found[sp.id]}
    oracle.missed[key] = missed
    packets = tuple(cp for cp, _ in picked)
    return ClassTraffic(c.name, packets, tuple(p for _, p in picked),
                        ids, missed, {sp.id: _label(sp) for sp in paths}, tried, tuple(strays),
                        address_warnings(c, packets, own, *ends))


#: How the fields of a host's addresses are named in a warning.
_ADDRESS = {"eth.src": "MAC", "ipv4.src": "address", "eth.dst": "MAC", "ipv4.dst": "address"}


def address_warnings(chain: Chain, packets: Iterable[ClassPacket], own: Mapping[str, int],
                     sender: str = "", receiver: str = "") -> tuple[str, ...]:
    """A line per field of *own* (the sender's and receiver's addresses) that some of
    *packets* carry with another value, because *chain*'s match leaves no room for it
    (the packets follow the match)::

        chain 'guard' matches ipv4.src == 192.168.0.0/16: its packets from alice cannot
        carry alice's address 10.20.0.5 (ipv4.src); they carry one the match allows
    """
    seen: dict[str, int] = {}
    for cp in packets:
        for f, (want, _) in contradicted(cp.packet, cp.port, own).items():
            seen.setdefault(f, want)
    out = []
    who = sender or "the sender"
    for f, want in seen.items():
        whose = (sender if f.endswith("src") else receiver) or \
            ("the sender" if f.endswith("src") else "the receiver")
        what = f"{whose}'s {_ADDRESS.get(f, 'value')} {format_value(FIELDS[f], want)} ({f})"
        out.append(f"chain {chain.name!r} matches {chain.match}: its packets from {who} cannot "
                   f"carry {what}; they carry one the match allows")
    return tuple(out)


def all_class_traffic(gen: Generated, n: int, *, seed: int = 0,
                      chains: Iterable[str] | None = None) -> dict[str, ClassTraffic]:
    """:func:`class_traffic` for every chain (or those named), with one oracle; a
    chain no packet reaches gets no packets and every path missed, with the reason."""
    compiled = gen.compiled
    names = list(chains) if chains is not None else compiled.chains.names()
    out = {}
    with Oracle(gen) as oracle:
        for name in names:
            try:
                out[name] = class_traffic(gen, name, n, seed=seed, oracle=oracle)
            except ClassUnreachable as e:
                paths = [p for p in compiled.paths if p.chain == name]
                out[name] = ClassTraffic(name, (), (), tuple(p.id for p in paths),
                                         {p.id: e.message for p in paths},
                                         {p.id: _label(p) for p in paths})
    return out


def why_missed(gen: Generated, chain: Chain, path: ServicePath, tried: int) -> str:
    """Why no candidate reached *path*: a branch whose NF cannot set the value it
    needs (from the NF's P4 and its installed entries), or what is known.

    A branch tests the value of the NF its condition names (a saved value when
    that NF ran before the branching one: :mod:`sfclab.passes.fsm`)."""
    base = f"no packet found ({tried} tried)"
    g = chain.graph
    for d in path.decisions:
        cond = d.cond
        if cond is None or not cond.nf or cond.name in ("global_counter", "counter"):
            continue
        at = g.nodes[cond.nf]["nf"] if cond.nf in g else cond.nf
        try:
            values = metadata_values(gen, at)
        except SfclabError:
            continue
        if values is None:
            return (f"{base}; {cond.field} is computed by {at} from its state, a "
                    "meter or a hash, so it depends on earlier packets")
        if not any(_decides(d, v) for v in values):
            need = str(cond) if d.kind in ("then", "loop") else (
                f"{cond.field} {_INVERSE[cond.op]} {cond.value}")
            if d.kind == "case":
                need = f"{cond.field} in {{{', '.join(map(str, d.cases))}}}"
            got = ", ".join(map(str, sorted(values))) or "nothing"
            return f"{base}; the {at}'s entries never make {need} (it sets {got})"
    return base


_INVERSE = {"==": "!=", "!=": "==", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}


def _decides(d, v: int) -> bool:
    """Whether metadata value *v* takes decision *d*."""
    if d.kind == "case":
        return v in d.cases
    if not isinstance(d.cond.value, int):
        return True
    holds = d.cond.holds(v)
    return holds if d.kind in ("then", "loop") else not holds
