"""sfclab without grpcio, highspy or numpy: the embedded path runs, as in Pyodide.

A virtualenv gets exactly the wheels a JupyterLite site gets (``sfclab.cli.lite_wheels``:
sfclab's requirements read with Pyodide's environment markers, pure-Python wheels only,
finsy without its dependencies), for this Python, and sfclab from this checkout.  In it,
``import sfclab`` works, and a Lab compiles, pushes to the embedded model (P4Runtime
in-process), sends, reads traces and tables, updates, shows its live view and a chain
editor, and places chains on a network (the exact solver says it needs highspy).
"""

from __future__ import annotations

import platform
import subprocess
import sys
import tomllib
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = r"""
import importlib.util, sys
for m in ("grpc", "highspy", "numpy"):
    assert importlib.util.find_spec(m) is None, f"{m} is installed"
import sfclab
lab = sfclab.Lab()
lab.add(open(sys.argv[1]).read())
print("pushed", lab.push(), "entries to", lab.target)
lab.send("web", 6)
print("paths", sorted({t.path for t in lab.traces}))
print("tables", sum(t.entries for t in lab.tables()))
lab.add("chain web match tcp.dport == 80: firewall -> l3fwd")
print("update", lab.update().kind)
view = lab.view
print("view", type(view).__name__, view.show[:3])
print("editor", type(lab.editor("web")).__name__)
net = sfclab.Network(sfclab.ir.topology.fat_tree(4, stages=12),
                     "chain w match tcp.dport == 80 from h1 to h16: firewall -> nat -> l3fwd")
print("placement", net.placement.exact.status, net.placement.chosen.solver)
lab.close()
print("loaded", sorted(m for m in ("grpc", "highspy", "numpy") if m in sys.modules))
"""


def _requirements() -> list[str]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]


@pytest.fixture(scope="module")
def python(tmp_path_factory) -> Path:
    """A virtualenv with sfclab's Pyodide dependency set for this Python, no grpcio."""
    pytest.importorskip("packaging")
    from sfclab.cli.lite_wheels import collect

    base = tmp_path_factory.mktemp("nogrpc")
    cache = tmp_path_factory.getbasetemp() / "lite-cache" / "wheels"    # the site's, if built
    cache.mkdir(parents=True, exist_ok=True)
    wheels = collect([], _requirements(), cache, platform.python_version())
    venv.create(base / "venv", with_pip=False)
    py = base / "venv" / "bin" / "python"
    # --no-compile: a module is compiled when it is first imported (as in Pyodide, whose
    # micropip unpacks wheels): byte-compiling every file of the 26 wheels took longer
    subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "--quiet",
                    "--no-compile", "--no-index", "--no-deps", "--disable-pip-version-check",
                    *(str(w.path) for w in wheels.values())], check=True)
    site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          capture_output=True, text=True, check=True).stdout.strip()
    (Path(site) / "sfclab-checkout.pth").write_text(str(ROOT) + "\n")   # sfclab, from here
    return py


def test_the_dependency_set_has_no_grpcio_highspy_or_numpy(python):
    listed = subprocess.run([str(python), "-c", "import importlib.metadata as m; "
                             "print(' '.join(sorted(d.metadata['Name'].lower() "
                             "for d in m.distributions())))"],
                            capture_output=True, text=True, check=True).stdout.split()
    assert {"finsy", "protobuf", "scapy", "lark", "networkx", "ipywidgets"} <= set(listed)
    assert not {"grpcio", "highspy", "numpy"} & set(listed), listed


def test_the_embedded_path_runs_without_grpcio(python):
    out = subprocess.run([str(python), "-c", SCRIPT, str(ROOT / "examples" / "web.sfc")],
                         capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = dict(line.split(" ", 1) for line in out.stdout.splitlines())
    assert lines["pushed"].endswith("entries to <ModelTarget model://in-process>")
    assert lines["paths"] == "['web/0', 'web/1']"
    assert int(lines["tables"]) > 0
    assert lines["update"] == "entries"
    assert lines["view"] == "LiveView ('chains', 'ir', 'pipeline')"
    assert lines["editor"] == "ChainEditor"
    assert lines["placement"] == "skipped heuristic"
    assert lines["loaded"] == "[]"
