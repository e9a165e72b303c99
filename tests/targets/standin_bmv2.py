"""Stand-ins for BMv2's ``simple_switch_grpc`` and p4c's ``p4c-bm2-ss``, for the test suite.

Neither BMv2 nor p4c can be installed where sfclab's tests run, so these two
stand-ins speak the tools' documented interfaces and run **sfclab's own
embedded model inside**.  They test sfclab's *orchestration* of BMv2 — running
the compiler and reading its messages, starting and stopping the switch,
pushing the pipeline over P4Runtime, putting packets on its ports, reading its
event logger — and NOT BMv2's semantics: every packet is forwarded by
:class:`sfclab.targets.model.ModelSwitch`, so a test that passes here says
nothing about how a real BMv2 would treat the program.  Use the live tests
(``tests/targets/test_live.py``) for that.

As a script::

    python standin_bmv2.py p4c --arch v1model --std p4-16 -o OUT.json \\
        --p4runtime-files P4INFO.txt PROGRAM.p4
    python standin_bmv2.py switch --device-id 0 --packet-in ipc:///…/pin.ipc \\
        --nanolog ipc:///…/events.ipc --log-console --no-p4 -- \\
        --grpc-server-addr 127.0.0.1:PORT --cpu-port 255

and :func:`install_standins` writes ``simple_switch_grpc`` and ``p4c-bm2-ss``
executables for ``SFCLAB_BMV2`` / ``SFCLAB_P4C``.

**p4c-bm2-ss stand-in.**  Checks the program by building a ``ModelSwitch`` from
its text (errors are printed as p4c prints them, ``FILE(LINE): error: …``, and
the exit status is 1), then writes a BMv2-JSON-shaped document and sfclab's
own P4Info (:func:`sfclab.codegen.p4info.build_p4info`, as text, JSON or
binary by the file's extension).  The JSON carries the program text under
``"sfclab_standin_p4"`` plus what BMv2's event logger ids refer to, numbered in
the model's order (deterministic for a program):

* ``parsers`` / ``deparsers``: one each, ``parser`` / ``deparser``, id 0;
* ``headers``: the header instances the model's ``extract`` / ``deparser_emit``
  events name (``ethernet``, ``mpls[0]`` …), ids from 0;
* ``actions``: every action of ``ModelSwitch.actions`` (fully qualified, as the
  model's ``action`` events name them), ids from 0, with ``runtime_data``;
* ``pipelines``: ``ingress`` (id 0) and ``egress`` (id 1); each table of
  ``ModelSwitch.tables`` goes to the pipeline of the top-level control it
  lives in (egress for the ``V1Switch``'s fourth block, else ingress); table
  ids are unique across both.  Every table has a non-empty ``key`` (the
  model's key fields, or ``[{}]`` for a keyless table) so that
  :class:`~sfclab.targets.bmv2.events.NameMap` never takes one for p4c's
  synthetic ``tbl_…`` tables;
* each action's ``primitives``: those deciding the packet's fate, as p4c
  writes them (:func:`fate_primitives`: ``mark_to_drop``, an ``assign`` to
  ``standard_metadata.egress_spec`` / ``mcast_grp``, a resubmit, recirculate
  or clone), which sfclab reads to tell a drop from a late egress; and, as p4c
  makes an action and a keyless ``tbl_…`` table of each statement outside
  actions, ``tbl_standin_drop`` / ``tbl_standin_forward`` (actions
  ``standin_drop`` / ``standin_forward``) when the ingress drops or forwards
  in its apply blocks.  The switch logs them at the end of each ingress pass
  whose actions do not tell its fate (:func:`with_deciders`), as a real BMv2
  logs p4c's: without them every packet's fate would be left to a settle time.

**simple_switch_grpc stand-in.**  A :class:`P4RuntimeModelServer` subclass on
``--grpc-server-addr`` whose ``SetForwardingPipelineConfig`` takes the stand-in
JSON as ``p4_device_config`` (any other is refused, ``INVALID_ARGUMENT``);
``GetForwardingPipelineConfig`` gives the JSON back.  Register reads and writes over
P4Runtime fail ``UNIMPLEMENTED``, as BMv2 1.15.5's do; its Thrift runtime (``--thrift-port``,
9090 by default, on 0.0.0.0) serves the register calls of BMv2's ``standard.thrift``
(:class:`_ThriftRegisters`) over the model's registers.  ``--packet-in ADDR`` is
BMv2's packet-in device manager (``src/bm_sim/dev_mgr_packet_in.cpp``): a PAIR
socket the switch listens on, messages ``struct.pack("<iii", type, port,
more)`` + payload.  ``--nanolog ADDR`` is BMv2's event logger: a PUB socket
publishing :mod:`sfclab.targets.bmv2.events` messages translated from the
model's trace of each packet (see :func:`translate_trace`), and
``CONFIG_CHANGE`` when a pipeline is committed.  ``--use-files WAIT`` is BMv2's
pcap ports (``-i N@NAME``: ``NAME_in.pcap`` read once, ``WAIT`` seconds after
the first config is loaded; ``NAME_out.pcap`` written).  Packets move as in
simple_switch (``standin_datapath.py``: the input buffer, the egress queues that
drop when full, the output buffer; nothing runs before the first pipeline is
committed); packet-outs from a P4Runtime controller enter on the CPU port.
Other ``-i`` interfaces are accepted but not attached.  SIGTERM stops it cleanly.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import struct
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

#: The key of the JSON document holding the P4 program's text.
STANDIN_KEY = "sfclab_standin_p4"
COMPILER_NAME = "sfclab stand-in for p4c-bm2-ss"
P4C_VERSION = "1.2.5.16 (sfclab stand-in)"
SWITCH_VERSION = "1.15.5 (sfclab stand-in)"

# BMv2's packet-in device manager: message types, and packed header int type, port, more.
(PORT_ADD, PORT_REMOVE, PORT_SET_STATUS, PACKET_IN, PACKET_OUT, INFO_REQ,
 INFO_REP) = range(7)
PACKET_HEADER = struct.Struct("<iii")
INFO_STATUS_NOT_SUPPORTED = 1

__all__ = [
    "STANDIN_KEY", "COMPILER_NAME", "PACKET_HEADER", "PORT_ADD", "PORT_REMOVE",
    "PORT_SET_STATUS", "PACKET_IN", "PACKET_OUT", "INFO_REQ", "INFO_REP",
    "install_standins", "standin_json", "StandinIds", "translate_trace", "p4c_main",
    "switch_main", "main",
]


# -- the JSON ------------------------------------------------------------------------------------

def _main_blocks(program) -> list[str]:
    """The type names of the ``V1Switch(...) main`` blocks (parser, verify, ingress,
    egress, compute, deparser)."""
    from sfclab.p4 import ast as A

    for d in program.find(A.Instance):
        if isinstance(d.type, A.NamedType) and d.type.name == "V1Switch":
            return [a.func.name for a in d.args
                    if isinstance(a, A.Call) and isinstance(a.func, A.TypeName)]
    return []


def _header_names(switch) -> list[str]:
    """Header instances as the model's extract / emit events name them: the path
    without its first part (``hdr.ethernet`` -> ``ethernet``, ``hdr.mpls[0]`` ->
    ``mpls[0]``), headers first, then any in the metadata struct."""
    from sfclab.targets.model.storage import HeaderRef, StackRef, StructRef

    out: list[str] = []

    def walk(ref) -> None:
        if isinstance(ref, HeaderRef):
            out.append(ref.path.split(".", 1)[-1])
        elif isinstance(ref, StackRef):
            for e in ref.elems:
                out.append(e.path.split(".", 1)[-1])
        elif isinstance(ref, StructRef):
            for m in ref.members.values():
                walk(m)

    walk(switch.hdr_ref)
    walk(switch.meta_ref)
    return list(dict.fromkeys(out))


#: The stand-in p4c's tables for the statements outside actions that decide a packet's fate
#: (``tbl_standin_drop``, ``tbl_standin_forward``; p4c names its own after the source line).
DECIDER_PREFIX = "tbl_standin_"
#: Extern calls p4c writes as a primitive of the same name, besides ``mark_to_drop``: a
#: packet that calls one goes on in a way its pipeline's end does not tell.
_OTHER_FATE_CALLS = frozenset({"resubmit", "resubmit_preserving_field_list", "recirculate",
                               "recirculate_preserving_field_list", "clone", "clone3",
                               "clone_preserving_field_list"})


def _standard_metadata_names(program) -> set[str]:
    """The names the program's controls and actions give their ``standard_metadata_t``
    parameter."""
    from sfclab.p4 import ast as A

    return {p.name for d in A.walk(program) if isinstance(d, (A.ControlDecl, A.ActionDecl))
            for p in d.params
            if isinstance(p.type, A.NamedType) and p.type.name == "standard_metadata_t"}


def fate_primitives(node, std: set[str]) -> list[dict[str, Any]]:
    """The primitives p4c writes, in order, for the statements under *node* (an action's
    body, or a control's apply block) that decide a packet's fate: ``mark_to_drop``, an
    ``assign`` to ``standard_metadata.egress_spec`` or ``.mcast_grp`` (*std*: the names
    the program gives ``standard_metadata``), a resubmit, recirculate or clone.  Nothing
    else: sfclab reads only these (:func:`sfclab.targets.bmv2.events.action_verdict`)."""
    from sfclab.p4 import ast as A

    out: list[dict[str, Any]] = []
    for n in A.walk(node):
        if isinstance(n, A.CallStmt) and isinstance(n.call.func, A.Name):
            name = n.call.func.name
            if name == "mark_to_drop" or name in _OTHER_FATE_CALLS:
                out.append({"op": name, "parameters": []})
        elif isinstance(n, A.Assign) and isinstance(n.lhs, A.Member) \
                and n.lhs.name in ("egress_spec", "mcast_grp") \
                and isinstance(n.lhs.expr, A.Name) and n.lhs.expr.name in std:
            out.append({"op": "assign", "parameters": [
                {"type": "field", "value": ["standard_metadata", n.lhs.name]},
                {"type": "runtime_data", "value": 0}]})
    return out


def standin_json(text: str, switch, program_name: str = "program.p4") -> dict[str, Any]:
    """The stand-in's BMv2-JSON-shaped document for *text*, compiled as *switch*."""
    from sfclab.p4.names import control_instances, qualified_objects
    from sfclab.targets.bmv2.events import action_verdict

    blocks = _main_blocks(switch.program)
    egress_control = blocks[3] if len(blocks) == 6 else None
    control_of = {o.name: o.path[0] for o in qualified_objects(switch.program)
                  if o.kind == "table" and o.path}
    bodies = {o.name: o.decl.body for o in qualified_objects(switch.program)
              if o.kind == "action"}
    std = _standard_metadata_names(switch.program)
    actions = [{"name": name, "id": i,
                "runtime_data": [{"name": p, "bitwidth": w} for p, w in info.params],
                "primitives": fate_primitives(bodies[name], std) if name in bodies else []}
               for i, (name, info) in enumerate(switch.actions.items())]
    action_ids = {a["name"]: a["id"] for a in actions}
    ingress: list[tuple[str, Any]] = []
    egress: list[tuple[str, Any]] = []
    for name, tbl in switch.tables.items():
        where = egress if egress_control and control_of.get(name) == egress_control else ingress
        where.append((name, tbl))
    tables: dict[str, list[dict]] = {"ingress": [], "egress": []}
    next_id = 0
    for pipe, members in (("ingress", ingress), ("egress", egress)):
        for name, tbl in members:
            names = list(tbl.actions)           # qualified action names
            tables[pipe].append({
                "name": name, "id": next_id,
                "key": [{"name": k.name, "match_type": k.kind} for k in tbl.keys] or [{}],
                "actions": names,
                "action_ids": [action_ids[n] for n in names if n in action_ids],
            })
            next_id += 1
    # p4c makes a statement outside any action an action of its own, applied by a keyless
    # table of its own (tbl_…): those of the ingress that decide the packet's fate
    ingress_control = blocks[2] if len(blocks) == 6 else None
    direct: dict[str, dict] = {}
    for path, control in control_instances(switch.program):
        if path[0] == ingress_control:
            for prim in fate_primitives(control.apply, std):
                if (verdict := action_verdict([prim])) in ("drop", "forward"):
                    direct.setdefault(verdict, prim)
    for verdict, prim in sorted(direct.items()):
        action = {"name": f"standin_{verdict}", "id": len(actions), "runtime_data": [],
                  "primitives": [prim]}
        actions.append(action)
        tables["ingress"].append({"name": f"{DECIDER_PREFIX}{verdict}", "id": next_id, "key": [],
                                  "actions": [action["name"]], "action_ids": [action["id"]]})
        next_id += 1
    return {
        "program": program_name,
        "__meta__": {"version": [2, 23], "compiler": COMPILER_NAME},
        STANDIN_KEY: text,
        "headers": [{"name": h, "id": i} for i, h in enumerate(_header_names(switch))],
        "parsers": [{"name": "parser", "id": 0}],
        "deparsers": [{"name": "deparser", "id": 0}],
        "actions": actions,
        "pipelines": [
            {"name": "ingress", "id": 0, "tables": tables["ingress"], "conditionals": []},
            {"name": "egress", "id": 1, "tables": tables["egress"], "conditionals": []},
        ],
        "checksums": [],
    }


@dataclass
class StandinIds:
    """Name -> id maps the switch stand-in reads back from the JSON it runs."""

    actions: dict[str, int] = field(default_factory=dict)
    tables: dict[str, int] = field(default_factory=dict)
    headers: dict[str, int] = field(default_factory=dict)
    pipelines: dict[str, int] = field(default_factory=dict)
    parser: int = 0
    deparser: int = 0
    #: action name -> what its primitives decide of the packet's fate ("drop", "forward",
    #: "other"), as sfclab reads them
    verdicts: dict[str, str] = field(default_factory=dict)
    #: "drop" / "forward" -> (table, action) of the program's statements outside actions
    #: deciding that, in its ingress
    deciders: dict[str, tuple[str, str]] = field(default_factory=dict)

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> StandinIds:
        from sfclab.targets.bmv2.events import action_verdict

        ids = cls()
        ids.actions = {a["name"]: a["id"] for a in doc.get("actions", ())}
        ids.verdicts = {a["name"]: v for a in doc.get("actions", ())
                        if (v := action_verdict(a.get("primitives") or ())) is not None}
        for p in doc.get("pipelines", ()):
            for t in p.get("tables", ()):
                if t["name"].startswith(DECIDER_PREFIX) and t.get("actions"):
                    ids.deciders[t["name"][len(DECIDER_PREFIX):]] = (t["name"], t["actions"][0])
        ids.headers = {h["name"]: h["id"] for h in doc.get("headers", ())}
        for p in doc.get("pipelines", ()):
            ids.pipelines[p["name"]] = p["id"]
            for t in p.get("tables", ()):
                ids.tables[t["name"]] = t["id"]
        if doc.get("parsers"):
            ids.parser = doc["parsers"][0]["id"]
        if doc.get("deparsers"):
            ids.deparser = doc["deparsers"][0]["id"]
        return ids


def decode_standin_json(blob: bytes) -> tuple[dict[str, Any], str]:
    """The stand-in JSON document and the program text in it; :class:`ValueError`
    (saying what is wrong) for anything else."""
    try:
        doc = json.loads(blob)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"the p4_device_config is not a BMv2 JSON document ({e})") from None
    if not isinstance(doc, dict):
        raise ValueError("the p4_device_config is not a BMv2 JSON object")
    text = doc.get(STANDIN_KEY)
    if not isinstance(text, str) or not text.strip():
        compiler = (doc.get("__meta__") or {}).get("compiler", "unknown")
        raise ValueError(f"the stand-in simple_switch_grpc runs only BMv2 JSON written by the "
                         f"stand-in p4c-bm2-ss (with the P4 program under {STANDIN_KEY!r}); "
                         f"this one has none (compiler: {compiler})")
    return doc, text


