"""The options a TNA model target takes (``model?arch=tna&pipes=4&loopback=4,132``),
checked once for the URL, the target and the P4Runtime server.

>>> tna_options("tna", None, (), None)
{'pipes': 2, 'loopback': (), 'cpu_port': 192}
>>> tna_options("v1model", None, (), None) is None
True
"""

from __future__ import annotations

from collections.abc import Iterable

from ....errors import TargetError, did_you_mean
from .ports import DEFAULT_PIPES, TNA_CPU_PORT, TofinoPorts

__all__ = ["tna_options", "ARCHES"]

#: The architectures the embedded model runs.
ARCHES = ("v1model", "tna")


def tna_options(arch: str, pipes: int | None, loopback: Iterable[int],
                cpu_port: int | None) -> dict | None:
    """The :class:`~.switch.TnaSwitch` options for a target of *arch* (None for v1model);
    TargetError for an unknown architecture, pipes or loopback ports."""
    if arch not in ARCHES:
        raise TargetError(f"the embedded model has no architecture {arch!r}",
                          hint=did_you_mean(arch, ARCHES) or "use v1model or tna")
    if arch == "v1model":
        if pipes is not None or tuple(loopback):
            raise TargetError("pipes and loopback ports are a TNA model's (Tofino); this model "
                              "runs v1model", hint="add arch=tna: model?arch=tna&pipes=2")
        return None
    opts = {"pipes": DEFAULT_PIPES if pipes is None else pipes,
            "loopback": tuple(sorted(set(loopback))),
            "cpu_port": TNA_CPU_PORT if cpu_port is None else cpu_port}
    TofinoPorts.of(**opts)               # checks them (InvalidValueError is a TargetError)
    return opts
