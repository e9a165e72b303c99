"""``python -m sfclab`` is the ``sfclab`` command."""

import sys

from .cli.commands import main

sys.exit(main())
