"""P4Info for a program in sfclab's P4 AST, with the names and ids p4c assigns.

A P4Runtime client talks to a switch in ids, and the switch's ids come from the
compiler that built its pipeline.  This module computes the P4Info that
``p4c --p4runtime-files`` (v1model) or bf-p4c (TNA) would write for the same
program, following their documented rules (``control-plane/`` in p4lang/p4c):

* **ids** -- ``prefix << 24 | (jenkins_one_at_a_time(name) & 0xffffff)``, the
  prefix byte being the resource type of ``p4info.proto``'s ``P4Ids.Prefix``
  (action 0x01, table 0x02, controller header 0x04, register 0x16 ...).  Names
  of one type are hashed in sorted order and a collision is resolved by linear
  probing of the hash value; an ``@id`` annotation fixes an id (its prefix byte
  is added when missing).
* **names** -- the fully qualified control-plane names of
  :func:`sfclab.p4.names.qualified_objects`; TNA prefixes tables and extern
  instances with the pipeline's name.  **Aliases** are the shortest suffix of
  dot-separated components that no other control-plane symbol shares.
* **what appears** -- like p4c's front end, only tables that are applied and
  actions that a table lists or the apply block calls; an action called only
  from other actions is inlined away.  ``NoAction`` is core.p4's.
* match fields are named after the key expression (``hdr.ipv4.$valid$`` for
  ``isValid()``) unless ``@name`` says otherwise; field, parameter and
  packet-metadata ids count from 1, around any ``@id``.

>>> from sfclab.p4 import parse_p4
>>> prog = parse_p4('''
... #include <core.p4>
... #include <v1model.p4>
... header h_t { bit<32> dst; }
... struct hs { h_t ipv4; }
... control ingress(inout hs hdr, inout standard_metadata_t sm) {
...     action fwd(bit<9> port) { sm.egress_spec = port; }
...     table route { key = { hdr.ipv4.dst: lpm; } actions = { fwd; NoAction; } }
...     apply { route.apply(); }
... }
... V1Switch(P(), V(), ingress(), E(), C(), D()) main;  // other blocks elided''')
>>> info = build_p4info(prog)
>>> t = info.tables[0]
>>> t.preamble.name, hex(t.preamble.id), t.match_fields[0].name, t.size
('ingress.route', '0x26abf88', 'hdr.ipv4.dst', 1024)
>>> [(a.preamble.alias, a.preamble.id) for a in info.actions]
[('NoAction', 21257015), ('fwd', 19967260)]
"""

from __future__ import annotations

from .build import ARCHES, build_p4info
from .ids import PREFIX, TNA_PREFIX, SymbolTable, field_ids, jenkins_hash, probe_id
from .text import compare_p4info, p4info_from_text, p4info_json, p4info_text

__all__ = [
    "build_p4info", "p4info_text", "p4info_json", "p4info_from_text", "compare_p4info",
    "jenkins_hash", "probe_id", "SymbolTable", "field_ids", "PREFIX", "TNA_PREFIX",
    "ARCHES",
]
