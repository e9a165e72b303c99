"""The README's two set-up commands: the test one is what CI runs, the main one works."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parent.parent


def setup_commands() -> list[str]:
    block = re.search(r"```bash\n(.*?)```", (ROOT / "README.md").read_text(), re.S).group(1)
    return [line for line in block.splitlines() if line.strip() and not line.startswith("#")]


def test_readme_starts_with_exactly_two_commands():
    assert len(setup_commands()) == 2


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text()
    assert setup_commands()[1] in ci.splitlines()


def test_main_job_command_succeeds_in_this_environment():
    """The first command's job, run with this environment's sfclab (the suite runs inside
    the install the command makes; a fresh-virtualenv run of both is CI's job)."""
    job = setup_commands()[0].split("&&")[-1].strip()
    assert job.startswith(".venv/bin/sfclab ")
    sfclab_bin = Path(sys.executable).parent / "sfclab"
    out = subprocess.run(job.replace(".venv/bin/sfclab", str(sfclab_bin), 1), shell=True,
                         cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "every packet ran its planned service path" in out.stdout
