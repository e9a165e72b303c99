"""``python -m sfclab`` is the ``sfclab`` command."""

import sys

from .cli import main

sys.exit(main())
