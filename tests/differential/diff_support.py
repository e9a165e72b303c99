"""What the differential tests share: the fixtures' folder and the skip without BMv2.

(A module of its own, not conftest.py: several test folders have a conftest.py, and a
``from conftest import`` takes whichever the run imported first.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

__all__ = ["FIXTURES", "needs_bmv2"]

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "differential"


def _missing() -> list[str]:
    from sfclab.targets.stf.bmv2 import missing_stf_tools

    return missing_stf_tools()


needs_bmv2 = pytest.mark.skipif(bool(_missing()), reason=f"the differential tests run "
                                f"programs on BMv2: {', '.join(_missing())} not installed")
