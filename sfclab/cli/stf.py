"""``sfclab stf PROGRAM.p4 [TEST.stf]``: a v1model program's STF test, line by line.

Prints one line per expectation (``TEST.stf:LINE: ok|FAIL …``) and a summary; the
exit status is 0 when every expectation is met, 1 otherwise (or on an error).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from ..errors import SfclabError

__all__ = ["run_cli"]


def run_cli(program: str, test: str | None, *, target: str = "model",
            defines: Sequence[str] = (), includes: Sequence[str] = (),
            verbose: bool = False) -> int:
    """Run the test and print its report; the process's exit status."""
    from ..targets.stf.runner import stf_test

    try:
        report = stf_test(program, test, target=target, defines=list(defines),
                          includes=list(includes))
    except SfclabError as e:
        print(e, file=sys.stderr)
        return 1
    if verbose:
        for run in report.packets:
            outs = ", ".join(f"port {p}: {d.hex().upper()}" for p, d in run.outputs) or "dropped"
            print(f"{report.source}:{run.line}: packet on port {run.port} "
                  f"{run.data.hex().upper()} -> {outs}")
    print(report.text())
    return 0 if report.ok else 1
