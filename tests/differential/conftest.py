"""One BMv2 for the differential tests (programs are loaded on it one after the other),
and p4c-bm2-ss builds of every program the session needs, compiled two at a time."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "differential"


def _missing() -> list[str]:
    from sfclab.targets.stf_bmv2 import missing_stf_tools

    return missing_stf_tools()


needs_bmv2 = pytest.mark.skipif(bool(_missing()), reason=f"the differential tests run "
                                f"programs on BMv2: {', '.join(_missing())} not installed")


@pytest.fixture(scope="session")
def bmv2(tmp_path_factory) -> Iterator:
    from sfclab.targets.stf_bmv2 import StfBmv2

    with StfBmv2(tmp_path_factory.mktemp("bmv2")) as sw:
        yield sw
