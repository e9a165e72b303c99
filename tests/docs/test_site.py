"""The manual builds: ``mkdocs build --strict`` (no broken link, page or API reference), with
the labs rendered as pages and nothing fetched from the network; the API reference reads as
the docstrings mean it (roles as cross-references, doctests as code: docs/_ext/)."""

from __future__ import annotations

import html
import os
import re
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
    # the lab pages show what their cells draw (docs/_ext/lab_figures.py), the pictures there
    for lab in ("01_first_chain", "02_merging_chains", "06_network_wide_chains"):
        page = (site / "labs" / lab / "index.html").read_text()
        shown = re.findall(r'<figure class="sfc-lab-figure".*?<img src="([^"]+)"', page, re.S)
        assert shown, f"the page of {lab} shows no figure"
        for src in shown:
            assert (site / "labs" / lab / src).resolve().is_file(), src
    home = (site / "index.html").read_text()
    assert '<img alt="A %%chain cell' in home and 'src="editor.png"' in home
    api = (site / "api" / "index.html").read_text()
    assert 'id="sfclab.api.lab.Lab"' in api and 'id="sfclab.api.network.Network"' in api
    _api_reads_as_meant(api)


ROLE = re.compile(r":(?:py:)?(?:class|meth|func|mod|attr|data|exc|obj|const):`?")


def _api_reads_as_meant(page: str) -> None:
    """No reST role printed as text, no ``>>>`` outside a code block (Markdown makes it
    three block quotes), and the roles of the docstrings link where their object is shown."""
    body = page[page.index("<article"):page.index("</article>")]
    prose = html.unescape(re.sub(r"<[^>]+>", "", re.sub(r"<pre.*?</pre>", "", body, flags=re.S)))
    roles = sorted({m.group(0) + (prose[m.end():m.end() + 30].split() or [''])[0]
                    for m in ROLE.finditer(prose)})
    assert not roles, f"reST roles printed as text on api/: {roles}"
    assert ">>>" not in prose, "a doctest on api/ is not a code block"
    assert "<blockquote" not in body
    # sfclab.lang.format's doctest is a highlighted code block, its prompt a prompt
    assert re.search(r'<div class="highlight"><pre><span></span><code><span class="gp">&gt;&gt;&gt; '
                     r'</span>(?:(?!</pre>).)*format_chains', body, re.S), \
        "sfclab.lang.format's example is not a code block"
    # cross-references resolve: Lab's ``:meth:`add_nf``` and ``:class:`~sfclab.network.Network```
    # (a moved module's path) link to the objects shown on the page
    links = set(re.findall(r'<a class="autorefs autorefs-internal"[^>]*href="([^"]+)"', body))
    for target in ("#sfclab.api.lab.Lab.add_nf", "#sfclab.api.network.Network",
                   "#sfclab.ir.model.ChainSet", "#sfclab.errors.SfclabError"):
        assert target in links, f"no cross-reference to {target} on api/"
    # and one to an object not on the page is its name in code, the full path on hover
    assert re.search(r'<span title="sfclab\.[\w.]+"><code>\w+</code></span>', body)
