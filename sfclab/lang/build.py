"""Declarations to IR: resolve names, build each chain's graph, check it.

Every error points at the place in the text that caused it.
"""

from __future__ import annotations

import ipaddress
import re

import networkx as nx

from ..errors import CatalogError, ChainValidationError, did_you_mean
from ..ir.graphs import ancestors as upstream
from ..ir.graphs import edges as _edges
from ..ir.classifier import Classifier, FieldMatch
from ..ir.fields import ALIASES, FIELDS, resolve_field
from ..ir.model import Chain, ChainSet, Condition
from ..ir.topology import split_endpoint
from ..ir.validate import validate
from ..nfinfo import ENDPOINTS, GLOBAL_FIELD_ALIASES, NFCatalog
from .ast import ChainDecl, Cond, FieldRef, IfElse, LoopBack, MatchTerm, MultiBranch, NFRef, Pos, Stmt, span

__all__ = ["build_chains", "build_chain", "MAX_LOOP", "loop_runs"]

#: The loop counter is 8 bits wide: a loop runs at most this many times.
MAX_LOOP = 255
_NEG = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}
_SERIAL = re.compile(r"^(.*)#([0-9]+)$")


def _bits(n: int) -> str:
    return f"{n} bit" if n == 1 else f"{n} bits"


def loop_runs(cond: Condition) -> int | None:
    """How many times a loop body runs when it repeats while *cond* holds on the
    counter (which counts the runs so far); None if it never stops.

    >>> loop_runs(Condition("sr_encap.global_counter", "<", 10))
    10
    >>> loop_runs(Condition("x.global_counter", ">", 0)) is None
    True
    """
    for k in range(1, MAX_LOOP + 1):
        if not cond.holds(k):
            return k
    return None


