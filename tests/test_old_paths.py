"""The module paths the README, the labs and users' code name keep working after the modules
moved into packages (sfclab/api/, sfclab/draw/, sfclab/cli/): each is the moved module
itself, loaded on first use, so a plain ``import sfclab`` stays light."""

from __future__ import annotations

import subprocess
import sys

CHECK = """
import sys
import sfclab
loaded = [m for m in ("sfclab.api", "sfclab.draw", "sfclab.cli", "sfclab.lab") if m in sys.modules]
assert not loaded, f"import sfclab loaded {loaded}"

from sfclab.plots import Span, bar_plot, line_plot, timeline_plot      # the labs
from sfclab.diagrams import placement_figure, throughput_figure        # the labs
from sfclab.demo import demo_chains                                    # lab 04
from sfclab.network import Network                                     # the README
from sfclab.lab import Lab, LabChange, TableUse
import sfclab.api.lab, sfclab.api.network, sfclab.draw.plots, sfclab.draw.switch, sfclab.cli.demo
assert sfclab.plots is sfclab.draw.plots and sfclab.diagrams is sfclab.draw.switch
assert sfclab.lab is sfclab.api.lab and sfclab.network is sfclab.api.network
assert sfclab.demo is sfclab.cli.demo
assert sfclab.Lab is Lab is sfclab.api.Lab and sfclab.Network is Network is sfclab.api.Network
assert TableUse is sfclab.api.values.TableUse
import sfclab.targets.trace, sfclab.targets.traces.trace              # sfclab/targets/ in folders
assert sfclab.targets.trace is sfclab.targets.traces.trace
from sfclab.targets.sending import SendInterrupted
from sfclab.targets.bmv2 import compile_v1model                        # a folder now: its target
import sfclab.targets.bmv2.target
assert compile_v1model is sfclab.targets.bmv2.target.compile_v1model
from sfclab.cli import main                                            # the console script
assert callable(main)
try:
    import sfclab.nonesuch
except ModuleNotFoundError:
    pass
else:
    raise AssertionError("sfclab.nonesuch imported")
print("ok")
"""


def test_old_module_paths_name_the_moved_modules():
    out = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_python_m_sfclab_cli_still_runs():
    out = subprocess.run([sys.executable, "-m", "sfclab.cli", "--version"], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.startswith("sfclab "), out.stderr