# -- event translation ---------------------------------------------------------------------------

#: Model trace event kinds with no event-logger message (BMv2 has none, or the
#: stand-in has no ids for them; recirculate/resubmit are inferred by sfclab from
#: the next PARSER_START, a drop from a packet with no PACKET_OUT).
SKIPPED_KINDS = frozenset({"condition", "checksum", "note", "nf", "parser_state",
                           "recirculate", "resubmit", "clone", "digest", "drop"})


def with_deciders(events, ids: StandinIds) -> list:
    """A model trace's *events* with, at the end of each ingress pass, the table and action
    p4c makes of the statement outside actions that decided the packet's fate there
    (:attr:`StandinIds.deciders`), when the actions the pass ran do not already say it.

    BMv2 logs no drop, but it logs every action, p4c's own included: a program that ends
    its ingress with ``mark_to_drop(standard_metadata)`` or ``standard_metadata.egress_spec
    = …`` in an apply block (as sfclab's do) shows its verdict in its last action, which
    sfclab reads (:mod:`sfclab.targets.bmv2.batch`).  The model logs no event for such a
    statement, so the verdict is taken from what the pass did next: its egress pipeline
    (forwarded, or multicast), or a drop by ``mark_to_drop``.  Where that does not tell (a
    resubmit, another drop), or an action of the pass resubmitted, recirculated or cloned,
    nothing is added, and the ingress ends without a verdict as it would on BMv2 for a
    program whose ingress decides nothing."""
    from sfclab.targets.traces.trace import Event

    events = list(events)
    out: list = []
    verdict: str | None = None
    for i, ev in enumerate(events):
        if ev.kind == "pipeline_start" and ev.name == "ingress":
            verdict = None
        elif ev.kind == "action" and verdict != "other":
            verdict = ids.verdicts.get(ev.name, verdict)
        elif ev.kind == "pipeline_done" and ev.name == "ingress" and verdict != "other":
            fate = _pass_fate(events[i + 1:])
            if fate is not None and fate != verdict and fate in ids.deciders:
                table, action = ids.deciders[fate]
                # a keyless table of one default action: BMv2 logs a miss, then the action
                out += [Event(kind="table_miss", name=table, pass_no=ev.pass_no),
                        Event(kind="action", name=action, pass_no=ev.pass_no)]
        out.append(ev)
    return out