class _Builder:
    def __init__(self, decl: ChainDecl, catalog: NFCatalog, text: str, source: str) -> None:
        self.decl, self.catalog, self.text, self.source = decl, catalog, text, source
        self.g = nx.DiGraph()
        self.ids: dict[str, tuple[str, str, str | None]] = {}
        self.pending: list[tuple[str, IfElse | MultiBranch | LoopBack, Pos]] = []

    def err(self, msg: str, pos: Pos, hint: str = "") -> ChainValidationError:
        return ChainValidationError(msg, line=pos.line, column=pos.column, source=self.source,
                                    text=self.text, hint=hint, width=pos.width)

    # -- nodes ------------------------------------------------------------------
    def node(self, ref: NFRef) -> str:
        low = ref.name.lower()
        known = self.ids.get(ref.name)
        if known is not None:
            nid, kind, nf = known
        elif low in ENDPOINTS:
            nid, kind, nf = low, "endpoint", None
        else:
            m = _SERIAL.match(ref.name)
            base, serial = (m.group(1), int(m.group(2))) if m else (ref.name, 1)
            try:
                info = self.catalog.resolve(base)
            except CatalogError as e:
                raise self.err(f"unknown NF {base!r}", ref.pos, e.hint) from None
            nid, kind, nf = (info.name if serial == 1 else f"{info.name}#{serial}"), "nf", info.name
            self.ids[ref.name] = (nid, kind, nf)
        if nid not in self.g:
            self.g.add_node(nid, kind=kind, nf=nf, label=ref.name, line=ref.pos.line,
                            column=ref.pos.column, **self.decl.attrs.get(ref.name, {}))
        return nid

    def edge(self, u: str, v: str, pos: Pos, kind: str = "seq", **attrs) -> None:
        if u in ("output", "drop", "cpu"):
            raise self.err(f"{u!r} is an end point: nothing can follow it", pos,
                           f"remove `{u} => …`")
        if v == "input":
            raise self.err("nothing can lead into 'input'", pos, "`input` starts a chain")
        for n in (u, v):
            if n not in self.g:
                self.g.add_node(n, kind="endpoint", nf=None, label=n, line=0, column=0)
        old = self.g.get_edge_data(u, v)
        if old is not None:
            if old["kind"] == kind == "seq":
                return
            raise self.err(f"{u} => {v} is written twice with different meanings", pos,
                           "keep one of the two statements")
        self.g.add_edge(u, v, kind=kind, share=attrs.pop("share", 1.0), line=pos.line,
                        column=pos.column, **attrs)

    # -- statements -----------------------------------------------------------------
    def stmt(self, s: Stmt) -> None:
        if len(s.refs) == 1 and s.branch is None:
            if self.decl.style in ("short", "json"):
                self.node(s.refs[0])
                return
            raise self.err(f"{s.refs[0].name!r} alone is not a statement", s.pos,
                           f"connect it: `{s.refs[0].name} => output;`")
        ids = [self.node(r) for r in s.refs]
        for (u, v), r in zip(zip(ids, ids[1:]), s.refs[1:]):
            self.edge(u, v, r.pos)
        if s.branch is not None:
            self.pending.append((ids[-1], s.branch, s.refs[-1].pos))

    def field(self, src: str, ref: FieldRef) -> tuple[str, int]:
        """Resolve a condition's field to ``(qualified name, width)``."""
        name = GLOBAL_FIELD_ALIASES.get(ref.name, ref.name)
        std = ref.nf is not None and ref.nf.lower() == "std"
        if std or (ref.nf is None and ref.name.lower() in ALIASES):
            hf = resolve_field(f"std.{ref.name}" if std else ref.name)
            if hf is None or not hf.name.startswith("std."):
                raise self.err(f"unknown standard field {ref}", ref.name_pos,
                               did_you_mean(f"std.{ref.name}", [f for f in FIELDS
                                                                if f.startswith("std.")])
                               or "try std.ingress_port")
            return hf.name, hf.width
        if ref.nf is not None:
            owner = self.node(NFRef(ref.nf, ref.nf_pos)) if ref.nf.lower() != "self" else src
            if self.g._node[owner]["kind"] != "nf":
                raise self.err(f"{ref.nf!r} is an end point and has no fields", ref.nf_pos,
                               f"test a field of an NF, e.g. {src}.global_metadata")
            info = self.catalog.resolve(self.g._node[owner]["nf"])
            width = info.field_width(name)
            if width is None:
                raise self.err(f"NF {owner!r} does not set a field {ref.name!r}", ref.name_pos,
                               did_you_mean(ref.name, info.field_names())
                               or f"{owner} sets: {', '.join(info.field_names())}")
            return f"{owner}.{name}", width
        # A bare name: the source NF's, or one an NF before it sets.
        candidates = [src, *sorted(upstream(self.g, src))]
        for owner in candidates:
            if self.g._node[owner]["kind"] != "nf":
                continue
            width = self.catalog.resolve(self.g._node[owner]["nf"]).field_width(name)
            if width is not None:
                return f"{owner}.{name}", width
        known = [f for o in candidates if self.g._node[o]["kind"] == "nf"
                 for f in self.catalog.resolve(self.g._node[o]["nf"]).field_names()]
        raise self.err(f"no NF up to {src!r} sets a field {ref.name!r}", ref.name_pos,
                       did_you_mean(ref.name, known) or "name it as NF.field, e.g. "
                       f"{src}.global_metadata")

    def condition(self, src: str, c: Cond) -> Condition:
        fname, width = self.field(src, c.field)
        if isinstance(c.value, int) and c.value >= 1 << width:
            raise self.err(f"{c.value} does not fit in {fname} ({_bits(width)})", c.value_pos,
                           f"the largest value is {(1 << width) - 1}")
        return Condition(fname, c.op, c.value)

    def branch(self, src: str, b: IfElse | MultiBranch | LoopBack, pos: Pos) -> None:
        if isinstance(b, MultiBranch):
            return self.multibranch(src, b)
        if isinstance(b, LoopBack):
            return self.loopback(src, b)
        then = src if b.then.name == "self" else self.node(b.then)
        other = src if b.other.name == "self" else self.node(b.other)
        cond = self.condition(src, b.cond)
        both = span(b.then.pos, b.other.pos)
        if then == other:
            raise self.err(f"both branches go to {then!r}", both, f"write `{src} => {then};`")
        before = upstream(self.g, src) | {src}
        is_loop = cond.name == "global_counter" and (then in before or other in before)
        if not is_loop:
            for v, kind in ((then, "then"), (other, "else")):
                if v in before and cond.name != "global_counter":
                    raise self.err(f"a loop from {src!r} must test {src}.global_counter, "
                                   f"not {cond.field}", b.cond.field.pos,
                                   f"`{src} => (self : … ? {src}.global_counter < 3)`")
                if v in before:
                    raise self.err(f"branch from {src!r} back to {v!r} makes a cycle", b.pos,
                                   f"loops test the counter: `{src} => (self : ... ? "
                                   f"{src}.global_counter < 3)`")
                self.edge(src, v, b.pos, kind, cond=cond, share=0.5)
            return
        if then in before and other in before:
            raise self.err("a loop needs a way out: both branches go back", both,
                           f"leave the loop on one side: `{src} => (self : output ? "
                           f"{src}.global_counter < 3)`")
        if cond.nf != src:
            raise self.err(f"a loop from {src!r} must test {src}.global_counter",
                           b.cond.field.pos, f"`{src} => (self : … ? {src}.global_counter < 3)`")
        back, out = (then, other) if then in before else (other, then)
        if back == other:  # loop while the condition fails
            cond = Condition(cond.field, _NEG[cond.op], cond.value)
        if not isinstance(cond.value, int):
            raise self.err("a loop bound must be a number", b.cond.value_pos,
                           f"e.g. `{src}.global_counter < 3`")
        self.add_loop(src, back, out, cond, b.cond.pos)

    def add_loop(self, src: str, back: str, out: str | None, cond: Condition, pos: Pos) -> None:
        runs = loop_runs(cond)
        if runs is None:
            raise self.err(f"the loop at {src!r} never ends: {cond} holds for every count",
                           pos, f"the counter counts runs upwards; bound it: "
                           f"{cond.field} < 3")
        if runs == 1:
            raise self.err(f"the loop at {src!r} never repeats: {cond} fails after the first run",
                           pos, f"to run it n times write {cond.field} < n")
        self.edge(src, back, pos, "loop", cond=cond, bound=runs)
        if out is not None:
            self.edge(src, out, pos, "exit", cond=cond)

    def loopback(self, src: str, b: LoopBack) -> None:
        if b.bound is None:
            raise self.err(f"the loop at {src!r} has no bound", b.pos,
                           f"say how many runs in all: `{self.g._node[src]['label']} loop 3`")
        if not 2 <= b.bound <= MAX_LOOP:
            runs = "only once" if b.bound == 1 else f"{b.bound} times in all"
            raise self.err(f"the loop at {src!r} runs {runs}: a loop runs 2 to {MAX_LOOP} "
                           "times", b.bound_pos,
                           "the loop counter is 8 bits wide" if b.bound > MAX_LOOP
                           else f"`{self.g._node[src]['label']} loop 2` runs it twice; "
                           "drop `loop` to run it once")
        starts = [n for n in self.first_nodes() if n != src] or [src]
        cond = Condition(f"{src}.global_counter", "<", b.bound)
        self.add_loop(src, starts[0], None, cond, b.pos)

    def first_nodes(self) -> list[str]:
        if self.decl.first:
            return [self.node(self.decl.first[0])]
        dag = nx.DiGraph((u, v) for u, v, k in self.g.edges(data="kind") if k != "loop")
        dag.add_nodes_from(self.g)
        nodes = self.g.nodes
        return [n for n in nx.topological_sort(dag) if nodes[n]["kind"] == "nf"
                and all(nodes[p]["kind"] != "nf" for p in dag._pred[n])][:1]

    def multibranch(self, src: str, b: MultiBranch) -> None:
        fname, width = self.field(src, b.field)
        seen: dict[int | str, Pos] = {}
        groups: dict[str, list[int | str]] = {}
        before = upstream(self.g, src) | {src}
        for value, ref, vpos in b.cases:
            if value in seen:
                raise self.err(f"case {value} is given twice", vpos, "give each case its own value")
            if isinstance(value, int) and value >= 1 << width:
                raise self.err(f"case {value} does not fit in {fname} ({_bits(width)})", vpos,
                               f"the largest value is {(1 << width) - 1}")
            seen[value] = vpos
            target = src if ref.name == "self" else self.node(ref)
            if target in before:
                raise self.err(f"case {value} goes back to {target!r} and makes a cycle", vpos,
                               "loops are written `A => (self : B ? A.global_counter < 3)`")
            groups.setdefault(target, []).append(value)
        total = len(b.cases)
        for target, values in groups.items():
            self.edge(src, target, b.pos, "case", cond=Condition(fname, "==", None),
                      cases=tuple(values), share=len(values) / total)

    # -- the whole chain ------------------------------------------------------------
    def build(self) -> Chain:
        d = self.decl
        p4sc = d.style == "p4sc"
        for s in d.stmts:
            self.stmt(s)
        if p4sc:
            self.reduce_order()
        for src, b, pos in self.pending:
            self.branch(src, b, pos)
        for ref in d.first:
            n = self.node(ref)
            self.edge("input", n, ref.pos)
        for ref in d.last:
            n = self.node(ref)
            self.edge(n, "output", ref.pos)
        self.implicit_ends()
        self.mark_exits()
        if d.weight is not None and not 0 < d.weight <= 1:
            raise self.err(f"weight {d.weight:g} is outside (0, 1]", d.weight_pos,
                           "a weight is the chain's share of traffic, e.g. `weight 0.25`")
        for spec, pos in ((d.ingress, d.ingress_pos), (d.egress, d.egress_pos)):
            self.endpoint(spec, pos)
        chain = Chain(d.name, self.g, match=self.classifier(d.match), weight=d.weight,
                      line=d.pos.line, column=d.pos.column, source=self.source,
                      ingress=d.ingress, egress=d.egress)
        validate(chain, text=self.text)
        return chain

    def reduce_order(self) -> None:
        """P4SC `before` is an order, not adjacency: drop edges implied by others."""
        seq = nx.DiGraph((u, v) for u, v, k in self.g.edges(data="kind") if k == "seq")
        if not nx.is_directed_acyclic_graph(seq):
            return  # validate() reports the cycle with its position
        keep = set(nx.transitive_reduction(seq).edges)
        self.g.remove_edges_from([e for e in seq.edges if e not in keep])

    def implicit_ends(self) -> None:
        g = self.g
        nfs = [n for n, a in g._node.items() if a["kind"] == "nf"]
        if "input" not in g:
            heads = [n for n in nfs if not any(
                g.edges[p, n]["kind"] != "loop" for p in g._pred[n] if p != n)]
            for n in heads:
                self.edge("input", n, Pos(g._node[n]["line"], g._node[n]["column"]))
        if "output" not in g:
            tails = [n for n in nfs if not any(
                d["kind"] not in ("loop",) for d in g._succ[n].values())]
            for n in tails:
                self.edge(n, "output", Pos(g._node[n]["line"], g._node[n]["column"]))
        # A P4SC loop NF with nothing after it leaves the chain when the loop is done.
        for u, v, d in list(_edges(g)):
            k = d["kind"]
            if k == "loop" and all(d["kind"] == "loop" for d in g._succ[u].values()) and \
                    "output" in g:
                self.edge(u, "output", Pos(g._node[u]["line"], g._node[u]["column"]))

    def mark_exits(self) -> None:
        """After a loop, the one way on is its exit edge, taken when the loop ends."""
        for u, v, d in list(_edges(self.g)):
            if d["kind"] != "loop":
                continue
            others = [w for w, e in self.g._succ[u].items() if e["kind"] != "loop"]
            if len(others) != 1:
                raise self.err(f"{u!r} loops and also branches; a loop has one way out",
                               Pos(d["line"], d["column"]),
                               f"branch in an NF after the loop: `{u} => X; X => (…)`")
            e = self.g.edges[u, others[0]]
            e["kind"], e["cond"] = "exit", d["cond"]

    def endpoint(self, spec: str | None, pos: Pos) -> None:
        """``from`` / ``to``: a host or server name or ``SWITCH:PORT`` (the names are
        checked against a topology when the chain is placed on one)."""
        if spec is None:
            return
        try:
            split_endpoint(spec)
        except ValueError as e:
            raise self.err(f"{spec!r} is not a host, server or switch port: {e}", pos,
                           "write a name (`from h1`) or a switch port (`from s1:3`)") from None

    # -- classifier -----------------------------------------------------------------
    def classifier(self, terms: tuple[MatchTerm, ...]) -> Classifier | None:
        if not terms:
            return None
        return Classifier(tuple(self.term(t) for t in terms))

    def term(self, t: MatchTerm) -> FieldMatch:
        f = resolve_field(t.field)
        if f is None:
            raise self.err(f"unknown header field {t.field!r}", t.pos,
                           did_you_mean(t.field, [*FIELDS, *ALIASES])
                           or "fields: " + ", ".join(FIELDS))
        vals = [self.literal(f, *v) for v in t.values]
        if t.kind == "exact":
            return FieldMatch.exact(f, vals[0], t.negate)
        if t.kind == "lpm":
            plen = int(t.values[1][1])
            if plen > f.width:
                raise self.err(f"prefix /{plen} is longer than {f.name} ({_bits(f.width)})",
                               t.values[1][2], f"use a prefix length of at most {f.width}")
            return FieldMatch.prefix(f, vals[0], plen, t.negate)
        if t.kind == "ternary":
            return FieldMatch(f.name, "ternary", vals[0] & vals[1], mask=vals[1], negate=t.negate)
        if vals[0] > vals[1]:
            raise self.err(f"empty range {t.values[0][1]}..{t.values[1][1]}",
                           span(t.values[0][2], t.values[1][2]),
                           "write the low end first")
        return FieldMatch(f.name, "range", vals[0], high=vals[1], negate=t.negate)

    def literal(self, f, kind: str, text: str, pos: Pos) -> int:
        try:
            if kind == "IPV4":
                v = int(ipaddress.IPv4Address(text))
            elif kind == "IPV6":
                v = int(ipaddress.IPv6Address(text))
            elif kind == "MAC":
                v = int(text.replace(":", ""), 16)
            else:
                v = int(text, 16) if kind == "HEX" else int(text)
        except ValueError:
            raise self.err(f"{text!r} is not a valid address", pos,
                           "IPv4 is a.b.c.d with each part 0-255; MAC is aa:bb:cc:dd:ee:ff") from None
        if kind in ("IPV4", "IPV6", "MAC") and f.literal != kind.lower() and f.literal != "int":
            raise self.err(f"{f.name} takes {'an' if f.literal[0] in 'aeiou' else 'a'} "
                           f"{f.literal.upper()} value, not {text!r}", pos,
                           {"mac": "write it as aa:bb:cc:dd:ee:ff", "ipv4": "write it as 10.0.0.1",
                            "ipv6": "write it as 2001:db8::1"}[f.literal])
        if v >= 1 << f.width:
            raise self.err(f"{text} does not fit in {f.name} ({_bits(f.width)})", pos,
                           f"the largest value is {(1 << f.width) - 1}")
        return v


