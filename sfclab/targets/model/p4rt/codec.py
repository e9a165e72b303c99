"""P4Runtime values and refusals: bytestrings to ints and back, the canonical codes of the
model's errors, and the exceptions that carry a refused update or batch."""

from __future__ import annotations

from finsy.proto import p4r, rpc_code

from ..errors import (ControlPlaneError, EntryExistsError, EntryNotFoundError, InvalidValueError,
                      ReadOnlyError, TableFullError, UnknownNameError)

__all__ = ["P4RTError", "decode_int", "decode_signed", "encode_int", "encode_signed",
           "_fail", "_code_of", "_bad_bytes", "_by_kind", "_eid", "_BatchError", "_U",
           "_NO_PIPELINE"]

_CODES = {EntryExistsError: rpc_code.ALREADY_EXISTS, EntryNotFoundError: rpc_code.NOT_FOUND,
          TableFullError: rpc_code.RESOURCE_EXHAUSTED, ReadOnlyError: rpc_code.PERMISSION_DENIED,
          UnknownNameError: rpc_code.NOT_FOUND, InvalidValueError: rpc_code.INVALID_ARGUMENT}

_U = p4r.Update
_NO_PIPELINE = ("no forwarding pipeline config has been set "
                "(SetForwardingPipelineConfig first)")


class P4RTError(Exception):
    """One refused update or request, with its canonical code."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def _fail(code: int, message: str):
    raise P4RTError(code, message)


def _code_of(e: ControlPlaneError) -> int:
    return next((c for cls, c in _CODES.items() if isinstance(e, cls)), rpc_code.UNKNOWN)


# --- values ------------------------------------------------------------------------------------

def decode_int(data: bytes, bitwidth: int, what: str) -> int:
    """A P4Runtime bytestring as an unsigned int; OUT_OF_RANGE when it is empty or the value
    does not fit *bitwidth* (leading zero bytes are accepted, as the specification requires)."""
    v = int.from_bytes(data, "big")
    if not data or (bitwidth and v >> bitwidth):
        _bad_bytes(data, bitwidth, what)
    return v


def decode_signed(data: bytes, bitwidth: int, what: str) -> int:
    """A sign-extended P4Runtime bytestring as an ``int<bitwidth>``."""
    if not data:
        _bad_bytes(data, bitwidth, what)
    v = int.from_bytes(data, "big", signed=True)
    if not -(1 << (bitwidth - 1)) <= v < (1 << (bitwidth - 1)):
        _fail(rpc_code.OUT_OF_RANGE, f"{what}: {v} does not fit in int<{bitwidth}>")
    return v


def _bad_bytes(data: bytes, bitwidth: int, what: str):
    if not data:
        _fail(rpc_code.OUT_OF_RANGE, f"{what}: empty bytestring")
    _fail(rpc_code.OUT_OF_RANGE, f"{what}: value 0x{int.from_bytes(data, 'big'):x} does not "
                                 f"fit in {bitwidth} bits")


def encode_int(v: int) -> bytes:
    """The canonical (shortest) P4Runtime bytestring of an unsigned *v*."""
    return v.to_bytes(max(1, (v.bit_length() + 7) // 8), "big")


def encode_signed(v: int) -> bytes:
    """The canonical bytestring of a signed *v* (two's complement, shortest)."""
    return v.to_bytes(max(1, (v.bit_length() + 8) // 8), "big", signed=True)


def _by_kind(kind: str | None, packets: int, nbytes: int) -> tuple[int, int]:
    """``(packets, bytes)`` as P4Runtime reports a counter of *kind* (the other one is 0)."""
    if kind == "packets":
        return packets, 0
    if kind == "bytes":
        return 0, nbytes
    return packets, nbytes


def _eid(msg) -> int | None:
    """A message's election id as an int, None when it is unset."""
    if not msg.HasField("election_id"):
        return None
    return (msg.election_id.high << 64) | msg.election_id.low


class _BatchError(Exception):
    def __init__(self, errors: list, summary: str) -> None:
        super().__init__(summary)
        self.errors, self.summary = errors, summary
