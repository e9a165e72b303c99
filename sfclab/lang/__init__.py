"""The chain language (FlexMesh-style chains, P4SC sentences, P4SFC JSON intents) and
the topology language (:func:`parse_topology`, :func:`format_topology`).

All three come in through :func:`parse` and come out as one :class:`~sfclab.ir.ChainSet`::

    >>> chains = parse('''
    ... chain web match ipv4.dst == 10.0.1.0/24 && tcp.dport == 80 weight 0.6 {
    ...     input => firewall => (nat : drop ? firewall.verdict == 0);
    ...     nat => lb => l3fwd => output;
    ... }''')
    >>> for p in chains.paths(): print(p)
    web/0 [0.3]: input -> firewall -> nat -> lb -> l3fwd -> output
    web/1 [0.3]: input -> firewall -> drop
"""

from __future__ import annotations

from pathlib import Path

from ..errors import ChainSyntaxError
from ..ir.model import ChainSet
from ..nfinfo import NFCatalog
from .build import build_chains
from .format import format_chain, format_chains
from .intent import looks_like_json, parse_intents
from .parser import parse_decls
from .text import source_text
from .topology import format_topology, parse_topology, parse_topology_file

__all__ = ["parse", "parse_file", "format", "format_chain", "default_catalog",
           "parse_topology", "parse_topology_file", "format_topology"]


def default_catalog() -> NFCatalog:
    """The NF catalogue chains are checked against when none is given."""
    from ..p4.catalog import load_default

    return load_default()


def parse(text: str | bytes, *, source: str = "<string>", catalog: NFCatalog | None = None,
          into: ChainSet | None = None) -> ChainSet:
    """Parse chain text (any of the three styles) into a validated :class:`ChainSet`.

    *into* adds the chains to an existing set (names must stay unique).
    Bad input raises a :class:`~sfclab.errors.ChainError` that shows the line,
    a caret and a hint; nothing is added to *into* then.
    """
    text = source_text(text, source=source, error=ChainSyntaxError)
    cat = catalog if catalog is not None else default_catalog()
    decls = parse_intents(text, source=source) if looks_like_json(text) else \
        parse_decls(text, source=source)
    staged = ChainSet(dict(into.chains)) if into is not None else ChainSet()
    built = build_chains(decls, cat, text=text, source=source, into=staged)
    if into is not None:
        into.chains = built.chains
        return into
    return built


def parse_file(path: str | Path, *, catalog: NFCatalog | None = None,
               into: ChainSet | None = None) -> ChainSet:
    """Parse a ``.sfc`` (chain text) or ``.json`` (P4SFC intents) file."""
    p = Path(path)
    return parse(p.read_bytes(), source=str(p), catalog=catalog, into=into)


def format(chains) -> str:  # noqa: A001 - mirrors sfclab.format
    """Print chains back as chain-language text; ``parse(format(c)) == c``."""
    return format_chains(chains)
