"""Flooding out of the box: the multicast groups and ``flood`` entries a switch needs.

The library's ``flood`` NF sets the packet's multicast group from its
``flood_groups`` table (ingress port and VLAN id, ternary).  A flood must leave
by every port of the switch *but the one the packet came in on*, and which ports
exist is the target's to say (the model's port set, BMv2's interfaces), so this
is written at push time, not derived with the program's entries:

* one multicast group per ingress port ``p`` of the port set:
  ``FLOOD_GROUP_BASE + p``, replicas on every other port;
* in every slot running ``flood``, one ``flood_groups`` entry per port:
  ``sfc.ingress_port == p -> set_mcast_grp(FLOOD_GROUP_BASE + p)``, priority 1
  (the lowest: an entry of yours, e.g. per VLAN, wins);
* group :data:`ALL_PORTS_GROUP` (1): every port, the NF's default action's group,
  for packets from a port outside the set.

>>> from sfclab.compiler import compile
>>> from sfclab.codegen.compose import compose
>>> entries, groups = flood_config(compose(compile("chain a: flood")), [1, 2, 3])
>>> print(entries[0].table, entries[0].match, entries[0].params)
SfcIngress.slot0_flood.flood_groups (('sfc.ingress_port', Exact(value=1)),) (('grp', 16385),)
>>> [(g.id, g.ports) for g in groups]
[(1, (1, 2, 3)), (16385, (2, 3)), (16386, (1, 3)), (16387, (1, 2))]
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..codegen.entries import Exact, TableEntry
from ..errors import TargetError

__all__ = ["MulticastGroup", "flood_config", "flood_group", "port_set", "FLOOD_GROUP_BASE",
           "ALL_PORTS_GROUP", "DEFAULT_PORTS"]

#: Group ``FLOOD_GROUP_BASE + p`` floods a packet that came in on port ``p``.  BMv2's
#: P4Runtime server (PI) takes multicast group ids below 32768 only.
FLOOD_GROUP_BASE = 0x4000
#: The group ``flood`` sends to without a matching entry: every port.
ALL_PORTS_GROUP = 1
#: The data-plane ports of a switch that does not say which it has (the embedded
#: model; BMv2 on its packet-in socket).
DEFAULT_PORTS = tuple(range(1, 9))
_FLOOD_NF, _FLOOD_TABLE, _FLOOD_ACTION, _PORT_KEY = ("flood", "flood_groups", "set_mcast_grp",
                                                     "sfc.ingress_port")


@dataclass(frozen=True, slots=True)
class MulticastGroup:
    """A multicast group of the packet replication engine: one replica per port."""

    id: int
    ports: tuple[int, ...]
    note: str = ""

    def __str__(self) -> str:
        return f"multicast group {self.id}: ports {', '.join(map(str, self.ports)) or 'none'}" \
               + (f"  ({self.note})" if self.note else "")


def port_set(ports: Iterable[int] | None, cpu_port: int | None = None) -> tuple[int, ...]:
    """*ports* sorted, checked (9-bit ports, the CPU port left out).

    >>> port_set([3, 1, 2, 1, 255], cpu_port=255)
    (1, 2, 3)
    """
    out = set()
    for p in ports or ():
        if isinstance(p, bool) or not isinstance(p, int) or not 0 <= p < 512:
            raise TargetError(f"port {p!r} is not a switch port (0..511)",
                              hint="give the switch's data-plane ports, e.g. [1, 2, 3, 4]")
        if p != cpu_port:
            out.add(p)
    return tuple(sorted(out))


def _flood_slots(comp) -> list:
    """The slots of the library's ``flood`` (its table and action as the library's)."""
    defs = {d.name: d for d in comp.nfs}
    out = []
    for slot in comp.slots:
        d = defs.get(slot.nf)
        if slot.nf != _FLOOD_NF or d is None:
            continue
        t = next((t for t in d.tables if t.name == _FLOOD_TABLE), None)
        if t is not None and _PORT_KEY in dict(t.keys) and _FLOOD_ACTION in t.actions:
            out.append(slot)
    return out


def flood_config(comp, ports: Iterable[int]) -> tuple[list[TableEntry], list[MulticastGroup]]:
    """The ``flood_groups`` entries and the multicast groups that make every ``flood``
    slot of *comp* (a :class:`~sfclab.codegen.compose.Composition`) flood out of
    *ports* minus the ingress port; nothing when no slot runs ``flood``."""
    slots = _flood_slots(comp)
    if not slots:
        return [], []
    ports = port_set(ports)
    groups = [MulticastGroup(ALL_PORTS_GROUP, ports, "flood: every port")]
    groups += [MulticastGroup(FLOOD_GROUP_BASE + p, tuple(q for q in ports if q != p),
                              f"flood from port {p}: every other port") for p in ports]
    entries = [TableEntry(comp.table(f"{s.instance}.{_FLOOD_TABLE}", s.pipelet),
                          ((_PORT_KEY, Exact(p)),),
                          comp.action(f"{s.instance}.{_FLOOD_ACTION}", s.pipelet),
                          (("grp", FLOOD_GROUP_BASE + p),), 1, f"nf:{s.instance}",
                          f"flood from port {p} to every other port")
               for s in slots for p in ports]
    return entries, groups


def flood_group(actions: Iterable[tuple[str, Iterable[tuple[str, int]]]]) -> int | None:
    """The multicast group ``flood`` chose: the argument of the last ``set_mcast_grp``
    among *actions* (``(qualified name, arguments)``, in the order they ran); None when
    none ran or its argument is unknown.

    >>> flood_group([("SfcIngress.slot0_flood.set_mcast_grp", [("grp", 16385)]),
    ...              ("SfcIngress.slot1_l3fwd.route", [("port", 2)])])
    16385
    """
    out = None
    for name, args in actions:
        if name.rpartition(".")[2] == _FLOOD_ACTION:
            out = next((v for k, v in args if k == "grp"), None)
    return out
