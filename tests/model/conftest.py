"""Shared pieces of the embedded model's tests: a v1model program skeleton."""

from __future__ import annotations

import pytest

from sfclab.targets.model import ModelSwitch

ETH_IPV4 = """
header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> diffserv; bit<16> total_len; bit<16> identification;
    bit<3> flags; bit<13> frag_offset; bit<8> ttl; bit<8> protocol; bit<16> checksum;
    bit<32> src; bit<32> dst;
}
"""


def v1model(decls: str, parser: str, ingress: str, egress: str = "apply { }",
            deparser: str = "apply { pkt.emit(hdr); }", verify: str = "apply { }",
            compute: str = "apply { }", headers: str = "ethernet_t ethernet;",
            meta: str = "bit<8> unused;") -> str:
    """A complete v1model program from its parts (control bodies with their locals)."""
    return f"""
#include <core.p4>
#include <v1model.p4>
{decls}
struct headers_t {{ {headers} }}
struct meta_t {{ {meta} }}
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {{
{parser}
}}
control VC(inout headers_t hdr, inout meta_t meta) {{ {verify} }}
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {{
{ingress}
}}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {{
{egress}
}}
control CC(inout headers_t hdr, inout meta_t meta) {{ {compute} }}
control D(packet_out pkt, in headers_t hdr) {{ {deparser} }}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


@pytest.fixture
def make():
    """``make(text, **opts)``: a ModelSwitch running *text*."""
    return lambda text, **kw: ModelSwitch(text, **kw)
