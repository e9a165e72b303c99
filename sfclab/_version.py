"""sfclab's version, in a module of its own so that any layer may read it (the package
root imports every layer)."""

__version__ = "0.1.0"