def _pass_fate(rest) -> str | None:
    """What became of a packet after its ingress, from the model trace's next events:
    ``"forward"`` (its egress pipeline starts), ``"drop"`` (``mark_to_drop``), or None."""
    for ev in rest:
        if ev.kind == "pipeline_start":
            return "forward" if ev.name != "ingress" else None
        if ev.kind == "drop":
            return "drop" if str(ev.value).startswith("mark_to_drop()") else None
        if ev.kind in ("resubmit", "parser_start"):
            return None
    return None


def translate_trace(trace, ids: StandinIds, *, switch_id: int, packet_id: int
                    ) -> tuple[list[bytes], list[str]]:
    """Event-logger messages for one packet's model trace, and what had to be left out
    (names without an id in the JSON), one sentence each."""
    from sfclab.targets.bmv2 import events as E

    msgs: list[bytes] = []
    missing: list[str] = []

    def put(type_: int, *fields: int) -> None:
        msgs.append(E.pack_message(type_, *fields, switch_id=switch_id, packet_id=packet_id))

    def lookup(kind: str, table: dict[str, int], name: str) -> int | None:
        got = table.get(name)
        if got is None:
            missing.append(f"{kind} {name!r} has no id in the JSON: its event is skipped")
        return got

    deparsing = False
    for ev in trace.events:
        k = ev.kind
        if k in SKIPPED_KINDS:
            continue
        if k == "packet_in":
            put(E.PACKET_IN, int(ev.value))
        elif k == "parser_start":
            put(E.PARSER_START, ids.parser)
        elif k == "parser_done":
            put(E.PARSER_DONE, ids.parser)
        elif k == "extract":
            if (h := lookup("header", ids.headers, ev.name)) is not None:
                put(E.PARSER_EXTRACT, h)
        elif k in ("pipeline_start", "pipeline_done"):
            if (p := lookup("pipeline", ids.pipelines, ev.name)) is not None:
                put(E.PIPELINE_START if k == "pipeline_start" else E.PIPELINE_DONE, p)
        elif k in ("table_hit", "table_miss"):
            if (t := lookup("table", ids.tables, ev.name)) is not None:
                if k == "table_hit":
                    put(E.TABLE_HIT, t, 0)
                else:
                    put(E.TABLE_MISS, t)
        elif k == "action":
            if (a := lookup("action", ids.actions, ev.name)) is not None:
                put(E.ACTION_EXECUTE, a)
        elif k == "deparser_emit":
            if not deparsing:
                put(E.DEPARSER_START, ids.deparser)
                deparsing = True
            if (h := lookup("header", ids.headers, ev.name)) is not None:
                put(E.DEPARSER_EMIT, h)
        elif k == "deparser_done":
            if not deparsing:
                put(E.DEPARSER_START, ids.deparser)
            put(E.DEPARSER_DONE, ids.deparser)
            deparsing = False
        elif k == "packet_out":
            put(E.PACKET_OUT, int(ev.value))
    return msgs, missing


