"""Getting started (issue 33.5): the manual's home page shows the picture and the README's two
commands, word for word, and how to get JupyterLab (the ``lab`` extra, ``--allow-root``); the
labs' README says the same."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LAB = ".venv/bin/pip install -e '.[lab]' && .venv/bin/jupyter lab notebooks/"


def bash_blocks(path: Path) -> list[str]:
    return re.findall(r"```bash\n(.*?)```", path.read_text(), re.S)


def test_the_home_page_has_the_picture_and_the_readme_s_two_commands() -> None:
    home = ROOT / "docs" / "index.md"
    readme_commands = bash_blocks(ROOT / "README.md")[0]
    blocks = bash_blocks(home)
    assert blocks[0] == readme_commands
    assert blocks[1].strip() == LAB
    text = home.read_text()
    assert "](editor.png)" in text and (ROOT / "docs" / "editor.png").is_file()
    assert "--allow-root" in text


def test_the_labs_readme_installs_jupyterlab_before_starting_it() -> None:
    readme = ROOT / "notebooks" / "README.md"
    assert [b.strip() for b in bash_blocks(readme)] == [LAB]
    assert "--allow-root" in readme.read_text()
    assert "lab = [" in (ROOT / "pyproject.toml").read_text()     # the extra the text names
