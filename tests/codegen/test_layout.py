"""The generated P4 reads like hand-written P4 (issue 33): consecutive one-line
declarations of a kind (``const``, ``typedef``, local variables) stand together, a
blank line separates groups and comes before every block."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sfclab.p4 import parse_p4, to_p4

GOLDENS = sorted((Path(__file__).resolve().parents[1] / "fixtures" / "codegen").glob("*.p4"))

SOURCE = """#include <core.p4>
const bit<8> A = 1; const bit<8> B = 2; typedef bit<9> p_t; typedef bit<8> q_t;
header h_t { bit<8> x; } header g_t { bit<8> y; }
control C(inout h_t h) { bit<8> a = 0; bit<8> b = 1; const bit<8> K = 3; const bit<8> L = 4;
    action x() { a = 1; } action y() { } table t { actions = { x; } } apply { t.apply(); } }
"""

PRINTED = """#include <core.p4>

const bit<8> A = 1;
const bit<8> B = 2;

typedef bit<9> p_t;
typedef bit<8> q_t;

header h_t {
    bit<8> x;
}

header g_t {
    bit<8> y;
}

control C(inout h_t h) {
    bit<8> a = 0;
    bit<8> b = 1;

    const bit<8> K = 3;
    const bit<8> L = 4;

    action x() {
        a = 1;
    }

    action y() { }

    table t {
        actions = {
            x;
        }
    }

    apply {
        t.apply();
    }
}
"""


def test_one_liners_of_a_kind_stand_together():
    assert to_p4(parse_p4(SOURCE)) == PRINTED


_ONE_LINE = re.compile(r"^( *)(const|typedef|#include|#define)\b[^{]*;?$")


def _kind(line: str) -> tuple[str, str] | None:
    m = _ONE_LINE.match(line)
    return (m.group(1), m.group(2).lstrip("#").replace("define", "include")) if m else None


def _before(lines: list[str], i: int) -> str:
    """The line before line *i* and its annotations (``@pa_no_overlay(…)``)."""
    i -= 1
    while i > 0 and lines[i].startswith("@"):
        i -= 1
    return lines[i].rstrip()


@pytest.mark.parametrize("golden", GOLDENS, ids=lambda p: p.name)
def test_goldens_have_no_blank_line_inside_a_group(golden: Path):
    """What the golden programs (and so sfclab's output: tests/codegen/test_codegen.py
    compares them whole) show: no blank line between two ``const`` / ``typedef`` /
    ``#include`` lines at one indentation, a blank line (or a comment) before every block
    at the top level."""
    lines = golden.read_text().splitlines()
    inside = [i + 1 for i in range(1, len(lines) - 1)
              if lines[i] == "" and _kind(lines[i - 1]) is not None
              and _kind(lines[i - 1]) == _kind(lines[i + 1])]
    assert not inside, f"{golden.name}: a blank line inside a group at line(s) {inside}"
    cramped = [i + 1 for i in range(1, len(lines))
               if re.match(r"^(header|struct|control|parser)\b.*\{$", lines[i])
               and _before(lines, i) != "" and not _before(lines, i).endswith("*/")]
    assert not cramped, f"{golden.name}: a block without a blank line before it at {cramped}"
