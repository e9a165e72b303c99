"""The wheels of the JupyterLite site (sfclab.cli.lite_wheels), against a registry made up
here: requirements are read with Pyodide's markers (no grpcio, no highspy), finsy comes
with protobuf only, a later pin replaces a wheel fetched too new, a package with no wheel
is named, and the lockfile lists exactly the wheels with their hashes and dependencies."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

from sfclab.cli.lite_wheels import collect, lockfile
from sfclab.errors import SfclabError

PYTHON = "3.14.2"


def wheel(folder: Path, name: str, version: str, *requires: str, python: str = "") -> Path:
    path = folder / f"{name}-{version}-py3-none-any.whl"
    meta = [f"Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    meta += [f"Requires-Dist: {r}" for r in requires]
    if python:
        meta.append(f"Requires-Python: {python}")
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(f"{name}/__init__.py", "")
        z.writestr(f"{name}-{version}.dist-info/METADATA", "\n".join(meta) + "\n")
    return path


@pytest.fixture
def registry(tmp_path):
    """A made-up PyPI: name -> [(version, requires)], and the specs each fetch asked for."""
    shelf = tmp_path / "registry"
    shelf.mkdir()
    known = {
        "finsy": [("0.30", ("grpcio>=1.81", "protobuf>=6.33,<7", "pyee"))],
        "protobuf": [("6.33.6", ()), ("7.1", ())],
        "lark": [("1.3", ())],
        "scapy": [("2.8", ())],
    }
    asked: list[list[str]] = []

    def fetch(specs, into, python):
        asked.append(list(specs))
        for spec in specs:
            r = Requirement(spec)
            versions = [(v, req) for v, req in known.get(r.name, ())
                        if r.specifier.contains(v)]
            if not versions:
                raise SfclabError(f"no wheel of {spec}")
            v, req = max(versions, key=lambda x: Version(x[0]))
            wheel(into, r.name, v, *req)

    return fetch, asked, tmp_path


def test_pyodides_markers_and_finsy_without_its_dependencies(registry):
    fetch, asked, tmp = registry
    own = wheel(tmp, "sfclab", "0.1", "lark", "finsy>=0.28", "protobuf>=4.25",
                "grpcio>=1.60; platform_system != 'Emscripten'",
                "highspy>=1.7; platform_system != 'Emscripten'", "scapy; python_version < '3'")
    cache = tmp / "cache"
    cache.mkdir()
    got = collect([own], [], cache, PYTHON, fetch=fetch)
    assert sorted(got) == ["finsy", "lark", "protobuf", "sfclab"]
    assert got["protobuf"].version == "6.33.6"        # finsy's pin replaced 7.1, fetched first
    flat = [s for batch in asked for s in batch]
    assert not any(s.startswith(("grpcio", "highspy", "pyee", "scapy")) for s in flat), flat

    lock = lockfile({"info": {"python": PYTHON}}, got, PYTHON)
    assert lock["info"] == {"python": PYTHON}
    sfclab = lock["packages"]["sfclab"]
    assert sfclab["depends"] == ["finsy", "lark", "protobuf"]
    assert lock["packages"]["finsy"]["depends"] == ["protobuf"]
    assert sfclab["sha256"] == hashlib.sha256(own.read_bytes()).hexdigest()
    assert sfclab["file_name"] == own.name and sfclab["imports"] == ["sfclab"]

    again = collect([own], [], cache, PYTHON, fetch=fetch)      # the cache answers now
    assert len(asked) == 2 and sorted(again) == sorted(got)


def test_a_package_with_no_pure_wheel_is_named(registry):
    fetch, _, tmp = registry
    own = wheel(tmp, "sfclab", "0.1", "numpy")
    (tmp / "cache").mkdir()
    with pytest.raises(SfclabError, match="no wheel of numpy"):
        collect([own], [], tmp / "cache", PYTHON, fetch=fetch)


def test_a_cached_wheel_for_another_python_is_not_taken(registry):
    fetch, asked, tmp = registry
    cache = tmp / "cache"
    cache.mkdir()
    wheel(cache, "lark", "9.0", python=">=3.15")
    got = collect([], ["lark"], cache, PYTHON, fetch=fetch)
    assert got["lark"].version == "1.3" and asked == [["lark"]]
