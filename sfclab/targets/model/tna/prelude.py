"""What ``#include <tna.p4>`` declares that a running program needs, as P4 text.

The model reads a TNA program with the types, enums, constants and intrinsic
metadata of Tofino 1's architecture files (``tofino1_specs.p4``,
``tofino1_base.p4``; p4c's open Tofino back end, ``p4include/``), written out
here with their macros expanded (``PortId_t`` is ``bit<9>``, the padding of
``ingress_intrinsic_metadata_t`` is ``bit<3>``).  The field lists are the
files' own, in their order: the model builds the bytes the parsers extract
(``pkt.extract(ig_intr_md)``) from them, so a field out of place would shift
every header after it.  ``tests/targets/model/tna/test_prelude.py`` compares
them with the installed ``tna.p4`` where it is present.

:func:`with_prelude` puts these declarations in front of a program's own.

>>> from sfclab.p4 import parse_p4
>>> prog = with_prelude(parse_p4("#include <tna.p4>\\nheader h_t { bit<8> x; }"))
>>> [d.name for d in prog.decls if getattr(d, "name", "") == "ingress_intrinsic_metadata_t"]
['ingress_intrinsic_metadata_t']
"""

from __future__ import annotations

import re
from functools import lru_cache

from ....p4 import ast as A
from ....p4.arch import ARCH_FILES
from ....p4.parser import parse_p4

__all__ = ["PRELUDE", "with_prelude", "PORT_METADATA_BYTES", "INTRINSIC_TYPES"]

#: ``PORT_METADATA_SIZE`` (64 bits) in bytes: what the ingress parser finds after
#: ``ig_intr_md`` (the port's metadata, or a resubmitted packet's resubmit header).
PORT_METADATA_BYTES = 8

