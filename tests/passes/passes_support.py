"""Fixture loading and golden comparison for the pass tests.

Fixtures live in ``tests/fixtures/passes/<pass>/``: ``NAME.sfc`` (chain text)
or ``NAME.nfs`` (``nf: number`` lines defining a small NF catalogue, then chain
text), each with ``NAME.expected``.  Set ``SFCLAB_REGEN=1`` to rewrite the
expected files from the current output (then review the diff).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

import sfclab
from sfclab.ir.model import ChainSet
from sfclab.nfinfo import NFCatalog, NFInfo

FIXTURES = Path(__file__).parent.parent / "fixtures" / "passes"
_NUM = re.compile(r"^\s*([A-Za-z_]\w*)\s*:\s*(\d+)\s*$")


def load(path: Path, *, field: str = "tables") -> tuple[ChainSet, NFCatalog | None]:
    """Chains of a fixture and, for ``.nfs`` files, their catalogue (the number
    sets ``field``: ``tables`` or ``stages``)."""
    text = path.read_text()
    if path.suffix != ".nfs":
        return sfclab.parse(text, source=path.name), None
    infos, rest = [], []
    for line in text.splitlines():
        m = _NUM.match(line)
        if m and not line.lstrip().startswith("chain"):
            infos.append(NFInfo(name=m[1], layer=1, **{field: int(m[2])}))
        else:
            rest.append(line)
    cat = NFCatalog(infos)
    return sfclab.parse("\n".join(rest), source=path.name, catalog=cat), cat


def fixtures(pass_name: str) -> list[Path]:
    d = FIXTURES / pass_name
    return sorted([*d.glob("*.sfc"), *d.glob("*.nfs")])


def check_golden(path: Path, actual: str) -> None:
    """Compare *actual* with ``path.with_suffix('.expected')`` as a whole."""
    exp = path.with_suffix(".expected")
    if os.environ.get("SFCLAB_REGEN") or not exp.exists():
        exp.write_text(actual)
        if not os.environ.get("SFCLAB_REGEN"):
            pytest.fail(f"wrote missing {exp.name}; review it and run again")
    assert actual == exp.read_text(), f"{exp.name} differs"
