"""A mistake in a target URL's query reads the same on every target: an unknown parameter
gets a "did you mean" (else the known ones), a bad value says what it must be, in the URL the
user wrote; and nothing is started or connected before the URL is read."""

from __future__ import annotations

import pytest

from sfclab.errors import TargetError
from sfclab.targets.bmv2.target import parse_bmv2_url
from sfclab.targets.connect import open_target
from sfclab.targets.tofino.target import parse_tofino_url
from sfclab.targets.url_query import INTEGER, PORTS, TEXT, VETH, choice, read_query

#: Each target's URL reader and a URL of it with room for a query.
READERS = {"bmv2": (parse_bmv2_url, "bmv2://127.0.0.1:9559"),
           "bmv2 (started)": (parse_bmv2_url, "bmv2"),
           "tofino": (parse_tofino_url, "tofino://127.0.0.1:9559"),
           "model switch": (open_target, "model://127.0.0.1:9559")}
VETH_READERS = {k: v for k, v in READERS.items() if k != "model switch"}


def _error(read, url: str) -> TargetError:
    with pytest.raises(TargetError) as e:
        read(url)
    return e.value


@pytest.mark.parametrize("kind", READERS)
def test_an_unknown_parameter_gets_did_you_mean(kind):
    read, base = READERS[kind]
    url = f"{base}?device_id=1&devid=1"
    e = _error(read, url)
    assert (e.message, e.hint) == (f"unknown parameter 'devid' in {url!r}",
                                   "did you mean 'device_id'?")


def test_an_unknown_parameter_far_from_any_lists_the_known_ones():
    e = _error(parse_tofino_url, "tofino://h:1?zzz=1")
    assert e.hint == "known: device_id, format, veth"
    e = _error(open_target, "model?zzz=1")
    assert e.hint == "known: server_port, arch, pipes, loopback"


@pytest.mark.parametrize("kind", READERS)
@pytest.mark.parametrize("value", ["x", "", "1.5"])
def test_a_device_id_that_is_no_integer(kind, value):
    read, base = READERS[kind]
    url = f"{base}?device_id={value}"
    assert str(_error(read, url)) == f"device_id must be an integer in {url!r}, not {value!r}"


@pytest.mark.parametrize("kind", VETH_READERS)
@pytest.mark.parametrize("value,part", [("veth0", "veth0"), ("1@veth0,2veth2", "2veth2"),
                                        ("1@", "1@"), ("x@veth0", "x@veth0")])
def test_veth_ports_that_cannot_be_read_name_the_pair(kind, value, part):
    read, base = VETH_READERS[kind]
    url = f"{base}?veth={value}"
    e = _error(read, url)
    assert e.message == (f"veth must be PORT@INTERFACE pairs in {url!r}, not {value!r} "
                         f"(cannot read the port {part!r})")
    assert e.hint == "give the switch's ends of its veth pairs: veth=1@veth0,2@veth2"


def test_a_value_outside_the_choices():
    e = _error(parse_tofino_url, "tofino://h:1?format=bfrtt")
    assert (e.message, e.hint) == (
        "format must be pi or bfrt in 'tofino://h:1?format=bfrtt', not 'bfrtt'",
        "did you mean 'bfrt'?")
    e = _error(parse_tofino_url, "tofino://h:1?format=json")
    assert e.hint == "pi (bf_switchd --p4rt-server, stratum_bf) or bfrt (stratum_bfrt)"
    e = _error(open_target, "model://h:1?arch=tan")
    assert (e.message, e.hint) == (
        "arch must be v1model or tna in 'model://h:1?arch=tan', not 'tan'",
        "did you mean 'tna'?")


def test_the_embedded_models_parameters():
    e = _error(open_target, "model?arch=tna&loopback=4,x")
    assert (e.message, e.hint) == (
        "loopback must be port numbers in 'model?arch=tna&loopback=4,x', not '4,x'",
        "give them with commas: loopback=4,132")
    assert str(_error(open_target, "model?pipes=two")) == (
        "pipes must be an integer in 'model?pipes=two', not 'two'")


def test_read_query():
    params = {"n": INTEGER, "name": TEXT, "veth": VETH, "loopback": PORTS,
              "format": choice("pi", "bfrt")}
    assert read_query("x", params) == {}
    assert read_query("x?n=1&n=2&name=&veth=1@a,%202@b&loopback=4,,132&format=pi", params) == {
        "n": 2, "name": None, "veth": {1: "a", 2: "b"}, "loopback": (4, 132), "format": "pi"}
    assert read_query("x?veth=", params) == {"veth": None}


def test_the_parsers_read_their_queries():
    u = parse_bmv2_url("bmv2://h:1?device_id=2&cpu_port=64&veth=1@v0&thrift=9090")
    assert (u["device_id"], u["cpu_port"], u["veth"], u["thrift"], u["json"]) == (
        2, 64, {1: "v0"}, "9090", None)
    assert parse_tofino_url("tofino://h:1?veth=1@v0&format=bfrt") == {
        "host": "h", "port": 1, "device_id": 0, "format": "bfrt", "veth": {1: "v0"}}


def test_network_connect_reads_its_url_in_the_same_words():
    """``Network.connect("mininet?…")`` had its own reader ("the Mininet network has no option
    'timeuot'", "option timeout='soon' is not a float"): now the words are the switch
    targets', and the network it was connected to is kept."""
    import sfclab
    from sfclab.ir.topology import line

    net = sfclab.Network(line(2), "chain a: firewall")
    try:
        before = net.target
        e = _error(net.connect, "mininet?timeuot=3")
        assert (e.message, e.hint) == ("unknown parameter 'timeuot' in 'mininet?timeuot=3'",
                                       "did you mean 'timeout' or 'start_timeout'?")
        url = "mininet?switch=model&timeout=soon"
        assert str(_error(net.connect, url)) == f"timeout must be a number in {url!r}, not 'soon'"
        assert net.target is before
    finally:
        net.close()