def build_chain(decl: ChainDecl, catalog: NFCatalog, *, text: str = "",
                source: str = "<string>") -> Chain:
    return _Builder(decl, catalog, text, source).build()


def build_chains(decls: list[ChainDecl], catalog: NFCatalog, *, text: str = "",
                 source: str = "<string>", into: ChainSet | None = None) -> ChainSet:
    """Build every declaration; duplicate names are an error at the second one, and so
    is the weight that takes the chains' weights past 1 (weights are shares of all
    traffic, not normalised)."""
    out = into if into is not None else ChainSet()
    total = sum(c.weight for c in out if c.weight is not None)
    for d in decls:
        if d.name in out:
            raise ChainValidationError(f"duplicate chain name {d.name!r}", line=d.pos.line,
                                       column=d.pos.column, source=source, text=text,
                                       hint="give each chain its own name", width=d.pos.width)
        chain = build_chain(d, catalog, text=text, source=source)
        if d.weight is not None:
            total += d.weight
            if total > 1 + 1e-9:
                raise _too_heavy(out, d, total, text, source)
        out.add(chain)
    return out


def _too_heavy(chains: ChainSet, d: ChainDecl, total: float, text: str,
               source: str) -> ChainValidationError:
    weighted = [(c.name, c.weight) for c in chains if c.weight is not None] + [(d.name, d.weight)]
    shown = weighted if len(weighted) <= 5 else [*weighted[:3], None, weighted[-1]]
    terms = " + ".join("…" if t is None else f"{t[1]:g} ({t[0]})" for t in shown)
    return ChainValidationError(
        f"the chain weights add up to {total:g}, more than all the traffic: {terms}",
        line=d.weight_pos.line, column=d.weight_pos.column, width=d.weight_pos.width,
        source=source, text=text, hint=_weight_hint(1 - total + d.weight))


def _weight_hint(room: float) -> str:
    if room <= 1e-9:
        return "the chains before take all the traffic: lower their weights, or drop this one"
    return (f"a weight is a share of all traffic, so the weights add up to at most 1: "
            f"give this chain at most {room:.4g}, or lower the others")
