"""Shared set-up of the notebook tests (a module, not a conftest: several test folders have
conftest.py files, which clash under --doctest-modules when named together)."""

from __future__ import annotations

from IPython import get_ipython as running_ipython
from IPython.testing.globalipapp import get_ipython


def ipython_shell():
    """The test IPython shell with sfclab's magics loaded (the global shell starts once;
    later callers get the running one)."""
    shell = get_ipython() or running_ipython()
    shell.run_line_magic("load_ext", "sfclab")
    return shell


def sent_states(widget) -> list[dict]:
    """The trait updates *widget* sent to the front end (its dummy comm's messages)."""
    return [m[1]["data"]["state"] for m in widget.comm.messages
            if m[1].get("data", {}).get("method") == "update"]