PRELUDE = """
typedef bit<9> PortId_t;
typedef bit<16> MulticastGroupId_t;
typedef bit<5> QueueId_t;
typedef bit<3> MirrorType_t;
typedef bit<10> MirrorId_t;
typedef bit<3> ResubmitType_t;
typedef bit<3> DigestType_t;
typedef bit<16> ReplicationId_t;
typedef bit<16> L1ExclusionId_t;
typedef bit<9> L2ExclusionId_t;
const bit<32> PORT_METADATA_SIZE = 32w64;
const bit<16> PARSER_ERROR_OK = 16w0x0000;
const bit<16> PARSER_ERROR_NO_MATCH = 16w0x0001;
const bit<16> PARSER_ERROR_PARTIAL_HDR = 16w0x0002;
const bit<16> PARSER_ERROR_CTR_RANGE = 16w0x0004;
const bit<16> PARSER_ERROR_TIMEOUT_USER = 16w0x0008;
const bit<16> PARSER_ERROR_TIMEOUT_HW = 16w0x0010;
const bit<16> PARSER_ERROR_SRC_EXT = 16w0x0020;
const bit<16> PARSER_ERROR_DST_CONT = 16w0x0040;
const bit<16> PARSER_ERROR_PHV_OWNER = 16w0x0080;
const bit<16> PARSER_ERROR_MULTIWRITE = 16w0x0100;
const bit<16> PARSER_ERROR_ARAM_MBE = 16w0x0400;
const bit<16> PARSER_ERROR_FCS = 16w0x0800;
enum MeterType_t { PACKETS, BYTES }
enum bit<8> MeterColor_t { GREEN = 8w0, YELLOW = 8w1, RED = 8w3 }
enum CounterType_t { PACKETS, BYTES, PACKETS_AND_BYTES }
enum SelectorMode_t { FAIR, RESILIENT }
enum HashAlgorithm_t { IDENTITY, RANDOM, XOR8, XOR16, XOR32, CRC8, CRC16, CRC32, CRC64, CUSTOM }
enum MathOp_t { MUL, SQR, SQRT, DIV, RSQR, RSQRT }
error { CounterRange, Timeout, PhvOwner, MultiWrite, IbufOverflow, IbufUnderflow }
header ingress_intrinsic_metadata_t {
    bit<1> resubmit_flag;
    bit<1> _pad1;
    bit<2> packet_version;
    bit<3> _pad2;
    PortId_t ingress_port;
    bit<48> ingress_mac_tstamp;
}
struct ingress_intrinsic_metadata_for_tm_t {
    PortId_t ucast_egress_port;
    bit<1> bypass_egress;
    bit<1> deflect_on_drop;
    bit<3> ingress_cos;
    QueueId_t qid;
    bit<3> icos_for_copy_to_cpu;
    bit<1> copy_to_cpu;
    bit<2> packet_color;
    bit<1> disable_ucast_cutthru;
    bit<1> enable_mcast_cutthru;
    MulticastGroupId_t mcast_grp_a;
    MulticastGroupId_t mcast_grp_b;
    bit<13> level1_mcast_hash;
    bit<13> level2_mcast_hash;
    L1ExclusionId_t level1_exclusion_id;
    L2ExclusionId_t level2_exclusion_id;
    bit<16> rid;
}
struct ingress_intrinsic_metadata_from_parser_t {
    bit<48> global_tstamp;
    bit<32> global_ver;
    bit<16> parser_err;
}
struct ingress_intrinsic_metadata_for_deparser_t {
    bit<3> drop_ctl;
    DigestType_t digest_type;
    ResubmitType_t resubmit_type;
    MirrorType_t mirror_type;
}
header egress_intrinsic_metadata_t {
    bit<7> _pad0;
    PortId_t egress_port;
    bit<5> _pad1;
    bit<19> enq_qdepth;
    bit<6> _pad2;
    bit<2> enq_congest_stat;
    bit<14> _pad3;
    bit<18> enq_tstamp;
    bit<5> _pad4;
    bit<19> deq_qdepth;
    bit<6> _pad5;
    bit<2> deq_congest_stat;
    bit<8> app_pool_congest_stat;
    bit<14> _pad6;
    bit<18> deq_timedelta;
    bit<16> egress_rid;
    bit<7> _pad7;
    bit<1> egress_rid_first;
    bit<3> _pad8;
    QueueId_t egress_qid;
    bit<5> _pad9;
    bit<3> egress_cos;
    bit<7> _pad10;
    bit<1> deflection_flag;
    bit<16> pkt_length;
}
struct egress_intrinsic_metadata_from_parser_t {
    bit<48> global_tstamp;
    bit<32> global_ver;
    bit<16> parser_err;
}
struct egress_intrinsic_metadata_for_deparser_t {
    bit<3> drop_ctl;
    MirrorType_t mirror_type;
    bit<1> coalesce_flush;
    bit<7> coalesce_length;
}
struct egress_intrinsic_metadata_for_output_port_t {
    bit<1> capture_tstamp_on_tx;
    bit<1> update_delay_on_tx;
}
header pktgen_timer_header_t {
    bit<3> _pad1;
    bit<2> pipe_id;
    bit<3> app_id;
    bit<8> _pad2;
    bit<16> batch_id;
    bit<16> packet_id;
}
header pktgen_port_down_header_t {
    bit<3> _pad1;
    bit<2> pipe_id;
    bit<3> app_id;
    bit<7> _pad2;
    PortId_t port_num;
    bit<16> packet_id;
}
header pktgen_recirc_header_t {
    bit<3> _pad1;
    bit<2> pipe_id;
    bit<3> app_id;
    bit<24> key;
    bit<16> packet_id;
}
header ptp_metadata_t {
    bit<8> udp_cksum_byte_offset;
    bit<8> cf_byte_offset;
    bit<48> updated_cf;
}
"""

#: The intrinsic metadata types, by the role the model gives each (a block's
#: parameter of that type is bound to the model's storage for it).
INTRINSIC_TYPES = (
    "ingress_intrinsic_metadata_t", "ingress_intrinsic_metadata_for_tm_t",
    "ingress_intrinsic_metadata_from_parser_t", "ingress_intrinsic_metadata_for_deparser_t",
    "egress_intrinsic_metadata_t", "egress_intrinsic_metadata_from_parser_t",
    "egress_intrinsic_metadata_for_deparser_t", "egress_intrinsic_metadata_for_output_port_t")


@lru_cache(maxsize=1)
def _prelude() -> tuple[A.Node, ...]:
    # the names the prelude declares are not known beforehand (they would lex as types)
    declared = set(re.findall(r"(?:typedef bit<\d+>|enum(?: bit<\d+>)?|header|struct) (\w+)",
                              PRELUDE))
    types = ARCH_FILES["tna.p4"].types - declared
    return parse_p4(PRELUDE, source="<tna.p4>", types=types).decls


def with_prelude(prog: A.Program) -> A.Program:
    """*prog* with tna.p4's declarations in front of its own (those it declares
    itself win: a name is declared once)."""
    own = {getattr(d, "name", None) for d in prog.decls} - {None}
    pre = tuple(d for d in _prelude() if getattr(d, "name", None) not in own)
    return A.Program(pre + prog.decls, prog.source)
