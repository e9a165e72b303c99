"""The chain entries of a TNA program: a state per pipelet visit (:mod:`sfclab.passes.pipelets`).

The initializer (in the entry pipe's ingress), branch, loop and save entries are as on
one pipeline, in the control of the pipelet that holds the slot.  The end of each visit
is a ``rewinder`` entry of that pipelet, keyed on ``(path, state)``:

* an ingress visit: ``next_pipelet(state, bitmap, loops, port)`` sends the packet to
  the egress of ``port``'s pipe with the token of that visit — ``port`` is the pipe's
  recirculation port (:func:`~sfclab.passes.pipelets.recirculation_port`) when the
  path goes on after it, or, on a network, the route's port; ``finish(terminal, port,
  state, bitmap, loops)`` ends the path: output (an NF's port, else ``port``, through
  the exit pipe's egress, which runs the visit's slots first), drop, or the CPU;
* an egress visit: ``next_pipelet(state, bitmap, loops)`` keeps the SFC header for the
  recirculation into the same pipe's ingress; ``take_off()`` removes it (the packet
  leaves), ``drop_packet()`` drops it, ``forward(spi, si)`` (a network) sends it to the
  next switch with the header on.

A ``take_branch`` entry also sets the end of the visit of the path it moves the packet
to (the same ``state, bitmap, loops, terminal, port``), since it runs after the rewinder.

An entry pipe's ingress with no NF slot (:func:`bare_entry`: every NF of its paths on
other pipelets or on a server) has nothing between the classification and the end of
the first visit, so the initializer's ``set_token`` (and, on a network, ``arrival``'s
``enter``) carries that end too (``terminal, port, state, next_bitmap, loops``) and
the rewinder there ends only the visits of packets that come back (state > 0): the
three lookups in a row (classify, end the visit, decide the port) would take three
stages of a pipelet that holds no NF.

>>> import sfclab
>>> from sfclab.codegen.compose import compose
>>> c = compose(sfclab.compile("chain c: firewall -> nat -> l3fwd", arch="tna", pipes=1,
...                            stages=7))
>>> for e in tna_chain_entries(c)[1:]: print(e)
pipe0.SfcIngress0.rewinder: meta.sfc.path_id=1 meta.tok.state=0 -> next_pipelet(state=1, bitmap=0b100, loops=0, port=68)  [chain:c]
pipe0.SfcEgress0.rewinder: meta.sfc.path_id=1 meta.tok.state=1 -> next_pipelet(state=2, bitmap=0b10, loops=0)  [chain:c]
pipe0.SfcIngress0.rewinder: meta.sfc.path_id=1 meta.tok.state=2 -> finish(terminal=0, port=1, state=3, bitmap=0b0, loops=0)  [chain:c]
pipe0.SfcEgress0.rewinder: meta.sfc.path_id=1 meta.tok.state=3 -> take_off()  [chain:c]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from ..passes.pipelets import recirculation_port
from ..passes.placement import Pipelet
from .compose import TERMINALS, Composition
from .entries import (TableEntry, _branch_entries, _initializer_entries, _loop_entries,
                      _save_entries, _token, network_head, nf_entries)

__all__ = ["tna_chain_entries", "tna_network_entries", "tna_entries", "ingress_end", "TERM_VIA",
           "bare_entry", "VERDICT_PARAMS"]

#: The rewinder's verdict "to the port it names" (``finish``'s terminals are 0..2).
TERM_VIA = 3
#: The end of a visit as the actions that run after (or instead of) the rewinder write it:
#: ``take_branch``'s, and a bare entry's ``set_token`` / ``enter``'s (name, P4 type).
VERDICT_PARAMS = (("terminal", "bit<2>"), ("port", "bit<9>"), ("state", "bit<8>"),
                  ("next_bitmap", "bit<32>"), ("loops", "bit<8>"))


def bare_entry(comp: Composition) -> bool:
    """Whether the entry pipe's ingress holds no NF slot (its classifier ends the first
    visit, see the module's docstring)."""
    entry = Pipelet(comp.pipelets.layout.entry_pipe, "ingress")
    return not any(s.pipelet == entry for s in comp.slots)


