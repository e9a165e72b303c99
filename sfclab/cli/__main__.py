"""``python -m sfclab.cli``: the ``sfclab`` command."""

import sys

from .commands import main

sys.exit(main())