# -- p4c-bm2-ss ----------------------------------------------------------------------------------

class _ArgError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # type: ignore[override]
        raise _ArgError(message)


_POS = re.compile(r"^<string>:(\d+):(\d+):\s*")


def _p4c_error(program: str, exc: BaseException) -> str:
    """*exc* as p4c prints an error: ``FILE(LINE): error: message`` (then the rest)."""
    line = getattr(exc, "line", 0) or 0
    msg = getattr(exc, "message", None) or str(exc)
    m = _POS.match(msg)
    if m:
        line = line or int(m.group(1))
        msg = msg[m.end():]
    lines = msg.splitlines() or [type(exc).__name__]
    head = f"{program}({line or 1}): error: {lines[0]}"
    rest = lines[1:]
    context = getattr(exc, "context", "")
    if context and not rest:
        rest = context.splitlines()
    hint = getattr(exc, "hint", "")
    if hint and not any(r.startswith("hint:") for r in rest):
        rest.append(f"hint: {hint}")
    return "\n".join([head, *rest])


def p4c_main(argv: list[str]) -> int:
    """``p4c-bm2-ss`` as sfclab's :func:`~sfclab.codegen.p4c.run_p4c` calls it."""
    ap = _Parser(prog="p4c-bm2-ss", add_help=False)
    ap.add_argument("--arch", default="v1model")
    ap.add_argument("--std", default="p4-16")
    ap.add_argument("--target", default="bmv2")
    ap.add_argument("-o", dest="out")
    ap.add_argument("--p4runtime-files", default="")
    ap.add_argument("--version", action="store_true")
    ap.add_argument("-h", "--help", action="store_true")
    ap.add_argument("program", nargs="?")
    try:
        args = ap.parse_args(argv)
    except _ArgError as e:
        print(f"p4c-bm2-ss: error: {e}", file=sys.stderr)
        return 1
    if args.help:
        print("usage: p4c-bm2-ss [--arch v1model] [--std p4-16] [-o OUT.json] "
              "[--p4runtime-files FILES] PROGRAM.p4\n"
              f"({COMPILER_NAME}: checks the program with sfclab's model switch)")
        return 0
    if args.version:
        print(f"p4c-bm2-ss\nVersion {P4C_VERSION}")
        return 0
    if args.program is None:
        print("error: No input files specified", file=sys.stderr)
        return 1
    if args.arch != "v1model" or args.std not in ("p4-16", "p416"):
        print(f"error: the stand-in p4c-bm2-ss compiles v1model P4_16 only "
              f"(got --arch {args.arch} --std {args.std})", file=sys.stderr)
        return 1
    try:
        text = Path(args.program).read_text()
    except (OSError, UnicodeDecodeError) as e:
        print(f"error: cannot read {args.program}: {getattr(e, 'strerror', None) or e}",
              file=sys.stderr)
        return 1

    from sfclab.codegen.p4info import build_p4info, p4info_json, p4info_text
    from sfclab.p4 import check_program, parse_p4
    from sfclab.targets.model import ModelSwitch

    try:
        # what p4c's front end refuses (extern signatures as v1model.p4 declares them for
        # the program's V1MODEL_VERSION, declaration before use), the stand-in refuses too
        check_program(parse_p4(text, source=args.program), text=text)
        # a newline keeps ModelSwitch from taking a one-line program for a file name
        switch = ModelSwitch(text if "\n" in text else text + "\n")
        info = build_p4info(switch.program)
        doc = standin_json(text, switch, args.program)
    except Exception as e:          # the program's errors, whatever raises them
        print(_p4c_error(args.program, e), file=sys.stderr)
        return 1
    out = Path(args.out) if args.out else Path(Path(args.program).with_suffix(".json").name)
    try:
        out.write_text(json.dumps(doc, indent=2) + "\n")
        for name in filter(None, args.p4runtime_files.split(",")):
            path = Path(name)
            if path.suffix == ".json":
                path.write_text(p4info_json(info))
            elif path.suffix == ".bin":
                path.write_bytes(info.SerializeToString())
            else:
                path.write_text(p4info_text(info))
    except OSError as e:
        print(f"error: cannot write the output: {e.strerror}: {e.filename}", file=sys.stderr)
        return 1
    return 0


