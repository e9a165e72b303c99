"""p4c's STF tests (``sfclab stf``): their scripts read, and run on the embedded model
or on a real BMv2."""


def __getattr__(name: str):
    """``from sfclab.targets.stf import X`` as before the folder: X from :mod:`.runner`."""
    if name.startswith("__") or name == "runner":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib
    try:
        return getattr(importlib.import_module(__name__ + ".runner"), name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
