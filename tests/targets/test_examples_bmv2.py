"""Every example chain set, and the demo, on BMv2: ``sfclab diff-targets`` (the model
against a BMv2 sfclab starts) and ``sfclab demo --target bmv2``.

On the stand-in BMv2 and p4c (``standin_bmv2.py``: sfclab's model behind BMv2's and
p4c's interfaces, refusing what p4c refuses) in every run; on the real tools with
``pytest -m bmv2`` where they are installed (skipping, naming them, elsewhere).
"""

from __future__ import annotations

import io
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from standin_bmv2 import install_standins
from targets_support import live_skip

from sfclab.cli import main
from sfclab.targets.bmv2 import target as B

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
#: Values of the run-time names an example's multibranch cases use.
BINDINGS = {"flexmesh_fig9.sfc": ["p1=1", "p2=2", "p3=3"]}
#: The stand-in's pause before a multicast's second copy: above the longest settle time (0.2 s).
TX_PAUSE = 0.3
CHAIN_FILES = sorted(p.name for p in EXAMPLES.iterdir() if p.suffix in (".sfc", ".json"))


def _diff(name: str) -> list[str]:
    argv = ["diff-targets", str(EXAMPLES / name), "--packets", "2"]
    for b in BINDINGS.get(name, ()):
        argv += ["--bind", b]
    return argv


@pytest.fixture
def standins(tmp_path, monkeypatch):
    switch, p4c = install_standins(tmp_path / "bin")
    monkeypatch.setenv("SFCLAB_BMV2", str(switch))
    monkeypatch.setenv("SFCLAB_P4C", str(p4c))


@pytest.fixture(scope="module")
def diff_on_standins(tmp_path_factory) -> Callable[[str], tuple[int, str]]:
    """``run(name)``: ``sfclab diff-targets`` of example *name* on the stand-ins, as
    ``(status, output)``; each example runs once in this module, so the tests that claim
    something of the same run (every_nf.sfc's) share it.  The stand-in switch sends a
    multicast's copies as a loaded switch does, with a pause before the second
    (``STANDIN_TX_PAUSE``, longer than any settle time): every copy must still come back."""
    switch, p4c = install_standins(tmp_path_factory.mktemp("bin"))
    runs: dict[str, tuple[int, str]] = {}

    def run(name: str) -> tuple[int, str]:
        if name not in runs:
            out = io.StringIO()
            with pytest.MonkeyPatch.context() as mp, redirect_stdout(out), \
                    redirect_stderr(out):
                mp.setenv("SFCLAB_BMV2", str(switch))
                mp.setenv("SFCLAB_P4C", str(p4c))
                mp.setenv("STANDIN_TX_PAUSE", str(TX_PAUSE))
                status = main(_diff(name))
            runs[name] = (status, out.getvalue())
        return runs[name]
    return run


def test_every_example_file_is_tested():
    assert {"web.sfc", "every_nf.sfc", "p4sc_table3.sfc", "flexmesh_fig9.sfc",
            "p4sfc_intent.json"} <= set(CHAIN_FILES)


@pytest.mark.parametrize("name", CHAIN_FILES)
def test_diff_targets_runs_every_example_on_bmv2(diff_on_standins, name):
    status, out = diff_on_standins(name)
    assert status == 0, out
    assert "every packet ran the same way" in out
    covered = next(line for line in out.splitlines() if line.startswith("service paths"))
    done, _, total = covered.removeprefix("service paths covered: ").partition(" of ")
    assert int(done) >= 1 and int(total) >= int(done), covered


def test_every_library_nf_runs_on_bmv2(diff_on_standins):
    """examples/every_nf.sfc uses every switch NF of the library, and BMv2 runs each class
    as the model does (the model's behaviour per NF is checked against the NFs' documentation
    in tests/runtime/test_library_push.py; here the stand-in is the model again, so this
    proves the BMv2 path — compile, push, packets, traces — for every NF).  The diff-targets
    run is the one test_diff_targets_runs_every_example_on_bmv2[every_nf.sfc] makes."""
    import sfclab
    from sfclab.p4.catalog import load_default

    text = (EXAMPLES / "every_nf.sfc").read_text()
    cat = load_default()
    switch_nfs = {n for n in cat.names() if cat.definition(n).has_p4}
    assert len(switch_nfs) == 18
    used = {nf for c in sfclab.parse(text) for nf in c.nf_types()}
    assert used == switch_nfs, switch_nfs - used
    status, out = diff_on_standins("every_nf.sfc")
    assert status == 0, out


def test_the_demo_runs_on_bmv2(standins, capsys):
    assert main(["demo", "--target", "bmv2", "--packets", "1"]) == 0
    out = capsys.readouterr().out
    assert "over P4Runtime" in out or "pushed the program" in out
    assert "every packet ran its planned service path" in out
    # its P4SFC class detours through the server sfclab plays behind BMv2's port 8
    assert "1 on web_ips/0: firewall -> nat -> ips -> monitor -> output, 2 passes" in out


@pytest.mark.bmv2
@pytest.mark.parametrize("name", CHAIN_FILES)
def test_live_diff_targets_runs_every_example(capsys, name):
    live_skip(B.missing_tools())
    assert main(_diff(name)) == 0, capsys.readouterr().out


@pytest.mark.bmv2
def test_live_demo_on_bmv2(capsys):
    live_skip(B.missing_tools())
    assert main(["demo", "--target", "bmv2", "--packets", "2"]) == 0, capsys.readouterr().out
