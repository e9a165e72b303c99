"""The manual builds: ``mkdocs build --strict`` (no broken link, page or API reference), with
the labs rendered as pages and nothing fetched from the network."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_site_builds_strict(tmp_path):
    for module in ("mkdocs", "material", "mkdocstrings_handlers.python", "mkdocs_jupyter"):
        pytest.importorskip(module, reason=f"the docs tools are not installed ({module}); "
                                           "pip install -e '.[test]' installs them")
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    out = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q",
                          "-f", str(ROOT / "mkdocs.yml"), "-d", str(site)],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    pages = {p.relative_to(site).parent.as_posix() for p in site.rglob("index.html")}
    for page in ("guide", "concepts", "chain-language", "topology-language", "nf-interface",
                 "composed-program", "targets", "runtime-changes", "network", "benchmarks",
                 "limits", "api", "design", "labs/01_first_chain", "labs/06_network_wide_chains"):
        assert page in pages, f"the site has no page {page}/"
    api = (site / "api" / "index.html").read_text()
    assert 'id="sfclab.api.lab.Lab"' in api and 'id="sfclab.api.network.Network"' in api
