"""The Tofino target: sfclab's TNA program compiled by the real compiler, the stages
its ``.bfa`` uses, and a Tofino behind a P4Runtime server."""


def __getattr__(name: str):
    """``from sfclab.targets.tofino import X`` as before the folder: X from :mod:`.target`."""
    if name.startswith("__") or name == "target":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib
    try:
        return getattr(importlib.import_module(__name__ + ".target"), name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
