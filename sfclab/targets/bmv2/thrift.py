"""BMv2's Thrift runtime, the part sfclab needs: register reads and writes, and a
table's entry or default entry as BMv2 holds it (for the traces: :mod:`sfclab.targets.bmv2.entries`).

BMv2 1.15.5's P4Runtime server answers register reads and writes with
``UNIMPLEMENTED``; its Thrift runtime server (``--thrift-port``, 9090 by default)
reads and writes them.  The service is BMv2's ``standard.thrift``
(``thrift_src/`` of p4lang/behavioral-model), served by a multiplexed processor
under the name ``standard``, over Thrift's buffered transport (no framing) and
binary protocol.  The binary protocol is small enough to speak by hand, so sfclab
needs no Thrift package (nor does Pyodide, where no BMv2 runs anyway):

* a call is a message header -- ``0x80010001`` (version 1, CALL), the method name
  (``standard:bm_register_read``: the service's name, a colon, the method's), a
  sequence id -- then the arguments as a struct: per field its type (a byte), its
  id (i16) and its value, then a STOP byte;
* the answer is a REPLY (a struct whose field 0 is the result and field 1 the
  method's exception, ``InvalidRegisterOperation{1: code}``) or an EXCEPTION
  (Thrift's own ``TApplicationException{1: message, 2: type}``: an unknown method …).

Register values are BMv2's ``BmRegisterValue``, a signed 64-bit integer: a register
wider than 64 bits cannot go through it (:meth:`Bmv2Thrift.register_read_all` of one
gives what BMv2 gives; :class:`~sfclab.targets.bmv2.registers.ThriftRegisters` refuses them).

>>> call = encode_call("standard:bm_register_read", 7,
...                    [(1, I32, 0), (2, STRING, "r"), (3, I32, 5)])
>>> call[:4].hex(), call[8:33], call[33:37].hex()        # CALL, the name, the sequence id
('80010001', b'standard:bm_register_read', '00000007')
>>> call[37:].hex(" ")              # i32 field 1 = 0, string field 2 = "r", i32 field 3 = 5, STOP
'08 00 01 00 00 00 00 0b 00 02 00 00 00 01 72 08 00 03 00 00 00 05 00'
"""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Callable, Sequence
from typing import Any

from ...errors import TargetError

__all__ = ["Bmv2Thrift", "ThriftError", "encode_call", "decode_value", "STOP", "BOOL", "BYTE",
           "DOUBLE", "I16", "I32", "I64", "STRING", "STRUCT", "MAP", "SET", "LIST",
           "REGISTER_ERRORS"]

# Thrift's type ids (TType)
STOP, BOOL, BYTE, DOUBLE, I16, I32, I64, STRING, STRUCT, MAP, SET, LIST = (
    0, 2, 3, 4, 6, 8, 10, 11, 12, 13, 14, 15)
_VERSION_1 = 0x80010000
_CALL, _REPLY, _EXCEPTION = 1, 2, 3
#: ``RegisterOperationErrorCode`` of standard.thrift.
REGISTER_ERRORS = {1: "INVALID_REGISTER_NAME", 2: "INVALID_INDEX", 3: "ERROR"}
#: ``TApplicationException``'s types that matter here.
_APP_ERRORS = {1: "UNKNOWN_METHOD", 6: "INTERNAL_ERROR", 7: "PROTOCOL_ERROR"}
_FIXED = {BOOL: "?", BYTE: "b", DOUBLE: "d", I16: "h", I32: "i", I64: "q"}


