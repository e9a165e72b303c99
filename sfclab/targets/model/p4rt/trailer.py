"""The error trailer of a refused batch, kept within gRPC's default metadata limits.

P4Runtime answers a refused Write (or Read) with a ``google.rpc.Status`` in the
``grpc-status-details-bin`` trailer: one ``p4.v1.Error`` per update.  gRPC clients
accept 8 KiB of metadata by default (past it they get ``RESOURCE_EXHAUSTED``
instead of the answer), which one error per update overflows from ~150 updates.
So a batch whose full list does not fit gets the failed updates in full, each
with its index in the batch as its ``code`` in space :data:`INDEX_SPACE`, and the
others summarised in the status message ("the other 19,999 were rolled back");
failed updates past the budget are counted there too.

>>> from finsy.proto import p4r, rpc_code
>>> ok = [p4r.Error(canonical_code=rpc_code.OK)] * 20_000
>>> s = batch_status(ok[:-1] + [p4r.Error(canonical_code=rpc_code.NOT_FOUND, message="x")],
...                  "1 of 20000 updates failed")
>>> len(s.details), s.ByteSize() <= TRAILER_BYTES
(1, True)
"""

from __future__ import annotations

from finsy.proto import p4r, rpc_code, rpc_status
from google.protobuf import any_pb2

from ....runtime.client import INDEX_SPACE

__all__ = ["batch_status", "TRAILER_BYTES", "INDEX_SPACE"]

#: The status's size at most: with base64 and the other headers, well inside 8 KiB.
TRAILER_BYTES = 4096
_MESSAGE = 1024          # the status message (also sent as grpc-message) at most
_ONE = 512               # one failed update's message at most, when summarised


def _any(msg) -> any_pb2.Any:
    a = any_pb2.Any()
    a.Pack(msg)
    return a


def batch_status(errors: list, summary: str) -> rpc_status.Status:
    """The Status for a refused batch whose per-update results are *errors*."""
    status = rpc_status.Status(code=rpc_code.UNKNOWN, message=_cut(summary, _MESSAGE))
    status.details.extend(_any(e) for e in errors)
    if status.ByteSize() <= TRAILER_BYTES:
        return status
    failed = [(i, e) for i, e in enumerate(errors)
              if e.canonical_code not in (rpc_code.OK, rpc_code.ABORTED)]
    rolled = sum(e.canonical_code == rpc_code.ABORTED for e in errors)
    rest = len(errors) - len(failed)
    others = (f"the other {rest:,} were {'rolled back' if rolled else 'applied'}"
              if rest else "")
    head = _cut(summary, _MESSAGE // 2)
    out = rpc_status.Status(code=rpc_code.UNKNOWN)
    room = TRAILER_BYTES - _MESSAGE - 16
    for i, e in failed:
        d = _any(p4r.Error(canonical_code=e.canonical_code, message=_cut(e.message, _ONE),
                           space=INDEX_SPACE, code=i))
        if out.ByteSize() + d.ByteSize() + 4 > room:
            break
        out.details.append(d)
    listed = len(out.details)
    unlisted = (f", {len(failed) - listed:,} more failed updates are not listed"
                if listed < len(failed) else "")
    out.message = _cut(f"{head} (the details list the failed updates only, each with its "
                       f"index as its code in space {INDEX_SPACE}{unlisted}"
                       f"{'; ' + others if others else ''})", _MESSAGE)
    return out


def _cut(text: str, n: int) -> str:
    return text if len(text) <= n else text[:n - 1] + "…"
