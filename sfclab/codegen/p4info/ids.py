"""P4Runtime ids and aliases: the resource-type prefixes, Jenkins' hash, linear
probing, :class:`SymbolTable`, and the ids of fields, parameters and metadata."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from ...errors import CompileError

__all__ = ["PREFIX", "TNA_PREFIX", "jenkins_hash", "probe_id", "SymbolTable", "field_ids"]

#: ``p4info.proto``'s ``P4Ids.Prefix`` (the top byte of an id).
PREFIX = {"action": 0x01, "table": 0x02, "value_set": 0x03, "controller_header": 0x04,
          "action_profile": 0x11, "counter": 0x12, "direct_counter": 0x13, "meter": 0x14,
          "direct_meter": 0x15, "register": 0x16, "digest": 0x17}

#: bf-p4c's ``barefoot/p4info.proto`` prefixes (the revision with DirectRegister),
#: keyed by TNA extern type: (prefix, P4Info ``extern_type_name``).
TNA_PREFIX = {"ActionProfile": (0x81, "ActionProfile"), "Counter": (0x83, "Counter"),
              "DirectCounter": (0x84, "DirectCounter"), "Meter": (0x85, "Meter"),
              "DirectMeter": (0x86, "DirectMeter"), "Register": (0x8B, "Register"),
              "DirectRegister": (0x8C, "DirectRegister"), "Digest": (0x8E, "Digest"),
              "Hash": (0x8F, "DynHash")}


def jenkins_hash(name: str) -> int:
    """Bob Jenkins' one-at-a-time hash of *name*'s bytes, as p4c computes it (32 bits).

    >>> jenkins_hash("NoAction") & 0xffffff == 21257015 & 0xffffff
    True
    """
    h = 0
    for b in name.encode():
        h = (h + b) & 0xFFFFFFFF
        h = (h + (h << 10)) & 0xFFFFFFFF
        h ^= h >> 6
    h = (h + (h << 3)) & 0xFFFFFFFF
    h ^= h >> 11
    return (h + (h << 15)) & 0xFFFFFFFF


def probe_id(source: int, prefix: int, taken: set[int] | frozenset[int]) -> int:
    """The first free id ``prefix << 24 | (value & 0xffffff)`` for value = *source*,
    *source* + 1, ... (p4c's linear probing of the hash value)."""
    for step in range(1 << 24):
        candidate = (prefix << 24) | ((source + step) & 0xFFFFFF)
        if candidate not in taken:
            return candidate
    raise CompileError(f"no free P4Runtime id is left for resource type 0x{prefix:02x}")


class SymbolTable:
    """Control-plane symbols by resource type: their ids and aliases.

    Add every symbol first (:meth:`add`), then :meth:`assign` ids: names without
    an ``@id`` are hashed in sorted order, colliding ones probe onwards.

    >>> st = SymbolTable()
    >>> st.add(0x02, "c.t"); st.add(0x02, "d.t"); st.add(0x01, "c.a"); st.assign()
    >>> st.alias("c.t"), st.alias("c.a"), st.id(0x02, "c.t") >> 24
    ('c.t', 'a', 2)
    """

    def __init__(self) -> None:
        self._ids: dict[int, dict[str, int | None]] = {}
        self._taken: set[int] = set()
        self._suffixes: Counter[tuple[str, ...]] = Counter()
        self._names: set[str] = set()

    def add(self, prefix: int, name: str, user_id: int | None = None, where: str = "") -> None:
        """Record *name* (once per type); *user_id* is its ``@id``, if any."""
        table = self._ids.setdefault(prefix, {})
        if name in table:
            return
        table[name] = self._user_id(prefix, user_id, where or name)
        if name not in self._names:
            self._names.add(name)
            parts = tuple(name.split("."))
            for k in range(1, len(parts) + 1):
                self._suffixes[parts[-k:]] += 1

    def _user_id(self, prefix: int, user_id: int | None, where: str) -> int | None:
        if user_id is None:
            return None
        top = user_id & 0xFF000000
        if top and top != prefix << 24:
            raise CompileError(f"{where}: @id {user_id:#x} has the wrong 8-bit prefix "
                               f"(resource type 0x{prefix:02x})")
        full = user_id | (prefix << 24)
        if full in self._taken:
            raise CompileError(f"{where}: @id {user_id} is assigned to multiple declarations")
        self._taken.add(full)
        return full

    def assign(self) -> None:
        """Give every symbol without an ``@id`` its hashed id."""
        for prefix in sorted(self._ids):
            table = self._ids[prefix]
            for name in sorted(n for n, i in table.items() if i is None):
                table[name] = probe_id(jenkins_hash(name), prefix, self._taken)
                self._taken.add(table[name])

    def id(self, prefix: int, name: str) -> int:
        """The id of symbol *name* of resource type *prefix*."""
        value = self._ids.get(prefix, {}).get(name)
        if value is None:
            raise CompileError(f"internal: no id for '{name}' (type 0x{prefix:02x})")
        return value

    def alias(self, name: str) -> str:
        """The shortest suffix of *name*'s components that no other symbol shares."""
        parts = tuple(name.split("."))
        for k in range(1, len(parts) + 1):
            if self._suffixes[parts[-k:]] < 2:
                return ".".join(parts[-k:])
        return name


def field_ids(user_ids: Sequence[int | None], where: str = "") -> list[int]:
    """Ids of match fields, action parameters or packet-metadata fields in order:
    the ``@id`` where given, else counting from 1 past the ids taken (p4c's
    ``FieldIdAllocator``).

    >>> field_ids([None, 1, None])
    [2, 1, 3]
    """
    taken: set[int] = set()
    for uid in user_ids:
        if uid is None:
            continue
        if uid == 0 or uid in taken:
            raise CompileError(f"{where}: @id {uid} is " + ("not valid" if uid == 0 else
                                                          "used multiple times"))
        taken.add(uid)
    out, index = [], 1
    for uid in user_ids:
        if uid is not None:
            out.append(uid)
            index += 1
            continue
        while index in taken:
            index += 1
        out.append(index)
        taken.add(index)
    return out
