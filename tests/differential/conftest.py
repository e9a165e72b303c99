"""One BMv2 for the differential tests (programs are loaded on it one after the other),
and p4c-bm2-ss builds of every program the session needs, compiled two at a time."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session")
def bmv2(tmp_path_factory) -> Iterator:
    from sfclab.targets.stf.bmv2 import StfBmv2

    with StfBmv2(tmp_path_factory.mktemp("bmv2")) as sw:
        yield sw
