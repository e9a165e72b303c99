"""Fixtures for the Mininet tests and the model switch process on interfaces.

They need root (veth pairs, network namespaces, raw sockets) and, for Mininet,
Debian's ``mininet`` package; without them they skip, saying which is missing.
Interfaces made in the root namespace get names of their own (a random
prefix), since other test runs may make veth pairs at the same time, and are
removed afterwards.
"""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Iterator

import pytest


@pytest.fixture
def root() -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root (veth pairs and raw sockets); not root here")


@pytest.fixture
def mininet(root) -> None:
    from sfclab.targets.mininet import missing_mininet

    why = missing_mininet()
    if why:
        pytest.skip(why)


@pytest.fixture
def prefix() -> str:
    """A prefix for the names of this test's switch interfaces."""
    return "t" + uuid.uuid4().hex[:3]


@pytest.fixture
def veths(root, prefix) -> Iterator[list[tuple[str, str]]]:
    """Two veth pairs ``(switch end, host end)``, up, IPv6 off; removed afterwards."""
    pairs = [(f"{prefix}sw{i}", f"{prefix}h{i}") for i in (1, 2)]
    try:
        for a, b in pairs:
            made = subprocess.run(["ip", "link", "add", a, "type", "veth", "peer", "name", b],
                                  capture_output=True, text=True, check=False)
            if made.returncode:
                pytest.skip(f"cannot create a veth pair here: {made.stderr.strip()}")
            for name in (a, b):
                with open(f"/proc/sys/net/ipv6/conf/{name}/disable_ipv6", "w") as f:
                    f.write("1")
                subprocess.run(["ip", "link", "set", name, "up"], check=True)
        yield pairs
    finally:
        for a, _ in pairs:
            subprocess.run(["ip", "link", "del", a], capture_output=True, check=False)

