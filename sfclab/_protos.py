"""finsy's protobuf messages where grpcio is missing (Pyodide: JupyterLite's kernel).

sfclab speaks P4Runtime with the messages finsy ships (``from finsy.proto import p4r``).
finsy's packages import grpcio first (its clients, servers and gRPC stubs), and grpcio has
no build for the browser; the messages themselves need protobuf only.  Where ``grpc``
cannot be imported, :func:`install` makes ``finsy.proto`` the messages alone: ``finsy``
and ``finsy.proto`` become bare packages over finsy's own files (their ``__init__`` is not
run), ``finsy.proto`` gets the names finsy's ``__init__`` gives the message modules
(``p4r``, ``p4i``, ``p4t``, ``p4d``, ``rpc_code``, ``rpc_status``), imported on first use,
and anything of finsy's gRPC part raises an ImportError that says so.  With grpcio
installed nothing changes: finsy is imported whole, as before.

``import sfclab`` calls :func:`install`.  sfclab's embedded model then talks P4Runtime
in-process (:mod:`sfclab.runtime.inprocess`): the same messages, no socket.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from pathlib import Path

__all__ = ["install", "MESSAGES"]

#: finsy.proto's names for its message modules (finsy/proto/__init__.py), without gRPC's.
MESSAGES = {
    "p4r": "p4.v1.p4runtime_pb2",
    "p4d": "p4.v1.p4data_pb2",
    "p4i": "p4.config.v1.p4info_pb2",
    "p4t": "p4.config.v1.p4types_pb2",
    "rpc_code": "google.rpc.code_pb2",
    "rpc_status": "google.rpc.status_pb2",
}

_NO_GRPC = ("needs grpcio, which is not installed here (Pyodide has no build of it); "
            "sfclab uses finsy's protobuf messages only, and talks to its embedded model "
            "in-process")


def install() -> bool:
    """Make ``finsy.proto`` importable without grpcio when grpcio is missing; returns
    whether it did (False: grpcio is there, finsy is missing, or finsy is imported)."""
    if "finsy" in sys.modules or importlib.util.find_spec("grpc") is not None:
        return False
    spec = importlib.util.find_spec("finsy")
    if spec is None or not spec.submodule_search_locations:
        return False
    where = Path(list(spec.submodule_search_locations)[0])
    _bare("finsy", where, "finsy")
    _bare("finsy.proto", where / "proto", "finsy.proto", MESSAGES)
    return True


def _bare(name: str, folder: Path, what: str, lazy: dict[str, str] | None = None) -> None:
    """A package *name* over *folder* whose ``__init__`` is not run; *lazy* names its
    submodules imported on first use."""
    module = types.ModuleType(name, f"{what} without its gRPC part (sfclab._protos)")
    module.__path__ = [str(folder)]
    module.__package__ = name
    module.__file__ = None

    def __getattr__(attr: str):
        if lazy and attr in lazy:
            value = importlib.import_module(f"{name}.{lazy[attr]}")
            setattr(module, attr, value)
            return value
        if attr.startswith("__"):
            raise AttributeError(attr)
        raise ImportError(f"{name}.{attr} {_NO_GRPC}", name=name)

    module.__getattr__ = __getattr__  # type: ignore[attr-defined]
    sys.modules[name] = module
