"""Options of the compiler passes (one frozen object the driver hands to every pass).

>>> CompileOptions().widths.bitmap, CompileOptions(pipeline="optimal").pipeline
(32, 'optimal')
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .fsm import TokenWidths

__all__ = ["CompileOptions"]


@dataclass(frozen=True, slots=True, kw_only=True)
class CompileOptions:
    """Every knob of the passes, with defaults for an interactive edit.

    * ``pipeline``: ``"auto"`` (MA-FSA pipeline when it fits the bitmap, else the
      optimal order), ``"mafsa"``, ``"optimal"``, ``"naive"``, or a tuple of NF
      types: exactly that pipeline (the one on a switch);
    * ``exact_limit``: the optimal order is exact (DP over subsets) up to this
      many distinct NFs, local search above (12 keeps ``compile`` under 100 ms;
      up to ~20 is exact in seconds);
    * ``dup_slots``: length of the duplicated-slot trade-off curve (0: none);
    * ``widths``: the token field widths the passes may use: at most the SFC
      header's (``p4/include/sfc_headers.p4``: path id 16, state 8, bitmap 32,
      counter 8 bits), narrower to see what a smaller header would refuse;
    * ``pipes``, ``stages``, ``entry_pipe``, ``exit_pipe``, ``loopback_ratio``:
      the switch model of the placement pass; ``placement``: run it (``None``:
      only for ``arch="tna"``); ``replicas``: let placement run a stateless NF in
      more than one pipelet when that saves a path recirculations (False: Dejavu's
      one pipelet per NF).
    """

    pipeline: str | tuple[str, ...] = "auto"
    exact_limit: int = 12
    dup_slots: int = 0
    widths: TokenWidths = field(default_factory=TokenWidths)
    pipes: int = 2
    stages: int = 12
    entry_pipe: int = 0
    exit_pipe: int | None = 0
    loopback_ratio: float = 1.0
    placement: bool | None = None
    replicas: bool = True

    def __post_init__(self) -> None:
        from ..errors import CompileError

        header = TokenWidths()
        for name in ("path_id", "state", "bitmap", "counter"):
            want, have = getattr(self.widths, name), getattr(header, name)
            if not 1 <= want <= have:
                raise CompileError(f"widths.{name} = {want}: the SFC header's {name} field has "
                                   f"{have} bits (p4/include/sfc_headers.p4)",
                                   hint=f"give 1 to {have} bits")

    @property
    def bitmap_bits(self) -> int:
        return self.widths.bitmap