# -- simple_switch_grpc --------------------------------------------------------------------------

SWITCH_HELP = """\
Usage: SWITCH_NAME [options] <path to JSON config file>
({compiler} companion: sfclab's model switch behind BMv2's interfaces)
Options:
  -h [ --help ]                Display this help message
  -i [ --interface ] arg       <port-num>@<interface-name>: Attach network
                               interface <interface-name> as port <port-num>
                               (accepted, not attached by the stand-in)
  --use-files arg              Read/write packets from files (interface X
                               corresponds to two files X_in.pcap and
                               X_out.pcap). Argument is the time to wait (in
                               seconds) before starting to process the packet
                               files.
  --packet-in arg              Enable receiving packet on this (nanomsg) socket.
                               The --interface options will be ignored.
  --thrift-port arg            TCP port on which to run the Thrift runtime
                               server (taken on 0.0.0.0, default 9090; not served)
  --device-id arg              Device ID, used to identify the device in IPC
                               messages (default 0)
  --nanolog arg                IPC socket to use for nanomsg pub/sub logs
  --log-console                Enable logging on stdout
  --log-file arg               Enable logging to given file
  --log-level arg              Set log level, supported values are 'trace',
                               'debug', 'info', 'warn', 'error', off'
  --log-flush                  If used with '--log-file', the logger will
                               flush to disk after every log message
  --notifications-addr arg     Specify the nanomsg address to use for
                               notifications (accepted, not used)
  -v [ --version ]             Display version information
  --no-p4                      Enable the switch to start without an input
                               config

Target specific options (after --):
  --grpc-server-addr arg       Bind gRPC server to given address
                               [default is 0.0.0.0:9559]
  --cpu-port arg               Choose a numerical value for the CPU port
"""

_LEVELS = ("trace", "debug", "info", "warn", "error", "off")


def _switch_args(argv: list[str]):
    if "--" in argv:
        i = argv.index("--")
        main_args, target_args = argv[:i], argv[i + 1:]
    else:
        main_args, target_args = argv, []
    ap = _Parser(prog="simple_switch_grpc", add_help=False, allow_abbrev=False)
    ap.add_argument("-h", "--help", action="store_true")
    ap.add_argument("-v", "--version", action="store_true")
    ap.add_argument("-i", "--interface", action="append", default=[])
    ap.add_argument("--use-files")
    ap.add_argument("--packet-in")
    ap.add_argument("--thrift-port", type=int)
    ap.add_argument("--device-id", type=int, default=0)
    ap.add_argument("--nanolog")
    ap.add_argument("--log-console", action="store_true")
    ap.add_argument("--log-file")
    ap.add_argument("--log-level", choices=_LEVELS)
    ap.add_argument("--log-flush", action="store_true")
    ap.add_argument("--notifications-addr")
    ap.add_argument("--no-p4", action="store_true")
    ap.add_argument("json", nargs="?")
    tp = _Parser(prog="simple_switch_grpc --", add_help=False, allow_abbrev=False)
    tp.add_argument("--grpc-server-addr", default="0.0.0.0:9559")
    tp.add_argument("--cpu-port", type=int)
    return ap.parse_args(main_args), tp.parse_args(target_args)


class _Log:
    """Log lines to stdout (flushed) and to ``--log-file`` when given."""

    def __init__(self, path: str | None, level: str | None) -> None:
        self.file = open(path, "a") if path else None     # noqa: SIM115 - closed in close()
        self.quiet = level in ("warn", "error", "off")
        self.lock = threading.Lock()

    def __call__(self, msg: str, *, info: bool = False) -> None:
        """A line of the stand-in's own; *info* lines (one per packet) follow --log-level."""
        if not (info and self.quiet):
            self.raw(f"stand-in simple_switch_grpc: {msg}")

    def raw(self, line: str) -> None:
        with self.lock:
            print(line, flush=True)
            if self.file is not None:
                self.file.write(line + "\n")
                self.file.flush()

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None


