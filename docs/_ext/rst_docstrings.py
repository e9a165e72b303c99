"""A Griffe extension for the API reference: sfclab's reStructuredText docstrings as Markdown.

sfclab's docstrings are written for Sphinx and doctest: ``:class:`ChainSet```-style roles,
``>>>`` examples and ``::`` literal blocks.  mkdocstrings renders docstrings as Markdown, where
a role prints as text and ``>>>`` starts three nested block quotes.  This extension rewrites
every docstring of the loaded package once, before mkdocstrings renders it:

* a role (``:class:``, ``:meth:``, ``:func:``, ``:mod:``, ``:attr:``, ``:data:``, ``:exc:``,
  ``:obj:``, ``:const:``, with or without ``py:``; ``~`` and ``Title <target>`` as in Sphinx)
  becomes a cross-reference to the object's canonical path, resolved as Sphinx resolves it
  (the object's own scope, its module's names and imports, then a unique match of the
  name's end anywhere in the package).  It is an *optional* autorefs reference: a link
  where the object is on the site, its code name with the full path on hover otherwise.
  A name that resolves to nothing (another library's) stays code;
* a doctest block (lines from ``>>>`` to the next blank line) becomes a ``pycon`` code block;
* a literal block (a paragraph ending in ``::`` and the indented lines after it) becomes a
  code block (``pycon`` when it starts with ``>>>``, plain text otherwise), the ``::`` a ``:``.

The docstrings stay as they are for ``help()``, Sphinx and ``pytest --doctest-modules``.
mkdocs.yml loads the extension (``extensions:`` of the python handler); ``convert`` is the
text rewrite on its own (tests/docs/test_rst_docstrings.py).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["RstDocstrings", "convert", "ROLE"]

#: A Python-domain role; the content may run over a line break.
ROLE = re.compile(r":(?:py:)?(?P<kind>class|meth|func|mod|attr|data|exc|obj|const):"
                  r"`(?P<body>[^`]+)`")
_LITERAL_OR_ROLE = re.compile(r"(``.+?``)|" + ROLE.pattern, re.S)
_TITLED = re.compile(r"^(?P<title>.*?)\s*<(?P<target>[^<>]+)>$", re.S)
_CALLABLE = {"meth", "func"}

Resolver = Callable[[str], "str | None"]


def convert(text: str, resolve: Resolver) -> str:
    """The docstring *text* as Markdown; *resolve* maps a role's target to the object's
    canonical path, or None."""
    out: list[str] = []
    prose: list[str] = []

    def flush() -> None:
        if prose:
            out.extend(_roles("\n".join(prose), resolve).split("\n"))
            prose.clear()

    for kind, lines in _blocks(text.split("\n")):
        if kind == "text":
            prose.extend(lines)
        else:
            flush()
            out.extend(lines)
    flush()
    return "\n".join(out)


# -- blocks: doctests and literal blocks into fenced code ------------------------------------------

def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _blocks(lines: list[str]) -> Iterator[tuple[str, list[str]]]:
    """The lines as ("text", lines) and ("code", fenced lines) runs."""
    i, n = 0, len(lines)
    while i < n:
        line, stripped = lines[i], lines[i].strip()
        if stripped.startswith(">>>"):
            j = i
            while j < n and lines[j].strip():
                j += 1
            yield "code", _fence(lines[i:j], _indent(line), "pycon", lead=i > 0 and bool(lines[i - 1].strip()))
            i = j
            continue
        if stripped.endswith("::") and not stripped.startswith(".."):
            j = i + 1
            while j < n and not lines[j].strip():
                j += 1
            if j < n and _indent(lines[j]) > _indent(line):
                k = j
                while k < n and (not lines[k].strip() or _indent(lines[k]) > _indent(line)):
                    k += 1
                while k > j and not lines[k - 1].strip():
                    k -= 1
                head = _literal_head(line)
                if head is not None:
                    yield "text", [head]
                body = lines[j:k]
                lang = "pycon" if body[0].strip().startswith(">>>") else "text"
                yield "code", _fence(body, _indent(line), lang, lead=head is not None)
                i = k
                continue
        yield "text", [line]
        i += 1


def _literal_head(line: str) -> str | None:
    """The paragraph line before a literal block, as Sphinx shows it: ``text::`` as
    ``text:``, ``text ::`` as ``text``, a lone ``::`` as nothing."""
    body = line.rstrip()
    if body.strip() == "::":
        return None
    return body[:-3] if body.endswith(" ::") else body[:-1]


def _fence(lines: list[str], indent: int, lang: str, *, lead: bool) -> list[str]:
    """*lines* as a fenced block at *indent*, dedented; a blank line around it."""
    inner = min((_indent(x) for x in lines if x.strip()), default=0)
    pad = " " * indent
    body = [pad + x[inner:] if x.strip() else "" for x in lines]
    return [*([""] if lead else []), f"{pad}```{lang}", *body, f"{pad}```", ""]


# -- roles: cross-references --------------------------------------------------------------------------

def _roles(text: str, resolve: Resolver) -> str:
    def one(m: re.Match[str]) -> str:
        if m.group(1):                      # a ``literal``: left alone
            return m.group(1)
        return _reference(m.group("kind"), m.group("body"), resolve)

    return _LITERAL_OR_ROLE.sub(one, text)


def _reference(kind: str, body: str, resolve: Resolver) -> str:
    """One role as Sphinx shows it: a cross-reference, or code when nothing matches."""
    body = " ".join(body.split())
    titled = _TITLED.match(body)
    if titled:
        title, target = titled["title"], titled["target"].replace(" ", "")
    else:
        target = body.replace(" ", "")
        title = target.lstrip(".")
        if title.startswith("~"):
            title = title[1:].rsplit(".", 1)[-1]
        if kind in _CALLABLE and not title.endswith(")"):
            title += "()"
    target = target.lstrip("~.")
    path = resolve(target)
    if path is None:
        return f"`{title}`"
    return f'<autoref identifier="{path}" optional><code>{title}</code></autoref>'


# -- the Griffe side: resolving names in the loaded package -------------------------------------------

try:
    from griffe import Extension
except ImportError:                          # the text rewrite works without Griffe
    Extension = object  # type: ignore[assignment,misc]


class RstDocstrings(Extension):  # type: ignore[misc,valid-type]
    """Rewrites every docstring of a package once it is loaded (see the module's text)."""

    def on_package(self, *, pkg: Any, loader: Any, **kwargs: Any) -> None:
        objects = list(_walk(pkg))
        by_suffix: dict[str, set[str]] = defaultdict(set)
        for obj in objects:
            parts = obj.path.split(".")
            for k in range(1, len(parts)):
                by_suffix[".".join(parts[k:])].add(obj.path)
        for obj in objects:
            if obj.docstring is not None:
                obj.docstring.value = convert(
                    obj.docstring.value,
                    lambda target, obj=obj: _resolve(target, obj, loader, by_suffix))


def _walk(obj: Any) -> Iterator[Any]:
    """*obj* and every object defined under it (not the names it imports)."""
    yield obj
    for member in list(obj.members.values()):
        if not member.is_alias:
            yield from _walk(member)


def _resolve(target: str, obj: Any, loader: Any, by_suffix: dict[str, set[str]]) -> str | None:
    """The canonical path of *target* as seen from *obj*: in *obj*'s scopes (itself,
    its class, its module, the packages above), as an absolute path, or the one object
    of the package whose path ends with it."""
    scope = obj if obj.kind.value in ("module", "class") else obj.parent
    while scope is not None:
        found = _lookup(scope, target)
        if found:
            return found
        scope = scope.parent
    try:
        return _canonical(loader.modules_collection[target])
    except (KeyError, ValueError):
        pass
    # the name's end, unique in the package; a path of the package's own (``sfclab.lab.Lab``,
    # a module that moved) by ever shorter ends (``lab.Lab``, ``Lab``)
    parts = target.split(".")
    root = obj.path.split(".", 1)[0]
    ends = range(len(parts) if parts[0] == root else 1)
    for k in ends:
        matches = by_suffix.get(".".join(parts[k:]), set())
        if len(matches) == 1:
            return next(iter(matches))
    return None


def _lookup(scope: Any, dotted: str) -> str | None:
    node = scope
    for part in dotted.split("."):
        try:
            node = node.members.get(part)
        except Exception:  # noqa: BLE001 - an alias to another library: not ours to link
            return None
        if node is None:
            return None
    return _canonical(node)


def _canonical(node: Any) -> str | None:
    try:
        return node.final_target.path if node.is_alias else node.path
    except Exception:  # noqa: BLE001 - griffe's AliasResolutionError/CyclicAliasError
        return None
