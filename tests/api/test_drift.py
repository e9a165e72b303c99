"""sfclab.api.drift: whether the target runs the Lab's chains, what differs and what applies it;
lab.send's summary says so first (issue 19.3)."""

from __future__ import annotations

import pytest

import sfclab
from sfclab.api.drift import drift

WEB = "chain web match tcp.dport == 80: firewall -> nat -> l3fwd\n" \
      "chain dns match udp.dport == 53: firewall -> l3fwd"


@pytest.fixture
def lab():
    lab = sfclab.Lab()
    lab.add(WEB)
    yield lab
    lab.close()


def test_nothing_pushed_or_nothing_changed_is_no_drift(lab):
    assert drift(lab) is None
    lab.push()
    assert drift(lab) is None
    lab.add("chain web match tcp.dport == 80: firewall -> nat -> l3fwd")   # the same again
    assert drift(lab) is None


def test_a_new_nf_slot_needs_a_reload_and_says_which_chain(lab):
    lab.push()
    lab.add("chain web match tcp.dport == 80: firewall -> nat -> l3fwd -> monitor")
    d = drift(lab)
    assert (d.changed, d.added, d.removed, d.needs) == (("web",), (), (), "reload")
    assert "monitor" in d.reason and d.command == "%sfc update --reload (or %sfc push)"
    lab.update(allow_reload=True)
    assert drift(lab) is None


def test_a_change_within_the_slots_is_entries_only(lab):
    lab.push()
    lab.remove("dns")
    lab.add("chain ssh match tcp.dport == 22: firewall -> l3fwd")
    d = drift(lab)
    assert (d.changed, d.added, d.removed, d.needs) == ((), ("ssh",), ("dns",), "entries")
    assert d.what() == "ssh added; dns removed" and d.command == "%sfc update"
    assert str(lab.update()).startswith("entries only")
    assert drift(lab) is None


def test_send_summary_warns_first_when_the_target_runs_other_chains(lab):
    lab.push()
    assert lab.send("web", 2).summary().startswith("web: 2 packets")
    lab.add("chain web match tcp.dport == 80: firewall -> nat -> l3fwd -> monitor")
    first = lab.send("web", 2).summary().splitlines()[0]
    assert first.startswith("warning: the target still runs the chains of the last push")
    assert "web changed" in first and "lab.update(allow_reload=True)" in first


GATE = "control gate(inout headers_t hdr, inout sfc_meta_t sfc) {\n    apply { }\n}"
CLOSED = GATE.replace("apply { }", "apply { sfc.drop = 1; }")


def test_an_nf_redefined_after_the_push_is_drift_until_a_reload_applies_it():
    """The switch runs the NF code of the push: an NF redefined since (%%nf) is named,
    with the command that applies it; comments and layout alone are no change."""
    lab = sfclab.Lab()
    try:
        lab.add_nf(GATE)
        lab.add("chain web match tcp.dport == 80: gate -> l3fwd")
        lab.push()
        lab.add_nf("// let everything through\n" + GATE.replace("{ }", "{  }"))
        assert drift(lab) is None
        lab.add_nf(CLOSED)
        d = drift(lab)
        assert d is not None and d.nfs == ("gate",) and (d.changed, d.added, d.removed) == \
            ((), (), ())
        assert d.needs == "reload" and "NF code" in d.reason
        assert d.command == "%sfc update --reload (or %sfc push)"
        assert d.message().startswith("the target still runs the NF code of the last push")
        assert "NF gate redefined since (%%nf): the switch runs its old code" in d.message()
        sent = lab.send("web", 2)                           # the old code: not dropped
        assert sent.summary().startswith("warning: the target still runs the NF code")
        assert not any(r.dropped for r in sent)
        lab.update(allow_reload=True)
        assert drift(lab) is None
        assert all(r.dropped for r in lab.send("web", 2))
    finally:
        lab.close()


def test_a_chain_change_and_a_redefined_nf_are_said_together(lab):
    lab.add_nf(GATE)
    lab.add("chain web match tcp.dport == 80: firewall -> gate -> l3fwd")
    lab.push()
    lab.add_nf(CLOSED)
    lab.remove("dns")
    d = drift(lab)
    assert d.what() == "dns removed; NF gate redefined since (%%nf): the switch runs its old code"
    assert d.needs == "reload"