def _make_server_class():
    from finsy.proto import p4r, rpc_code

    from sfclab.targets.bmv2 import events as E
    from sfclab.targets.model.p4rt import P4RuntimeModelServer
    from sfclab.targets.model.p4rt.codec import _fail

    class StandinBmv2Server(P4RuntimeModelServer):
        """The model's P4Runtime server taking the stand-in BMv2 JSON as device config;
        packets move through :class:`standin_datapath.Datapath` (simple_switch's queues)."""

        def __init__(self, *, device_id: int, cpu_port: int, log: _Log) -> None:
            super().__init__(device_id=device_id, cpu_port=cpu_port)
            self.log = log
            self.events = None              # standin_nanopub.NanoPub, when --nanolog is on
            self.datapath = None            # standin_datapath.Datapath
            self.config_loaded = threading.Event()

        def _verify(self, config):
            try:
                doc, text = decode_standin_json(config.p4_device_config)
            except ValueError as e:
                _fail(rpc_code.INVALID_ARGUMENT, str(e))
            inner = p4r.ForwardingPipelineConfig()
            inner.CopyFrom(config)
            inner.p4_device_config = text.encode()
            pl = super()._verify(inner)
            pl.config = config              # Get… gives the JSON back, as BMv2 does
            pl.standin_ids = StandinIds.from_json(doc)
            return pl

        def _read(self, request):
            """BMv2 1.15.5's P4Runtime server reads no registers: the whole Read fails."""
            if any(e.WhichOneof("entity") == "register_entry" for e in request.entities):
                _fail(rpc_code.UNIMPLEMENTED, "Register reads are not supported yet")
            return super()._read(request)

        def _w_register_entry(self, pl, re_, op, undo):
            """... nor writes them: each register update fails (the Thrift runtime,
            :class:`_ThriftRegisters`, reads and writes them)."""
            _fail(rpc_code.UNIMPLEMENTED, "Register writes are not supported yet")

        def _activate(self, pl) -> None:
            super()._activate(pl)
            self.log(f"pipeline committed ({len(pl.switch.tables)} tables)")
            self.publish([E.pack_message(E.CONFIG_CHANGE, switch_id=self.device_id)])
            # SwitchWContexts::start_and_return waits for the first config, then starts
            # the device manager (packet-in socket, pcap reader) and the packet threads.
            self.config_loaded.set()

        def to_controller(self, result) -> None:
            """Packet-ins and digests to the P4Runtime client (the model server's own)."""
            super().deliver(result)

        def deliver(self, result) -> None:
            """A P4Runtime packet-out the model ran: it enters on the CPU port with the
            next packet id, like any packet."""
            if self.datapath is None:
                return super().deliver(result)
            pid = next(self.datapath.ids)
            self.publish([E.pack_message(E.PACKET_IN, self.cpu_port, switch_id=self.device_id,
                                         packet_id=pid)])
            self.datapath.after_ingress(pid, result)

        def publish(self, msgs: list[bytes]) -> None:
            if self.events is None:
                return
            for m in msgs:
                try:
                    self.events.send(m)
                except Exception as e:      # noqa: BLE001 - a closed socket at exit
                    self.log(f"event logger: cannot publish: {e}")
                    return

    return StandinBmv2Server


class _PacketIn:
    """BMv2's packet-in device manager (``dev_mgr_packet_in.cpp``): a PAIR socket the
    switch binds at start; its receive loop runs once a config is loaded.  Sending a
    packet out blocks while the peer does not read (``nn_sendmsg`` without a timeout),
    and NNG's default buffers are kept."""

    def __init__(self, pynng, address: str, log: _Log) -> None:
        self.pynng = pynng
        self.log = log
        self.datapath = None
        self.sock = pynng.Pair0(recv_timeout=100)
        self.sock.listen(address)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._receive, daemon=True, name="packet-in")

    def start(self, datapath) -> None:
        self.datapath = datapath
        self.thread.start()

    def transmit(self, port: int, data: bytes) -> bool:
        try:
            self.sock.send(PACKET_HEADER.pack(PACKET_OUT, port, len(data)) + bytes(data))
            return True
        except self.pynng.Closed:
            return False

    def _receive(self) -> None:
        pynng = self.pynng
        while not self.stop.is_set():
            try:
                msg = self.sock.recv()
            except pynng.Timeout:
                continue
            except pynng.Closed:
                return
            try:
                self._handle(bytes(msg))
            except Exception as e:      # noqa: BLE001 - one bad message must not stop the loop
                self.log(f"packet-in socket: error handling a message: {e!r}")

    def _handle(self, msg: bytes) -> None:
        if len(msg) < PACKET_HEADER.size:
            self.log(f"packet-in socket: message of {len(msg)} bytes, shorter than its header")
            return
        type_, port, more = PACKET_HEADER.unpack_from(msg)
        if type_ in (PORT_ADD, PORT_REMOVE, PORT_SET_STATUS):
            return
        if type_ == INFO_REQ:
            self.sock.send(PACKET_HEADER.pack(INFO_REP, port, more)
                           + struct.pack("<i", INFO_STATUS_NOT_SUPPORTED))
            return
        if type_ != PACKET_IN:
            self.log(f"packet-in socket: invalid message type {type_} received")
            return
        data = msg[PACKET_HEADER.size:PACKET_HEADER.size + max(more, 0)]
        self.log(f"packet in on port {port} ({len(data)} bytes)", info=True)
        self.datapath.receive(port, data)

    def close(self) -> None:
        self.stop.set()
        self.sock.close()
        if self.thread.is_alive():
            self.thread.join(2)


class _PcapPorts:
    """``--use-files WAIT``: port N reads ``NAME_in.pcap`` and writes ``NAME_out.pcap``
    (``-i N@NAME``).  Both are opened when the port is added, at start (a missing input
    file is fatal, as libpcap's ``pcap_open_offline`` failing is for BMv2); once a config
    is loaded the reader waits WAIT seconds, then replays every packet of every file in
    timestamp order (not in real time) and stops.  A packet sent to a port without files
    is ignored."""

    def __init__(self, interfaces: dict[int, str], wait: int, log: _Log) -> None:
        from sfclab.targets.bmv2.target import write_pcap

        self.wait = wait
        self.log = log
        self.packets: list[tuple[tuple[int, int], int, int, bytes]] = []
        self.out: dict[int, Any] = {}
        for index, (port, name) in enumerate(interfaces.items()):
            path = Path(f"{name}_in.pcap")
            if not path.is_file():
                raise FileNotFoundError(f"{path}: No such file or directory")
            for ts, frame in _pcap_records(path):
                self.packets.append((ts, index, port, frame))
            out = Path(f"{name}_out.pcap")
            write_pcap(out, [])
            self.out[port] = open(out, "ab")     # noqa: SIM115 - closed in close()
        self.packets.sort(key=lambda p: (p[0], p[1]))
        self.thread = threading.Thread(target=self._replay, daemon=True, name="pcap-reader")
        self.datapath = None

    def start(self, datapath) -> None:
        self.datapath = datapath
        self.thread.start()

    def _replay(self) -> None:
        import time

        time.sleep(self.wait)
        for _, _, port, frame in self.packets:
            self.datapath.receive(port, frame)
        self.log(f"pcap reader: end of all input files ({len(self.packets)} packets)")

    def transmit(self, port: int, data: bytes) -> bool:
        f = self.out.get(port)
        if f is not None:
            f.write(struct.pack("<IIII", 0, 0, len(data), len(data)) + bytes(data))
            f.flush()                       # pcap_dump_flush after every packet
        return True

    def close(self) -> None:
        for f in self.out.values():
            f.close()


