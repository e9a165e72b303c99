"""P4NFV's state migration: a stateful firewall's per-flow state moves between two
switches by register reads and writes over P4Runtime, and the flow carries on."""

from __future__ import annotations

import pytest
from scapy.all import IP, TCP, Ether

import sfclab
from sfclab.codegen import generate
from sfclab.errors import TargetError
from sfclab.runtime.migrate import migrate_registers, read_registers, register_names
from sfclab.targets.model import ModelTarget

CHAIN = "chain s match tcp.dport == 80: stateful_firewall -> l3fwd"
FLOW = Ether(dst="00:00:00:00:00:02") / IP(src="192.168.1.10", dst="10.0.1.5") / TCP(sport=1234, dport=80)


def test_the_flow_state_moves_and_carries_on():
    gen = generate(sfclab.compile(CHAIN))
    with ModelTarget() as a, ModelTarget() as b:
        a.push(gen)
        b.push(gen)
        # Explicit arrival times (µs): each switch has its own clock, and the firewall's
        # window is 1 s, so the flow must reach b within a second of its window's start.
        for i in range(5):
            a.send(1, FLOW, now_us=1_000 + i)
        names = register_names(a.session, "stateful_firewall")
        assert len(names) == 2 and all("slot0_stateful_firewall" in n for n in names)
        count = next(n for n in names if n.endswith("window_count"))
        before = read_registers(a.session, [count])[count]
        assert sorted(v for v in before if v) == [5]           # the flow's cell counted 5
        moved = migrate_registers(a.session, b.session, nf="stateful_firewall")
        assert moved == sum(len(v) for v in read_registers(a.session, names).values())
        assert read_registers(b.session, names) == read_registers(a.session, names)
        b.send(1, FLOW, now_us=2_000)                          # the flow continues on b
        after = read_registers(b.session, [count])[count]
        assert sorted(v for v in after if v) == [6]


def test_migration_needs_the_same_program_on_both():
    with ModelTarget() as a, ModelTarget() as b:
        a.push(generate(sfclab.compile(CHAIN)))
        with pytest.raises(TargetError, match="need the program pushed"):
            migrate_registers(a.session, b.session)
        b.push(generate(sfclab.compile("chain t: l3fwd")))
        with pytest.raises(TargetError, match="has no register"):
            migrate_registers(a.session, b.session, nf="stateful_firewall")
