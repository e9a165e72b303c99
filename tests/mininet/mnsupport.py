"""Helpers of the Mininet tests (fixtures are in conftest.py)."""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from sfclab.targets.process.tools import ManagedProcess, free_port, wait_for_port


#: Chains on line(3, stages=8): web split over two switches; ping and pong carry ICMP
#: both ways, so a real ping between h1 and h2 crosses their NFs.
LINE_CHAINS = """
chain web match ipv4.proto == 6 && tcp.dport == 80: heavy_hitter -> nat
chain ping match ipv4.proto == 1 && ipv4.dst == 10.0.0.2: firewall -> monitor
chain pong match ipv4.proto == 1 && ipv4.dst == 10.0.0.1: monitor
"""
LINE_ENDS = {"web": ("h1", "h2"), "ping": ("h1", "h2"), "pong": ("h2", "h1")}


def line_example(text: str = LINE_CHAINS, ends: dict | None = None) -> tuple:
    """(topology, chains) of the line example (or of chains *text* with *ends*)."""
    import sfclab
    from sfclab.ir.topology import line

    chains = sfclab.parse(text)
    for c in chains:
        c.ingress, c.egress = (ends or LINE_ENDS)[c.name]
    return line(3, stages=8), chains


def interfaces_named(prefix: str) -> list[str]:
    """The root namespace's interfaces whose names start with *prefix*."""
    return sorted(n for n in os.listdir("/sys/class/net") if n.startswith(prefix))


def needs_network_chains() -> None:
    """Skip unless the network-wide chains (placement, per-switch programs, the
    embedded network) are in this tree."""
    pytest.importorskip("sfclab.targets.network",
                        reason="sfclab.targets.network (network-wide chains) is not in this tree")


def both_networks(topo, chains, switch: str = "model") -> Iterator[tuple]:
    """``(embedded, mininet)``: a :class:`sfclab.network.Network` of *chains* on *topo*
    (its embedded network pushed) and a Mininet network of *switch* processes pushed
    the same program; both closed afterwards, and no interface left behind.  Skips
    without root, Mininet or the network-wide chains."""
    from sfclab.targets.mininet import MininetNetwork, missing_mininet

    why = missing_mininet()
    if why:
        pytest.skip(why)
    needs_network_chains()
    from sfclab.network import Network

    embedded = Network(topo, chains)
    prefix = "t" + uuid.uuid4().hex[:3]
    real = MininetNetwork(topo, switch=switch, prefix=prefix)
    try:
        assert real.push(embedded.program) == embedded.push()
        yield embedded, real
    finally:
        real.close()
        embedded.close()
        assert interfaces_named(prefix) == []


def model_switch(ports: dict[int, str], workdir: Path, *extra: str
                 ) -> tuple[ManagedProcess, int]:
    """``sfclab model-switch --iface …`` started on *ports*; returns it and its gRPC port
    once it serves."""
    grpc = free_port()
    cmd = [sys.executable, "-m", "sfclab", "model-switch", "--grpc", f"127.0.0.1:{grpc}"]
    for p, name in ports.items():
        cmd += ["--iface", f"{p}@{name}"]
    proc = ManagedProcess.start([*cmd, *extra], log_path=workdir / "switch.log")
    try:
        wait_for_port("127.0.0.1", grpc, timeout=60, process=proc, what="the model switch")
    except BaseException:
        proc.stop()
        raise
    return proc, grpc