def _pcap_records(path: Path) -> list[tuple[tuple[int, int], bytes]]:
    """``((seconds, microseconds), frame)`` of each record of a classic pcap file."""
    data = path.read_bytes()
    out, off = [], 24
    order = "<" if data[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    rec = struct.Struct(order + "IIII")
    while off + rec.size <= len(data):
        sec, usec, incl, _ = rec.unpack_from(data, off)
        off += rec.size
        out.append(((sec, usec), data[off:off + incl]))
        off += incl
    return out


def _thrift_port(port: int | None, log: _Log):
    """BMv2's Thrift server takes *port* (9090 by default) on every address, 0.0.0.0;
    when that port is taken it says so and serves nothing more.  The stand-in takes the
    port the same way (bound, so that a second switch clashes as BMv2 does).  Returns the
    socket (listening), or None when the port is taken."""
    import socket

    port = 9090 if port is None else port
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        s.bind(("0.0.0.0", port))
    except OSError as e:
        s.close()
        log.raw(f"Thrift: TServerSocket::listen() Could not bind to port {port}")
        log.raw(f"Thrift returned an exception when trying to bind to port {port}")
        log.raw(f"The exception is: Could not bind: {e.strerror}")
        log.raw("You may have another process already using this port, maybe another "
                "instance of bmv2.")
        return None
    s.listen()
    log.raw(f"Starting Thrift server on port {port}")
    return s


class _ThriftRegisters:
    """BMv2's Thrift runtime (``standard`` service, buffered transport, binary protocol),
    the register calls of ``standard.thrift`` over the model's registers:
    ``bm_register_read``, ``bm_register_read_all``, ``bm_register_write``,
    ``bm_register_reset`` (``InvalidRegisterOperation``: INVALID_REGISTER_NAME = 1,
    INVALID_INDEX = 2, as BMv2 answers).  Any other method of the service gets Thrift's
    ``TApplicationException`` (the stand-in does not do it; BMv2 does)."""

    def __init__(self, listener, server, log: _Log) -> None:
        self.listener, self.server, self.log = listener, server, log
        threading.Thread(target=self._accept, daemon=True, name="standin-thrift").start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn) -> None:
        from sfclab.targets.bmv2.thrift import STRUCT, _Reader, decode_value

        r = _Reader(conn.recv)
        with conn:
            while True:
                try:
                    head = r.unpack("I")
                    name = r.take(r.unpack("i")).decode()
                    seq = r.unpack("i")
                    args = decode_value(r, STRUCT)
                except (ConnectionError, OSError, struct.error):
                    return
                service, _, method = name.partition(":")
                reply = self._call(service, method, args)
                conn.sendall(_thrift_message(reply, name, seq, head))

    def _call(self, service: str, method: str, args: dict):
        """``(kind, body)``: a REPLY's result struct, or an EXCEPTION's."""
        if service != "standard" or method not in (
                "bm_register_read", "bm_register_read_all", "bm_register_write",
                "bm_register_reset"):
            return "exception", (f"Invalid method name: '{method}' (the stand-in serves "
                                 f"register calls only)", 1)
        name = args.get(2, b"").decode()
        with self.server._lock:
            pl = self.server.pipeline
            reg = next((r for r in (pl.registers.values() if pl else ())
                        if r.preamble.name == name), None)
            if reg is None:
                return "reply", (None, 1)
            cells = pl.extern("register", reg).cells
            mask = (1 << 64) - 1
            if method == "bm_register_read_all":
                return "reply", ([_signed64(v & mask) for v in cells], None)
            if method == "bm_register_reset":
                cells[:] = [0] * len(cells)
                return "reply", (None, None)
            index = args.get(3, -1)
            if not 0 <= index < len(cells):
                return "reply", (None, 2)
            if method == "bm_register_read":
                return "reply", (_signed64(cells[index] & mask), None)
            cells[index] = args.get(4, 0) & mask
            return "reply", (None, None)


