"""What the chain compiler needs to know about each network function (NF).

An :class:`NFInfo` is the compiler's view of one NF type: its canonical name, the
names the papers use for it, its protocol layer (for ordering pipelines), its
offloadability (P4SFC), the metadata fields it sets (usable in chain
conditions), and a resource estimate.  An :class:`NFCatalog` holds them and
resolves names case-insensitively, with a "did you mean" for typos.

The NF library's catalogue (:func:`sfclab.p4.catalog.load_default`) is built
from the ``.p4`` files in ``p4/nf/`` and their manifests.

>>> cat = NFCatalog([NFInfo(name="firewall", layer=4, aliases=("FW",), fields={"verdict": 1})])
>>> cat.resolve("fw").name, cat.resolve("FW").field_width("verdict")
('firewall', 1)
"""

from __future__ import annotations

import re
from functools import lru_cache
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from .errors import CatalogError, did_you_mean

__all__ = [
    "NFInfo",
    "NFCatalog",
    "ENDPOINTS",
    "GLOBAL_FIELDS",
    "OFFLOAD_CLASSES",
    "normalize_name",
]

#: Built-in chain end points.  They are not NFs and are never in a catalogue.
ENDPOINTS = ("input", "output", "drop", "cpu")

#: FlexMesh's per-packet parameters, available on every NF: the NF's metadata
#: value (for if-else / multibranch) and its loop counter.  Name -> bit width.
GLOBAL_FIELDS: Mapping[str, int] = MappingProxyType(
    {"global_metadata": 32, "global_counter": 8}
)
#: Other spellings of the global fields (the FlexMesh paper writes ``global_md``).
GLOBAL_FIELD_ALIASES: Mapping[str, str] = MappingProxyType(
    {"global_md": "global_metadata", "metadata": "global_metadata", "counter": "global_counter"}
)

#: P4SFC's offloadability classes.
OFFLOAD_CLASSES = ("fully", "partially", "non")

_SEP = re.compile(r"[\s\-]+")


@lru_cache(maxsize=4096)
def normalize_name(name: str) -> str:
    """Case- and spacing-insensitive form of an NF name.

    >>> normalize_name("Heavy Hitter"), normalize_name("L3-SW"), normalize_name("IP_SG")
    ('heavy_hitter', 'l3_sw', 'ip_sg')
    """
    return _SEP.sub("_", name.strip()).lower()


@dataclass(frozen=True, slots=True, kw_only=True)
class NFInfo:
    """The compiler's view of one NF type."""

    name: str
    layer: int
    offload: str = "fully"
    aliases: tuple[str, ...] = ()
    fields: Mapping[str, int] = field(default_factory=dict)
    tables: int = 1
    stages: int = 1
    description: str = ""
    source: str | None = None

    def __post_init__(self) -> None:
        if self.offload not in OFFLOAD_CLASSES:
            raise CatalogError(
                f"NF {self.name!r}: offload must be one of {', '.join(OFFLOAD_CLASSES)}, "
                f"not {self.offload!r}"
            )
        object.__setattr__(self, "fields", MappingProxyType(dict(self.fields)))

    def field_width(self, name: str) -> int | None:
        """Width of a metadata field this NF sets (global fields included), or None."""
        name = GLOBAL_FIELD_ALIASES.get(name, name)
        if name in GLOBAL_FIELDS:
            return GLOBAL_FIELDS[name]
        return self.fields.get(name)

    def field_names(self) -> list[str]:
        return [*GLOBAL_FIELDS, *self.fields]


class NFCatalog:
    """NF types by name, resolving the papers' aliases case-insensitively."""

    def __init__(self, infos: Iterable[NFInfo] = ()) -> None:
        self._by_name: dict[str, NFInfo] = {}
        self._index: dict[str, str] = {}
        for info in infos:
            self.add(info)

    def add(self, info: NFInfo, *, replace: bool = False) -> None:
        """Add *info*; a name or alias that is already taken is an error unless *replace*."""
        keys = {normalize_name(k) for k in (info.name, *info.aliases)}
        for key in keys:
            if key in ENDPOINTS:
                raise CatalogError(f"NF name {key!r} is reserved for a chain end point")
            owner = self._index.get(key)
            if owner is not None and owner != info.name and not replace:
                raise CatalogError(
                    f"NF name {key!r} of {info.name!r} is already used by {owner!r}",
                    hint="rename the NF or drop the alias",
                )
        if info.name in self._by_name:
            if not replace:
                raise CatalogError(f"NF {info.name!r} is already in the catalogue",
                                   hint="pass replace=True to redefine it")
            self.remove(info.name)
        self._by_name[info.name] = info
        for key in keys:
            self._index[key] = info.name

    def remove(self, name: str) -> None:
        info = self.resolve(name)
        del self._by_name[info.name]
        self._index = {k: v for k, v in self._index.items() if v != info.name}

    def get(self, name: str) -> NFInfo | None:
        key = self._index.get(normalize_name(name))
        return self._by_name[key] if key else None

    def resolve(self, name: str) -> NFInfo:
        """The NF called *name* (any alias, any case); :class:`CatalogError` if unknown."""
        info = self.get(name)
        if info is None:
            raise CatalogError(f"unknown NF {name!r}", hint=self.suggest(name))
        return info

    def suggest(self, name: str) -> str:
        hint = did_you_mean(normalize_name(name), self._index)
        if hint:
            return hint
        return "known NFs: " + ", ".join(sorted(self._by_name))

    def names(self) -> list[str]:
        return sorted(self._by_name)

    def copy(self) -> NFCatalog:
        return NFCatalog(self._by_name.values())

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and normalize_name(name) in self._index

    def __iter__(self) -> Iterator[NFInfo]:
        return iter(self._by_name.values())

    def __len__(self) -> int:
        return len(self._by_name)
