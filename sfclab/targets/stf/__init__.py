"""p4c's STF tests (``sfclab stf``): their scripts read, and run on the embedded model
or on a real BMv2."""

from .. import _lends

#: ``from sfclab.targets.stf import X`` as before the folder: X from :mod:`.runner`.
__getattr__ = _lends(__name__, "runner")
