"""Shared fixtures of the notebook tests."""

from __future__ import annotations

import pytest
from IPython import get_ipython as running_ipython
from IPython.testing.globalipapp import get_ipython


@pytest.fixture(scope="module")
def ip():
    """The test IPython shell with sfclab's magics loaded (the global shell starts once;
    later callers get the running one)."""
    shell = get_ipython() or running_ipython()
    shell.run_line_magic("load_ext", "sfclab")
    return shell
