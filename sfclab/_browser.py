"""What sfclab needs of scapy in the browser (Pyodide: JupyterLite's kernel).

scapy runs in Pyodide, as a library of packet layers: sfclab builds and reads packets
with it and never opens a socket.  Three things about the browser trip it up, and
:func:`prepare` (``import sfclab`` calls it, in Pyodide only) sets them right:

* Pyodide's :mod:`socket` is built without IPv6 (``socket.has_ipv6`` is False and
  ``inet_pton``/``inet_ntop`` refuse IPv6 addresses), and scapy then refuses to load its
  IPv6 layers (and VXLAN, which imports them), which sfclab's packets use: the two
  functions convert IPv6 addresses with :mod:`ipaddress` and the flag is set (the
  browser has no sockets at all; none is made);
* scapy finds no network interface, so a packet with no source MAC (``Ether(dst=…)``)
  cannot be built: a loopback interface ``lo0`` (MAC 00:00:00:00:00:00, as Linux's
  ``lo``) is registered with scapy when scapy loads its interfaces;
* scapy says, once, that it does not support the platform, and on every packet with
  no source address that it found no route: both messages are kept out of the notebook.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import ipaddress
import logging
import socket
import sys
from collections.abc import Callable

__all__ = ["prepare", "in_browser"]

#: scapy's messages that say only that this is not an operating system with interfaces.
_QUIET = ("does not support", "No route found")


def in_browser() -> bool:
    """Whether this Python runs in the browser (Pyodide)."""
    return sys.platform == "emscripten"


def prepare() -> None:
    """Set up scapy for the browser (module docstring); loads nothing now."""
    for name in ("scapy.loading", "scapy.runtime"):
        logging.getLogger(name).addFilter(_Quiet())
    if "scapy.interfaces" in sys.modules:
        _loopback(sys.modules["scapy.interfaces"])
    else:
        sys.meta_path.insert(0, _Around("scapy.interfaces", after=_loopback))
    if not socket.has_ipv6:
        socket.inet_pton, socket.inet_ntop = _inet_pton, _inet_ntop
        socket.has_ipv6 = True


_c_pton, _c_ntop = socket.inet_pton, socket.inet_ntop


def _inet_pton(family: int, address: str) -> bytes:
    """``socket.inet_pton``, IPv6 included."""
    if family != socket.AF_INET6:
        return _c_pton(family, address)
    try:
        return ipaddress.IPv6Address(address).packed
    except ValueError:
        raise OSError("illegal IP address string passed to inet_pton") from None


def _inet_ntop(family: int, packed: bytes) -> str:
    """``socket.inet_ntop``, IPv6 included."""
    if family != socket.AF_INET6:
        return _c_ntop(family, packed)
    if len(packed) != 16:
        raise ValueError("invalid length of packed IP address string")
    return str(ipaddress.IPv6Address(bytes(packed)))


class _Quiet(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        return not any(q in message for q in _QUIET)


def _loopback(interfaces) -> None:
    """Register a loopback interface ``lo0`` with scapy (*interfaces*: scapy.interfaces)."""

    class Loopback(interfaces.InterfaceProvider):
        name = "sfclab (browser)"

        def load(self):
            data = {"name": "lo0", "network_name": "lo0", "description": "loopback",
                    "index": 1, "ips": ["127.0.0.1", "::1"], "mac": "00:00:00:00:00:00",
                    "flags": 0}
            return {"lo0": interfaces.NetworkInterface(self, data=data)}

    interfaces.conf.ifaces.register_provider(Loopback)


class _Around(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Runs ``before()`` right before the module *name* is first run, ``after(module)``
    right after (also when running it failed)."""

    def __init__(self, name: str, *, before: Callable[[], None] = lambda: None,
                 after: Callable = lambda module: None) -> None:
        self.name, self.before, self.after, self.loader = name, before, after, None

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)                 # once; the usual finders find it
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        self.loader, spec.loader = spec.loader, self
        return spec

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module) -> None:
        self.before()
        try:
            self.loader.exec_module(module)
        finally:
            self.after(module)
