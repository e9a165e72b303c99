"""RPC statuses that do not need grpcio: what a refused P4Runtime call says, by either transport.

A gRPC client sees a refused call as ``grpc.RpcError`` (``code()``, ``details()``,
``trailing_metadata()``); an in-process one (:mod:`.inprocess`) as :class:`RpcFailure`,
with the same three methods, so :class:`~.client.Client` reads both alike.  Where
grpcio is missing, :class:`Status` stands for ``grpc.StatusCode`` (same names, same
numbers).

>>> status_code(6).name
'ALREADY_EXISTS'
"""

from __future__ import annotations

import enum
import importlib.util
from functools import lru_cache

__all__ = ["Status", "RpcFailure", "grpc_available", "status_code"]


class Status(enum.Enum):
    """gRPC's status codes by name and number, where grpcio is missing."""

    OK = 0
    CANCELLED = 1
    UNKNOWN = 2
    INVALID_ARGUMENT = 3
    DEADLINE_EXCEEDED = 4
    NOT_FOUND = 5
    ALREADY_EXISTS = 6
    PERMISSION_DENIED = 7
    RESOURCE_EXHAUSTED = 8
    FAILED_PRECONDITION = 9
    ABORTED = 10
    OUT_OF_RANGE = 11
    UNIMPLEMENTED = 12
    INTERNAL = 13
    UNAVAILABLE = 14
    DATA_LOSS = 15
    UNAUTHENTICATED = 16


@lru_cache(maxsize=1)
def grpc_available() -> bool:
    """Whether grpcio can be imported here (it cannot in Pyodide)."""
    return importlib.util.find_spec("grpc") is not None


def status_code(code: int):
    """The gRPC status of a canonical (google.rpc) code: ``grpc.StatusCode`` where grpcio
    is installed, else :class:`Status` (both have the name, which is what clients read)."""
    if grpc_available():
        import grpc

        return next((sc for sc in grpc.StatusCode if sc.value[0] == code),
                    grpc.StatusCode.UNKNOWN)
    try:
        return Status(code)
    except ValueError:
        return Status.UNKNOWN


class RpcFailure(Exception):
    """A refused in-process RPC, as a gRPC client sees one: ``code()`` (its ``.name`` is
    the status), ``details()`` and ``trailing_metadata()``."""

    def __init__(self, code, details: str, trailing: tuple = ()) -> None:
        super().__init__(f"{code.name}: {details}")
        self._code, self._details, self._trailing = code, details, trailing

    def code(self):
        return self._code

    def details(self) -> str:
        return self._details

    def trailing_metadata(self) -> tuple:
        return self._trailing