def _signed64(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def _thrift_message(reply, name: str, seq: int, head: int) -> bytes:
    """A REPLY (result field 0, or exception field 1: ``{1: code}``) or an EXCEPTION
    (``TApplicationException{1: message, 2: type}``) answering call *name* / *seq*."""
    kind, body = reply
    out = struct.pack(">I", (head & 0xFFFF0000) | (2 if kind == "reply" else 3))
    out += struct.pack(">i", len(name)) + name.encode() + struct.pack(">i", seq)
    if kind == "exception":
        text, typ = body
        out += struct.pack(">bhi", 11, 1, len(text)) + text.encode()
        out += struct.pack(">bhi", 8, 2, typ)
    else:
        value, code = body
        if code is not None:
            out += struct.pack(">bh", 12, 1) + struct.pack(">bhi", 8, 1, code) + b"\0"
        elif isinstance(value, list):
            out += struct.pack(">bhbi", 15, 0, 10, len(value))
            out += b"".join(struct.pack(">q", v) for v in value)
        elif value is not None:
            out += struct.pack(">bhq", 10, 0, value)
    return out + b"\0"


def switch_main(argv: list[str]) -> int:
    """``simple_switch_grpc`` with the command line sfclab builds."""
    if "-h" in argv or "--help" in argv:
        print(SWITCH_HELP.format(compiler=COMPILER_NAME), end="")
        return 0
    try:
        args, targs = _switch_args(argv)
    except _ArgError as e:
        print(f"Error while parsing command line arguments: {e}", flush=True)
        return 1
    if args.version:
        print(SWITCH_VERSION)
        return 0
    if args.use_files is not None and not args.use_files.isdigit():
        print(f"Error while parsing command line arguments: --use-files takes the seconds "
              f"to wait before reading the files, not {args.use_files!r}", flush=True)
        return 1
    for spec in args.interface:
        port, _, name = spec.partition("@")
        if not port.isdigit() or not name:
            print(f"Error while parsing command line arguments: bad interface {spec!r} "
                  f"(expected <port-num>@<interface-name>)", flush=True)
            return 1
    if args.json is not None:
        print("stand-in: a JSON on the command line is not supported: start with --no-p4 and "
              "push the program with P4Runtime", flush=True)
        return 1
    if not args.no_p4:
        print("Error: you need to provide a JSON config file or use --no-p4", flush=True)
        return 1
    log = _Log(args.log_file, args.log_level)
    try:
        return _run_switch(args, targs, log)
    finally:
        log.close()


def _run_switch(args, targs, log: _Log) -> int:
    from standin_datapath import Datapath

    try:
        import pynng
    except ImportError:
        pynng = None
    if args.packet_in and pynng is None:
        log("--packet-in needs pynng (pip install pynng)")
        return 1
    cpu_port = targs.cpu_port
    if cpu_port is None:
        log("no --cpu-port: the model's CPU port stays 255 (a real BMv2 would have none)")
        cpu_port = 255
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())

    server = _make_server_class()(device_id=args.device_id, cpu_port=cpu_port, log=log)
    thrift = None
    ports: _PacketIn | _PcapPorts | None = None
    datapath = None
    try:
        if args.nanolog:
            from standin_nanopub import NanoPub

            # nanomsg's PUB: a subscriber that falls behind loses messages
            server.events = NanoPub(args.nanolog)
            log(f"event logger on {args.nanolog}")
        interfaces = {}
        for spec in args.interface:
            port, _, name = spec.partition("@")
            interfaces[int(port)] = name
        if args.use_files is not None:          # init_from_options_parser: files first
            for port, name in interfaces.items():
                log.raw(f"Adding interface {name} as port {port} (files)")
            try:
                ports = _PcapPorts(interfaces, int(args.use_files), log)
            except OSError as e:
                log.raw(f"[critical] {e}")      # pcap_fatal_error: critical, then exit(1)
                return 1
        elif args.packet_in:
            ports = _PacketIn(pynng, args.packet_in, log)
            if interfaces:
                log("--packet-in given: the -i interfaces are ignored")
            log(f"packet-in socket on {args.packet_in}")
        elif interfaces:
            log("the -i interfaces are not attached (the stand-in moves packets only "
                "through --packet-in or --use-files)")
        datapath = server.datapath = Datapath(
            server, publish=server.publish, log=log,
            transmit=ports.transmit if ports is not None else None)
        thrift = _thrift_port(args.thrift_port, log)
        if thrift is None:
            # BMv2 1.15.5 then never serves P4Runtime: it hangs (seen with -i interfaces)
            # or dies of a segmentation fault (most often, seen without)
            if not interfaces:
                os.kill(os.getpid(), signal.SIGSEGV)
            while not stop.wait(0.2):
                pass
            return 0
        _ThriftRegisters(thrift, server, log)
        if args.notifications_addr:
            log(f"--notifications-addr {args.notifications_addr}: no notifications are sent")
        try:
            address = server.start(targs.grpc_server_addr)
        except Exception as e:          # noqa: BLE001 - a busy port, a bad address
            log(f"cannot serve P4Runtime on {targs.grpc_server_addr}: {e}")
            return 1
        log(f"serving P4Runtime on {address} (device {args.device_id}, CPU port {cpu_port})")
        # BMv2 prints this with std::cout, block-buffered when stdout is not a terminal:
        # it shows when something flushes later, if ever (wait for the port, not for it)
        print(f"Server listening on {targs.grpc_server_addr}")
        while not stop.is_set() and not server.config_loaded.wait(0.2):
            pass
        if server.config_loaded.is_set():
            datapath.start()
            if ports is not None:
                ports.start(datapath)
        while not stop.wait(0.2):
            pass
        log("SIGTERM: stopping")
        return 0
    except Exception as e:              # noqa: BLE001 - a socket that cannot listen …
        log(f"error: {e}")
        return 1
    finally:
        if thrift is not None:
            thrift.close()
        server.stop()
        if datapath is not None:
            datapath.stop()
        if ports is not None:
            ports.close()
        if server.events is not None:
            server.events.close()


# -- entry points --------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in ("p4c", "switch"):
        print("usage: standin_bmv2.py {p4c|switch} ARGS...", file=sys.stderr)
        return 2
    tool, rest = argv[0], argv[1:]
    return p4c_main(rest) if tool == "p4c" else switch_main(rest)


_LAUNCHER = """\
#!{python}
# {what}: the sfclab test suite's stand-in (sfclab's model inside; see standin_bmv2.py).
import sys
sys.path.insert(0, {here!r})
import standin_bmv2
sys.exit(standin_bmv2.main([{tool!r}, *sys.argv[1:]]))
"""


def install_standins(directory: Path) -> tuple[Path, Path]:
    """Write ``simple_switch_grpc`` and ``p4c-bm2-ss`` executables into *directory*
    (created if needed); returns ``(switch, p4c)``, ready for ``SFCLAB_BMV2`` and
    ``SFCLAB_P4C``."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    out = []
    for name, tool in (("simple_switch_grpc", "switch"), ("p4c-bm2-ss", "p4c")):
        path = d / name
        path.write_text(_LAUNCHER.format(python=sys.executable, what=name, here=str(HERE),
                                         tool=tool))
        os.chmod(path, 0o755)
        out.append(path)
    return out[0], out[1]


if __name__ == "__main__":
    sys.exit(main())
