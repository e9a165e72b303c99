"""``import sfclab`` stays light, and reaches ``sfclab.notebook`` on first use (the README's
``sfclab.notebook.ChainEditor()``)."""

from __future__ import annotations

import subprocess
import sys

CHECK = """
import sys
import sfclab
heavy = [m for m in ("sfclab.notebook", "ipywidgets", "anywidget", "sfclab.lab") if m in sys.modules]
assert not heavy, f"import sfclab imported {heavy}"
editor = sfclab.notebook.ChainEditor()                  # the README's line
assert type(editor).__name__ == "ChainEditor" and "sfclab.notebook" in sys.modules
assert sfclab.notebook.LiveView is sfclab.notebook.views.LiveView
assert "notebook" in sfclab.__all__
try:
    sfclab.nonesuch
except AttributeError as e:
    assert "no attribute 'nonesuch'" in str(e)
else:
    raise AssertionError("sfclab.nonesuch did not raise")
print("ok")
"""


def test_sfclab_notebook_after_a_plain_import():
    out = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
