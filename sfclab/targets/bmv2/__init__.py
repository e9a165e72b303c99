"""The BMv2 target: sfclab's v1model program on a real ``simple_switch_grpc``, its
event logger, packet ports, pcap files, Thrift registers and many packets at once."""


def __getattr__(name: str):
    """``from sfclab.targets.bmv2 import X`` as before the folder: X from :mod:`.target`."""
    if name.startswith("__") or name == "target":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib
    try:
        return getattr(importlib.import_module(__name__ + ".target"), name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