def ingress_end(comp: Composition, path_num: int, state: int,
                exits: Mapping[str, tuple] | None = None) -> tuple[str, tuple]:
    """``(action, params)`` that end ingress visit *state* of path number *path_num*."""
    plan = comp.pipelets
    f = next(x for x in plan.fsm.paths if x.num == path_num)
    visits = plan.visits[f.path.id]
    last = len(visits) - 1
    if state == last:                                  # dropped here, or to the CPU
        return "finish", (("terminal", TERMINALS[f.path.terminal or "drop"]), ("port", 0),
                          ("state", 0), ("bitmap", 0), ("loops", 0))
    nxt = f.states[state + 1]
    token = (("state", nxt.state), ("bitmap", nxt.bitmap), ("loops", nxt.counter))
    how = (exits or {}).get(f.path.id) if state + 1 == last else None
    if how is not None:                                # a network's route picks the port
        return "next_pipelet", token + (("port", how[-1]),)
    if state + 1 == last and f.path.terminal != "drop":
        return "finish", (("terminal", TERMINALS[f.path.terminal or "output"]),
                          ("port", comp.options.default_port)) + token
    return "next_pipelet", token + (("port", recirculation_port(visits[state + 1].pipe)),)


def _egress_end(comp: Composition, f, state: int, exits: Mapping[str, tuple]
                ) -> tuple[str, tuple]:
    visits = comp.pipelets.visits[f.path.id]
    if state < len(visits) - 1:
        nxt = f.states[state + 1]
        return "next_pipelet", (("state", nxt.state), ("bitmap", nxt.bitmap),
                                ("loops", nxt.counter))
    how = exits.get(f.path.id)
    if how is not None and how[0] == "forward":
        return "forward", (("spi", how[1]), ("si", how[2]))
    if f.path.terminal == "drop":
        return "drop_packet", ()
    return "take_off", ()


def _verdict(comp: Composition, exits: Mapping[str, tuple], path_num: int,
             state: int) -> tuple:
    """The end of ingress visit *state* of path *path_num* as :data:`VERDICT_PARAMS`."""
    act, params = ingress_end(comp, path_num, state, exits)
    p = dict(params)
    term = p.get("terminal", TERM_VIA)         # next_pipelet: to the port it names
    return (("terminal", term), ("port", p["port"]), ("state", p["state"]),
            ("next_bitmap", p["bitmap"]), ("loops", p["loops"]))


def _first_visit_ends(comp: Composition, entries: list[TableEntry],
                      exits: Mapping[str, tuple]) -> list[TableEntry]:
    """A bare entry's classifier entries with the end of the first visit they start."""
    if not bare_entry(comp):
        return entries
    heads = (comp.action("set_token"), comp.action("enter"))
    return [replace(e, params=e.params + _verdict(comp, exits, dict(e.params)["path_id"], 0))
            if e.action in heads else e for e in entries]


def _rewinder(comp: Composition, exits: Mapping[str, tuple]) -> list[TableEntry]:
    plan = comp.pipelets
    bare = bare_entry(comp)
    entry = Pipelet(plan.layout.entry_pipe, "ingress")
    out = []
    for f in plan.fsm.paths:
        for s in f.states:
            pl = plan.visits[f.path.id][s.state]
            if bare and s.state == 0 and pl == entry:
                continue                                # the classifier's entry ends it
            if pl.gress == "ingress":
                act, params = ingress_end(comp, f.num, s.state, exits)
            else:
                act, params = _egress_end(comp, f, s.state, exits)
            note = f"{f.path.id}, visit {s.state} ({pl}): {act}"
            out.append(TableEntry(comp.table("rewinder", pl), _token(comp, f.num, s.state),
                                  comp.action(act, pl), params, None, f"chain:{f.path.chain}",
                                  note))
    return out


def tna_chain_entries(comp: Composition, *, initializer: bool = True,
                      exits: Mapping[str, tuple] | None = None) -> list[TableEntry]:
    """The chain entries of a TNA composition (*exits*: a network switch's paths that
    leave by ``forward`` or ``deliver``, as :func:`~.entries.network_entries` takes)."""
    exits = exits or {}
    head = _first_visit_ends(comp, _initializer_entries(comp), exits) if initializer else []
    return (head + _branch_entries(comp, lambda num, state: _verdict(comp, exits, num, state))
            + _loop_entries(comp) + _save_entries(comp) + _rewinder(comp, exits))


def tna_network_entries(comp: Composition, *, classified, arrivals, exits: Mapping[str, tuple],
                        ingress: Mapping[str, int] | None = None) -> list[TableEntry]:
    """:func:`~.entries.network_entries` for a TNA switch of a network."""
    head = network_head(comp, classified=classified, arrivals=arrivals, ingress=ingress)
    return (_first_visit_ends(comp, head, exits)
            + tna_chain_entries(comp, initializer=False, exits=exits))


def tna_entries(comp: Composition) -> list[TableEntry]:
    """Every entry of a one-switch TNA program: the chains' and the NFs'."""
    return tna_chain_entries(comp) + nf_entries(comp)
