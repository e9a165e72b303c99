"""Fixtures for the external targets' tests (helpers in targets_support.py)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "targets"


@pytest.fixture
def listening() -> Iterator[int]:
    """A port on 127.0.0.1 that accepts connections for the test's duration."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    try:
        yield s.getsockname()[1]
    finally:
        s.close()


@pytest.fixture
def bmv2_json() -> Path:
    return FIXTURES / "sfc_min.bmv2.json"


@pytest.fixture
def no_tools(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """PATH holds only an empty directory; no tool environment variables."""
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    for var in ("SFCLAB_P4C", "SFCLAB_BMV2", "SFCLAB_BF_P4C", "SDE", "SDE_INSTALL"):
        monkeypatch.delenv(var, raising=False)
    return empty


@pytest.fixture(scope="session")
def tofino_builds(tmp_path_factory, request):
    """Compiles TNA programs with the Tofino compiler, each distinct program once per session
    (shared by test_tofino.py and test_tofino_stages.py; tofino_programs.py).  Every
    selected test's programs are queued at once, the longest first (every_nf.sfc's take
    minutes), so that both workers stay busy and finish together; each test then waits
    for its own."""
    from tofino_programs import TofinoBuilds, longest_first, programs_of, tofino_compiler

    b = TofinoBuilds(tmp_path_factory.mktemp("tofino"), tofino_compiler())
    queued: dict[str, object] = {}
    for item in request.session.items:
        queued.update(programs_of(item))
    for g in longest_first(queued).values():
        b.submit(g)
    yield b
    b.close()
