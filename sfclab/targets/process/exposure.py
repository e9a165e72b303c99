"""Where a switch process can be reached from: the sockets it listens on, and the
addresses each one accepts connections on.

A socket bound to one address is reached on that address; one bound to the wildcard
(``0.0.0.0``, ``::``: what BMv2's Thrift server binds) on every local address of the
network namespace it lives in.  sfclab starts each BMv2 in a namespace of its own,
whose one address is its loopback (:mod:`sfclab.targets.process.keeper`), so even a wildcard socket there is
reached from this machine only.  :func:`listening` reads it all from ``/proc`` (the
process, its children, and the namespace each one is in) and
:meth:`Listener.beyond_loopback` says what a socket would let in from elsewhere::

    for s in listening(pid):
        assert not s.beyond_loopback(), s

>>> _ipv4("0100007F"), _ipv6("00000000000000000000000001000000")
('127.0.0.1', '::1')
"""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Listener", "listening", "local_addresses", "descendants"]

#: ``/proc/net/{tcp,udp}`` states of a listening TCP socket and a bound UDP one.
_LISTEN, _UNCONNECTED = "0A", "07"


@dataclass(frozen=True)
class Listener:
    """A socket of process *pid* (*process*: its name) listening on *address*:*port*
    (*proto*: ``tcp``, ``tcp6``, ``udp``, ``udp6``) in network namespace *netns*, which
    accepts connections on *reachable* (the namespace's local addresses, for a wildcard)."""

    pid: int
    process: str
    proto: str
    address: str
    port: int
    netns: str
    reachable: tuple[str, ...]

    def beyond_loopback(self) -> tuple[str, ...]:
        """The addresses it is reached on that are not a loopback address."""
        return tuple(a for a in self.reachable if not ipaddress.ip_address(a).is_loopback)

    def __str__(self) -> str:
        return (f"{self.process} (pid {self.pid}) {self.proto} {self.address}:{self.port} in "
                f"{self.netns}, reached on {', '.join(self.reachable) or 'no address'}")


def _ipv4(hexaddr: str) -> str:
    return str(ipaddress.IPv4Address(bytes.fromhex(hexaddr)[::-1]))


def _ipv6(hexaddr: str) -> str:
    raw = bytes.fromhex(hexaddr)
    return str(ipaddress.IPv6Address(b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4))))


def descendants(pid: int) -> list[int]:
    """*pid* and every process under it (``/proc/PID/task/*/children``)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            tasks = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for t in tasks:
            try:
                todo += [int(c) for c in Path(f"/proc/{p}/task/{t}/children").read_text().split()]
            except OSError:
                continue
    return out


def local_addresses(pid: int) -> tuple[str, ...]:
    """The local addresses of process *pid*'s network namespace (``fib_trie``'s LOCAL
    routes for IPv4; ``if_inet6`` for IPv6)."""
    out: list[str] = []
    try:
        last = ""
        for line in Path(f"/proc/{pid}/net/fib_trie").read_text().splitlines():
            text = line.strip()
            if text.startswith(("|--", "+--")):
                last = text.split()[1]
            elif text == "/32 host LOCAL" and last not in out:
                out.append(last)
    except OSError:
        pass
    try:
        for line in Path(f"/proc/{pid}/net/if_inet6").read_text().splitlines():
            addr = _ipv6(line.split()[0])
            if addr not in out:
                out.append(addr)
    except OSError:
        pass
    return tuple(out)


def _sockets(pid: int) -> set[str]:
    out = set()
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return out
    for fd in fds:
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if link.startswith("socket:["):
            out.add(link[len("socket:["):-1])
    return out


def _table(pid: int, proto: str) -> list[tuple[str, int, str, str]]:
    """``(address, port, state, inode)`` of each socket in ``/proc/PID/net/PROTO``."""
    out = []
    try:
        lines = Path(f"/proc/{pid}/net/{proto}").read_text().splitlines()[1:]
    except OSError:
        return out
    decode = _ipv6 if proto.endswith("6") else _ipv4
    for line in lines:
        f = line.split()
        addr, port = f[1].split(":")
        out.append((decode(addr), int(port, 16), f[3], f[9]))
    return out


def listening(pid: int) -> list[Listener]:
    """Every socket that process *pid* and the processes under it listen on (TCP) or
    are bound to (UDP), with where each is reached from (module docstring)."""
    out = []
    for p in descendants(pid):
        mine = _sockets(p)
        if not mine:
            continue
        try:
            netns = os.readlink(f"/proc/{p}/ns/net")
            name = Path(f"/proc/{p}/comm").read_text().strip()
        except OSError:
            continue
        local = local_addresses(p)
        for proto in ("tcp", "tcp6", "udp", "udp6"):
            state = _LISTEN if proto.startswith("tcp") else _UNCONNECTED
            for addr, port, st, inode in _table(p, proto):
                if st != state or inode not in mine:
                    continue
                wild = ipaddress.ip_address(addr).is_unspecified
                reach = ((tuple(a for a in local if ":" not in a) if addr == "0.0.0.0"
                          else local) if wild else (addr,))
                out.append(Listener(p, name, proto, addr, port, netns, reach))
    return out