class ThriftError(TargetError):
    """BMv2's Thrift server refused a call: ``code`` is its error code's name
    (``INVALID_REGISTER_NAME`` …, or a ``TApplicationException``'s type)."""

    def __init__(self, message: str, code: str, *, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.code = code


# -- encoding ----------------------------------------------------------------------------------
def _string(value: str | bytes) -> bytes:
    data = value.encode() if isinstance(value, str) else bytes(value)
    return struct.pack(">i", len(data)) + data


def _value(ttype: int, value: Any) -> bytes:
    if ttype in _FIXED:
        return struct.pack(">" + _FIXED[ttype], value)
    if ttype == STRING:
        return _string(value)
    raise TypeError(f"sfclab's Thrift client does not send type {ttype}")


def encode_call(name: str, seqid: int, fields: Sequence[tuple[int, int, Any]]) -> bytes:
    """A CALL message of method *name* (``service:method``) with argument *fields*
    (``(id, type, value)``; scalars and strings)."""
    out = [struct.pack(">I", _VERSION_1 | _CALL), _string(name), struct.pack(">i", seqid)]
    for fid, ttype, value in fields:
        out += [struct.pack(">bh", ttype, fid), _value(ttype, value)]
    out.append(bytes([STOP]))
    return b"".join(out)


# -- decoding ----------------------------------------------------------------------------------
class _Reader:
    """Reads exactly the bytes asked for from *recv* (a socket's)."""

    def __init__(self, recv: Callable[[int], bytes]) -> None:
        self.recv = recv
        self.buf = bytearray()

    def take(self, n: int) -> bytes:
        while len(self.buf) < n:
            chunk = self.recv(max(65536, n - len(self.buf)))
            if not chunk:
                raise ConnectionError("the Thrift server closed the connection")
            self.buf += chunk
        out = bytes(self.buf[:n])
        del self.buf[:n]
        return out

    def unpack(self, fmt: str) -> Any:
        return struct.unpack(">" + fmt, self.take(struct.calcsize(">" + fmt)))[0]


def decode_value(r: _Reader, ttype: int) -> Any:
    """One value of type *ttype* (a struct: ``{field id: value}``).

    >>> import io
    >>> r = _Reader(io.BytesIO(bytes.fromhex("0a00000002" "0000000000000003" "00000000000000ff")).read)
    >>> decode_value(r, LIST)                    # a list of two i64
    [3, 255]
    """
    if ttype in _FIXED:
        return r.unpack(_FIXED[ttype])
    if ttype == STRING:
        return r.take(r.unpack("i"))
    if ttype == STRUCT:
        out = {}
        while True:
            ftype = r.unpack("b")
            if ftype == STOP:
                return out
            fid = r.unpack("h")
            out[fid] = decode_value(r, ftype)
    if ttype in (LIST, SET):
        etype, n = r.unpack("b"), r.unpack("i")
        return [decode_value(r, etype) for _ in range(n)]
    if ttype == MAP:
        ktype, vtype, n = r.unpack("b"), r.unpack("b"), r.unpack("i")
        return {decode_value(r, ktype): decode_value(r, vtype) for _ in range(n)}
    raise ConnectionError(f"unknown Thrift type {ttype} in an answer")


# -- the client --------------------------------------------------------------------------------
class Bmv2Thrift:
    """A connection to a BMv2's Thrift runtime (service ``standard``), made on first use
    by *connect* (which returns a connected socket: in the switch's network namespace,
    :mod:`sfclab.targets.process.keeper`) and again after a failure.  One call at a time (a lock)."""

    service = "standard"

    def __init__(self, connect: Callable[[], socket.socket], *, where: str = "",
                 timeout: float = 10.0, cxt_id: int = 0) -> None:
        self._connect = connect
        self.where = where or "BMv2's Thrift server"
        self.timeout = timeout
        self.cxt_id = cxt_id
        self._sock: socket.socket | None = None
        self._reader: _Reader | None = None
        self._seq = 0
        self._lock = threading.Lock()

    # -- registers --------------------------------------------------------------------------
    def register_read_all(self, name: str) -> list[int]:
        """Every cell of register array *name* (BMv2's ``bm_register_read_all``)."""
        return self.call("bm_register_read_all", [(1, I32, self.cxt_id), (2, STRING, name)])

    def register_read(self, name: str, index: int) -> int:
        return self.call("bm_register_read",
                         [(1, I32, self.cxt_id), (2, STRING, name), (3, I32, index)])

    def register_write(self, name: str, index: int, value: int) -> None:
        """Cell *index* of *name* := *value* (a signed 64-bit value on the wire)."""
        if value >= 1 << 63:
            value -= 1 << 64
        self.call("bm_register_write", [(1, I32, self.cxt_id), (2, STRING, name),
                                        (3, I32, index), (4, I64, value)])

    def register_reset(self, name: str) -> None:
        self.call("bm_register_reset", [(1, I32, self.cxt_id), (2, STRING, name)])

    # -- match-action tables -------------------------------------------------------------------
    def table_entry(self, table: str, handle: int) -> dict | None:
        """Entry *handle* of *table* as BMv2 holds it (``bm_mt_get_entry``: a
        ``BmMtEntry``, decoded as ``{field id: value}``); None when BMv2 answers with
        another entry (a handle it no longer has)."""
        wire = handle - (1 << 32) if handle >= 1 << 31 else handle     # BmEntryHandle: i32
        e = self.call("bm_mt_get_entry",
                      [(1, I32, self.cxt_id), (2, STRING, table), (3, I32, wire)])
        return e if isinstance(e, dict) and e.get(3) == wire else None

    def default_entry(self, table: str) -> dict | None:
        """What *table* runs on a miss (``bm_mt_get_default_entry``: a ``BmActionEntry``)."""
        e = self.call("bm_mt_get_default_entry", [(1, I32, self.cxt_id), (2, STRING, table)])
        return e if isinstance(e, dict) else None

    # -- the wire -----------------------------------------------------------------------------
    def call(self, method: str, fields: Sequence[tuple[int, int, Any]]) -> Any:
        """Call *method* of the ``standard`` service; its result (None for a void one).
        :class:`ThriftError` when BMv2 refuses it, :class:`TargetError` when it cannot
        be reached."""
        with self._lock:
            self._seq = self._seq % 0x7FFFFFFF + 1
            msg = encode_call(f"{self.service}:{method}", self._seq, fields)
            try:
                sock = self._socket()
                sock.sendall(msg)
                return self._answer(method)
            except (OSError, ConnectionError) as e:
                self._drop()
                raise TargetError(f"{self.where}: {method} failed: {e}",
                                  hint="is the switch running?") from None

    def _answer(self, method: str) -> Any:
        r = self._reader
        head = r.unpack("I")
        if head & 0xFFFF0000 != _VERSION_1:
            raise ConnectionError(f"not a Thrift binary-protocol answer ({head:#x})")
        kind = head & 0xFF
        r.take(r.unpack("i"))                            # the method's name
        seq = r.unpack("i")
        body = decode_value(r, STRUCT)
        if seq != self._seq:
            raise ConnectionError(f"answer {seq} to call {self._seq}")
        if kind == _EXCEPTION:
            code = _APP_ERRORS.get(body.get(2), f"type {body.get(2)}")
            text = body.get(1, b"").decode(errors="replace")
            raise ThriftError(f"{self.where} refused {method}: {text or code}", code)
        if kind != _REPLY:
            raise ConnectionError(f"unexpected message type {kind}")
        for fid, value in body.items():
            if fid != 0:                                 # the method's exception
                code = value.get(1) if isinstance(value, dict) else None
                name = REGISTER_ERRORS.get(code, f"code {code}") if method.startswith(
                    "bm_register") else f"code {code}"
                raise ThriftError(f"{self.where} refused {method}: {name}", name)
        return body.get(0)

    def _socket(self) -> socket.socket:
        if self._sock is None:
            sock = self._connect()
            sock.settimeout(self.timeout)
            self._sock, self._reader = sock, _Reader(sock.recv)
        return self._sock

    def _drop(self) -> None:
        if self._sock is not None:
            self._sock.close()
        self._sock = self._reader = None

    def close(self) -> None:
        with self._lock:
            self._drop()

    def __repr__(self) -> str:
        return f"<Bmv2Thrift {self.where}>"
