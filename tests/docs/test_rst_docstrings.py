"""The API reference's docstring rewrite (docs/_ext/rst_docstrings.py): reST roles become
cross-references as Sphinx resolves them, doctests and ``::`` blocks become code blocks, and
everything else is left as written.  The built page is checked in test_site.py."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("rst_docstrings",
                                               ROOT / "docs" / "_ext" / "rst_docstrings.py")
rst = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rst)

KNOWN = {"ChainSet": "sfclab.ir.model.ChainSet", "sfclab.lab.Lab": "sfclab.api.lab.Lab",
         "add_nf": "sfclab.api.lab.Lab.add_nf", "live_check": "sfclab.notebook.live_check",
         "sfclab.runtime.transaction.Stranded": "sfclab.runtime.transaction.Stranded"}


def ref(path: str, title: str) -> str:
    return f'<autoref identifier="{path}" optional><code>{title}</code></autoref>'


def convert(text: str) -> str:
    return rst.convert(text, KNOWN.get)


@pytest.mark.parametrize(("text", "want"), [
    ("a :class:`ChainSet`.", f"a {ref('sfclab.ir.model.ChainSet', 'ChainSet')}."),
    ("a :class:`~sfclab.lab.Lab`", f"a {ref('sfclab.api.lab.Lab', 'Lab')}"),
    ("a :class:`sfclab.lab.Lab`", f"a {ref('sfclab.api.lab.Lab', 'sfclab.lab.Lab')}"),
    ("see :meth:`add_nf`", f"see {ref('sfclab.api.lab.Lab.add_nf', 'add_nf()')}"),
    (":py:meth:`add_nf`", ref("sfclab.api.lab.Lab.add_nf", "add_nf()")),
    ("(:mod:`.live_check`)", f"({ref('sfclab.notebook.live_check', 'live_check')})"),
    # not ours (or unknown): code, as Sphinx shows an unresolved name
    (":exc:`ValueError`", "`ValueError`"),
    (":func:`~networkx.topological_sort`", "`topological_sort()`"),
    # an explicit title, over a line break
    ("(:class:`Stranded\n<sfclab.runtime.transaction.Stranded>`)",
     f"({ref('sfclab.runtime.transaction.Stranded', 'Stranded')})"),
    # a target broken over a line
    (":class:`~sfclab.lab.\n    Lab` here", f"{ref('sfclab.api.lab.Lab', 'Lab')} here"),
    # inside a ``literal``: left as written
    ("write ``:class:`ChainSet``` in reST", "write ``:class:`ChainSet``` in reST"),
    ("no roles, ``code`` and *emphasis*", "no roles, ``code`` and *emphasis*"),
])
def test_roles_become_references(text: str, want: str) -> None:
    assert convert(text) == want


def test_a_doctest_becomes_a_console_code_block() -> None:
    text = ("IR back to text.\n\n>>> from sfclab.lang import parse\n>>> print(x)\nchain web {\n"
            "    input => firewall;\n}\n\nMore :class:`ChainSet` text.")
    assert convert(text) == (
        "IR back to text.\n\n```pycon\n>>> from sfclab.lang import parse\n>>> print(x)\n"
        "chain web {\n    input => firewall;\n}\n```\n\n\n"
        f"More {ref('sfclab.ir.model.ChainSet', 'ChainSet')} text.")


def test_a_doctest_right_after_text_and_indented_in_a_docstring() -> None:
    text = "Example:\n    >>> 1 + 1\n    2\n"
    assert convert(text) == "Example:\n\n    ```pycon\n    >>> 1 + 1\n    2\n    ```\n\n"


def test_roles_in_code_blocks_stay() -> None:
    text = ">>> print(':class:`X`')\n:class:`X`"
    assert convert(text).startswith("```pycon\n>>> print(':class:`X`')\n:class:`X`\n```")


@pytest.mark.parametrize(("head", "shown"), [
    ("in a script::", "in a script:"), ("a header ::", "a header"), ("::", None)])
def test_a_literal_block_becomes_code(head: str, shown: str | None) -> None:
    text = f"{head}\n\n    simple_switch_grpc --device-id 0 \\\\\n        --no-p4\n\n:mod:`.live_check` after."
    out = convert(text)
    block = "```text\nsimple_switch_grpc --device-id 0 \\\\\n    --no-p4\n```\n"
    assert out == (f"{shown}\n\n" if shown else "") + block + "\n\n" + \
        f"{ref('sfclab.notebook.live_check', 'live_check')} after."


def test_a_literal_block_of_doctests_is_a_console_block() -> None:
    out = convert("Used in a script::\n\n    >>> lab = Lab()\n    >>> lab.add(x)\n    ('web',)\n")
    assert out.startswith("Used in a script:\n\n```pycon\n>>> lab = Lab()\n>>> lab.add(x)\n"
                          "('web',)\n```")
