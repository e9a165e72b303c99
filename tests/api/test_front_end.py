"""A Lab draws its views with the front end ``import sfclab`` registers (sfclab.frontends),
never importing the notebook layer itself: without a widget library it compiles, pushes and
sends all the same, and asking for a view says what is missing."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

import sfclab
from sfclab import frontends
from sfclab.errors import SfclabError

NO_WIDGETS = """
import sys

class Missing:                    # ipywidgets and anywidget are not installed
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("ipywidgets", "anywidget"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)

sys.meta_path.insert(0, Missing())
import sfclab
lab = sfclab.Lab()
lab.add("chain web match tcp.dport == 80: firewall -> l3fwd")
lab.push()
print(len(lab.send("web", 2)), "sent;", [t.table for t in lab.tables()][:1])
try:
    lab.view
except sfclab.SfclabError as e:
    print("view:", e.message, "|", e.hint)
assert not any(m.startswith("sfclab.notebook.") for m in sys.modules), sorted(
    m for m in sys.modules if m.startswith("sfclab.notebook."))
lab.close()
"""


def test_a_lab_without_widget_libraries_runs_and_says_what_a_view_needs():
    out = subprocess.run([sys.executable, "-c", NO_WIDGETS], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("2 sent; ['SfcIngress."), out.stdout
    assert re.match(r"view: the live view and the chain editor need (ipywidgets|anywidget), "
                    r"which is not installed", lines[1]), out.stdout
    assert "pip install ipywidgets anywidget" in lines[1]


class _Recorder:
    """A front end of its own: records what the Lab asked for."""

    def __init__(self):
        self.asked = []

    def view_key(self, show):
        return None if show is None else tuple(show)

    def live_view(self, show, installed):
        self.asked.append(("view", show))
        return _View()

    def editor(self, lab, chain, **kwargs):
        self.asked.append(("editor", chain, kwargs))
        return "an editor"


class _View:
    comm = "open"

    def __init__(self):
        self.updates = 0

    def update(self, compiled, code, network=None):
        self.updates += 1

    def pushed(self):
        pass


@pytest.fixture
def recorder():
    fe = _Recorder()
    frontends.register(lambda: fe)
    try:
        yield fe
    finally:
        frontends.register(sfclab._widgets)


def test_the_lab_asks_the_registered_front_end(recorder):
    lab = sfclab.Lab()
    view = lab.view
    assert lab.view is view and view.updates == 1          # one view, kept
    lab.add("chain web: firewall -> nat")
    assert view.updates == 2                               # and updated on a change
    assert lab.editor("web", debounce=0) == "an editor"
    assert recorder.asked == [("view", None), ("editor", "web", {"debounce": 0})]


def test_no_front_end_is_a_clear_error():
    frontends.register(None)
    try:
        with pytest.raises(SfclabError, match="no front end draws Labs here"):
            sfclab.Lab().view
    finally:
        frontends.register(sfclab._widgets)
