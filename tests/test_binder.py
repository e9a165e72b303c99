"""Binder builds: the Node.js that binder/ installs can build sfclab's front ends.

Installing sfclab (binder/postBuild) bundles the chain editor with esbuild and builds the
JupyterLab extension (hatch_build.py); every package in js/ and labextension/'s lockfiles
states the Node.js it runs on (``engines``).  This reads binder/ as repo2docker does (only
that folder; with an ``environment.yml`` a conda environment, and no requirements.txt or
runtime.txt read) and checks the lowest Node.js the spec admits against every package.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BINDER = ROOT / "binder"
FRONT_ENDS = ("js", "labextension")
#: repo2docker's default base image is Ubuntu 22.04 (jammy), whose ``nodejs`` is 12.22.
APT_NODE = (12, 22, 9)

Version = tuple[int, int, int]


def _version(text: str) -> Version:
    parts = [int(p) if p.isdigit() else 0 for p in re.split(r"[.]", text.strip().lstrip("v"))]
    return tuple((parts + [0, 0, 0])[:3])  # type: ignore[return-value]


def satisfies(version: Version, spec: str) -> bool:
    """Whether *version* is in the npm semver range *spec* (the forms lockfiles use:
    ``>=18``, ``>= 10.13.0``, ``^12.20.0 || >=14``, ``0.8.x``, ``*``).

    >>> satisfies((18, 0, 0), "^10 || ^12 || >= 14"), satisfies((12, 22, 9), ">=18")
    (True, False)
    """
    return any(_all(version, alt) for alt in spec.split("||"))


def _all(version: Version, alt: str) -> bool:
    for op, v in re.findall(r"(>=|<=|>|<|\^|~|=)?\s*(\d[\w.]*|\*)", alt):
        if v == "*" or v.startswith("x"):
            continue
        bound = _version(v.replace("x", "0"))
        ok = {">=": version >= bound, ">": version > bound, "<": version < bound,
              "<=": version <= bound, "^": version >= bound and version[0] == bound[0],
              "~": version >= bound and version[:2] == bound[:2]}.get(
                  op, version[:v.count(".") + 1] == bound[:v.count(".") + 1])
        if not ok:
            return False
    return True


def node_engines() -> dict[str, str]:
    """``{package: engines.node}`` of every package the front ends' builds install."""
    out = {}
    for fe in FRONT_ENDS:
        lock = json.loads((ROOT / fe / "package-lock.json").read_text())
        for path, pkg in lock["packages"].items():
            engines = pkg.get("engines")
            if isinstance(engines, dict) and "node" in engines:
                out[f"{fe}/{path or '.'}"] = engines["node"]
    return out


def conda_lowest(spec: str) -> Version | None:
    """The lowest version a conda match spec's version part admits (None: unbounded).

    >>> conda_lowest(">=20"), conda_lowest("20.*"), conda_lowest(">=18,<23"), conda_lowest("")
    ((20, 0, 0), (20, 0, 0), (18, 0, 0), None)
    """
    lows = [_version(v.rstrip(".*") or "0") for op, v in
            re.findall(r"(>=|<=|==|=|>|<)?\s*([\d.*]+)", spec) if op in ("", ">=", "==", "=", ">")]
    return max(lows) if lows else None


def binder_node() -> tuple[str, Version | None]:
    """Where binder/'s Node.js comes from and the lowest version it can be, read by
    repo2docker's rules."""
    env = BINDER / "environment.yml"
    sources = []
    if env.exists():
        for line in env.read_text().splitlines():
            m = re.match(r"\s*-\s*(?:conda-forge::)?nodejs\b\s*([^#]*)", line)
            if m:
                sources.append(("environment.yml (conda)", conda_lowest(m.group(1))))
    apt = BINDER / "apt.txt"
    if apt.exists() and "nodejs" in apt.read_text().split():
        sources.append(("apt.txt (Ubuntu 22.04)", APT_NODE))
    assert len(sources) == 1, f"binder/ should install Node.js from one place, not {sources}"
    return sources[0]


def test_binder_is_the_folder_repo2docker_reads():
    # with a binder/ folder, repo2docker reads nothing at the top level; with an
    # environment.yml it uses conda and ignores requirements.txt and runtime.txt
    assert BINDER.is_dir() and (BINDER / "postBuild").exists()
    if (BINDER / "environment.yml").exists():
        ignored = [n for n in ("requirements.txt", "runtime.txt") if (BINDER / n).exists()]
        assert not ignored, f"repo2docker ignores binder/{ignored} next to environment.yml"
    assert re.search(r"pip install .*-e \.", (BINDER / "postBuild").read_text()), \
        "postBuild installs sfclab (and so builds its front ends)"


def test_binders_node_builds_the_front_ends():
    where, lowest = binder_node()
    assert lowest is not None, f"binder/{where} installs nodejs of any version: bound it"
    engines = node_engines()
    assert any(p.endswith("node_modules/esbuild") for p in engines), "esbuild states no engine"
    refused = {p: spec for p, spec in engines.items() if not satisfies(lowest, spec)}
    shown = dict(list(refused.items())[:6])
    assert not refused, (f"binder/{where} may install Node.js {'.'.join(map(str, lowest))}, "
                         f"which {len(refused)} packages refuse, e.g. {shown}")


@pytest.mark.parametrize("version, spec, ok", [
    ((12, 22, 9), ">=18", False), ((18, 0, 0), ">=18", True), ((20, 1, 0), ">= 10.13.0", True),
    ((11, 0, 0), "^10 || ^12 || >= 14", False), ((13, 8, 0), "^6 || >=13.7", True),
    ((12, 20, 0), "^12.20.0 || >=14", True), ((0, 8, 5), ">=0.8.x", True), ((3, 0, 0), "*", True),
])
def test_the_range_reader(version, spec, ok):
    assert satisfies(version, spec) is ok


def test_ubuntus_nodejs_would_be_refused():
    """The old spec (apt.txt's nodejs: 12 on Ubuntu 22.04) fails the check."""
    refused = [p for p, s in node_engines().items() if not satisfies(APT_NODE, s)]
    assert any(p.endswith("node_modules/esbuild") for p in refused), refused
