"""The Tofino target: sfclab's TNA program compiled by the real compiler, the stages
its ``.bfa`` uses, and a Tofino behind a P4Runtime server."""

from .. import _lends

#: ``from sfclab.targets.tofino import X`` as before the folder: X from :mod:`.target`.
__getattr__ = _lends(__name__, "target")
