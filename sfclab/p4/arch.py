"""What the architecture files declare: sfclab's copy of their externs, as data.

sfclab writes programs for p4c's ``v1model.p4`` (BMv2) and for the open Tofino
back end's ``tna.p4``; a program is only right if those files accept it.  This
module holds, per file a program may ``#include``, what the file declares that
a program uses: its extern objects and functions (as P4 prototypes, the way
the file declares them), its enums and match kinds, the other names it
declares, and the macros it reads, with the ``#if`` that selects each form.
:mod:`sfclab.p4.check` checks programs against it.

Sources (each :class:`ArchFile` names its own):

* ``core.p4`` — p4lang/p4c ``p4include/core.p4``;
* ``v1model.p4`` — p4lang/p4c ``p4include/v1model.p4``.  It reads
  ``V1MODEL_VERSION`` (default 20180101, ``#ifndef … #define``); with
  ``#define V1MODEL_VERSION 20200408`` (or later) before the ``#include``,
  ``register<T, I>``, ``counter<I>`` and ``meter<I>`` take an index of type
  ``I``; otherwise ``register<T>``, ``counter`` and ``meter`` take ``bit<32>``;
* ``tna.p4`` — p4lang/p4c ``backends/tofino/bf-p4c/p4include/tna.p4``, which
  includes ``tofino1_specs.p4`` (types, ``PORT_METADATA_SIZE``) and
  ``tofino1_arch.p4`` (blocks, packages), which includes ``tofino1_base.p4``
  (enums, externs; formerly ``tofino.p4``).  It reads ``__TARGET_TOFINO__``
  (1 or 2), which the compiler defines (``bf-p4c``, ``p4test -D``).

What the declarations mean once parsed is :mod:`sfclab.p4.archdecls` (above the parser,
which reads the type names here).

>>> sorted(DEFINES)
['V1MODEL_VERSION', '__TARGET_TOFINO__']
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from . import ast as A

__all__ = ["Cond", "ArchFile", "ARCH_FILES", "DEFINES", "ARCH_OF_INCLUDE", "Declarations"]


@dataclass(frozen=True, slots=True)
class Cond:
    """``#if DEFINE >= at_least`` (``otherwise``: its ``#else``)."""

    define: str
    at_least: int
    otherwise: bool = False

    def holds(self, defines: Mapping[str, int]) -> bool:
        return (defines[self.define] >= self.at_least) != self.otherwise


@dataclass(frozen=True, slots=True)
class Declarations:
    """The externs, extern functions, enums and match kinds in force for one program."""

    externs: Mapping[str, A.ExternDecl]
    functions: Mapping[str, tuple[A.MethodDecl, ...]]
    enums: Mapping[str, A.EnumDecl]
    match_kinds: frozenset[str]
    values: frozenset[str]          # every other name a program may use (consts, actions …)
    typedefs: Mapping[str, A.Node] = field(default_factory=dict)   # name -> bit<W>
    errors: frozenset[str] = frozenset()                            # error { … } members


@dataclass(frozen=True)
class ArchFile:
    """One file a program includes, as far as sfclab checks programs against it."""

    name: str
    arch: str                                  # "v1model", "tna", or "" (core.p4)
    source: str                                # where the declarations below come from
    types: frozenset[str]                      # type names it declares
    decls: tuple[tuple[Cond | None, str], ...]  # P4 declarations, under their #if
    values: frozenset[str] = frozenset()       # other names, not checked beyond existing
    defines: Mapping[str, int | None] = field(default_factory=dict)  # macro -> default
    includes: tuple[str, ...] = ("core.p4",)
    typedefs: Mapping[str, int] = field(default_factory=dict)   # typedef bit<W> NAME


# --- core.p4 -------------------------------------------------------------------------------

_CORE = ArchFile(
    name="core.p4", arch="", includes=(),
    source="p4lang/p4c p4include/core.p4",
    types=frozenset({"packet_in", "packet_out", "value_set"}),   # value_set: a P4 built-in
    values=frozenset({"NoAction", "static_assert"}),
    decls=(
        (None, "extern packet_in { void extract<T>(out T hdr); "
               "void extract<T>(out T variableSizeHeader, in bit<32> variableFieldSizeInBits); "
               "T lookahead<T>(); void advance(in bit<32> sizeInBits); bit<32> length(); }"),
        (None, "extern packet_out { void emit<T>(in T hdr); }"),
        (None, "extern void verify(in bool check, in error toSignal);"),
        (None, "match_kind { exact, ternary, lpm }"),
        (None, "error { NoError, PacketTooShort, NoMatch, StackOutOfBounds, HeaderTooShort, "
               "ParserTimeout, ParserInvalidArgument }"),
    ),
)

# --- v1model.p4 ----------------------------------------------------------------------------

_V1 = "V1MODEL_VERSION"
_INDEXED = Cond(_V1, 20200408)                  # #if V1MODEL_VERSION >= 20200408
_BIT32 = Cond(_V1, 20200408, otherwise=True)    # #else

_V1MODEL = ArchFile(
    name="v1model.p4", arch="v1model",
    source="p4lang/p4c p4include/v1model.p4",
    defines=MappingProxyType({_V1: 20180101}),
    types=frozenset({
        "standard_metadata_t", "V1Switch", "Parser", "VerifyChecksum", "Ingress", "Egress",
        "ComputeChecksum", "Deparser", "register", "counter", "direct_counter", "meter",
        "direct_meter", "CounterType", "MeterType", "HashAlgorithm", "CloneType",
        "action_profile", "action_selector", "Checksum16", "PortId_t"}),
    values=frozenset({"log_msg", "__v1model_version"}),
    typedefs=MappingProxyType({"PortId_t": 9}),
    decls=(
        (None, "match_kind { range, optional, selector }"),
        (None, "enum CounterType { packets, bytes, packets_and_bytes }"),
        (None, "enum MeterType { packets, bytes }"),
        (None, "enum HashAlgorithm { crc32, crc32_custom, crc16, crc16_custom, random, "
               "identity, csum16, xor16 }"),
        (None, "enum CloneType { I2E, E2E }"),
        (_BIT32, "extern counter { counter(bit<32> size, CounterType type); "
                 "void count(in bit<32> index); }"),
        (_INDEXED, "extern counter<I> { counter(bit<32> size, CounterType type); "
                   "void count(in I index); }"),
        (None, "extern direct_counter { direct_counter(CounterType type); void count(); }"),
        (_BIT32, "extern meter { meter(bit<32> size, MeterType type); "
                 "void execute_meter<T>(in bit<32> index, out T result); }"),
        (_INDEXED, "extern meter<I> { meter(bit<32> size, MeterType type); "
                   "void execute_meter<T>(in I index, out T result); }"),
        (None, "extern direct_meter<T> { direct_meter(MeterType type); void read(out T result); }"),
        (_BIT32, "extern register<T> { register(bit<32> size); "
                 "void read(out T result, in bit<32> index); "
                 "void write(in bit<32> index, in T value); }"),
        (_INDEXED, "extern register<T, I> { register(bit<32> size); "
                   "void read(out T result, in I index); void write(in I index, in T value); }"),
        (None, "extern action_profile { action_profile(bit<32> size); }"),
        (None, "extern action_selector { action_selector(HashAlgorithm algorithm, "
               "bit<32> size, bit<32> outputWidth); }"),
        (None, "extern Checksum16 { Checksum16(); bit<16> get<D>(in D data); }"),
        (None, "extern void random<T>(out T result, in T lo, in T hi);"),
        (None, "extern void digest<T>(in bit<32> receiver, in T data);"),
        (None, "extern void mark_to_drop();"),                  # deprecated, still declared
        (None, "extern void mark_to_drop(inout standard_metadata_t standard_metadata);"),
        (None, "extern void hash<O, T, D, M>(out O result, in HashAlgorithm algo, in T base, "
               "in D data, in M max);"),
        (None, "extern void verify_checksum<T, O>(in bool condition, in T data, in O checksum, "
               "HashAlgorithm algo);"),
        (None, "extern void update_checksum<T, O>(in bool condition, in T data, "
               "inout O checksum, HashAlgorithm algo);"),
        (None, "extern void verify_checksum_with_payload<T, O>(in bool condition, in T data, "
               "in O checksum, HashAlgorithm algo);"),
        (None, "extern void update_checksum_with_payload<T, O>(in bool condition, in T data, "
               "inout O checksum, HashAlgorithm algo);"),
        (None, "extern void clone(in CloneType type, in bit<32> session);"),
        (None, "extern void resubmit<T>(in T data);"),
        (None, "extern void resubmit_preserving_field_list(bit<8> index);"),
        (None, "extern void recirculate<T>(in T data);"),
        (None, "extern void recirculate_preserving_field_list(bit<8> index);"),
        (None, "extern void clone3<T>(in CloneType type, in bit<32> session, in T data);"),
        (None, "extern void clone_preserving_field_list(in CloneType type, in bit<32> session, "
               "bit<8> index);"),
        (None, "extern void truncate(in bit<32> length);"),
        (None, "extern void assert(in bool check);"),
        (None, "extern void assume(in bool check);"),
    ),
)

# --- tna.p4 (tofino1_specs.p4, tofino1_arch.p4, tofino1_base.p4) ---------------------------

_TNA = ArchFile(
    name="tna.p4", arch="tna",
    source="p4lang/p4c backends/tofino/bf-p4c/p4include/tna.p4 (tofino1_specs.p4, "
           "tofino1_arch.p4, tofino1_base.p4)",
    defines=MappingProxyType({"__TARGET_TOFINO__": None}),
    types=frozenset({
        "Switch", "Pipeline", "IngressParserT", "IngressT", "IngressDeparserT", "EgressParserT",
        "EgressT", "EgressDeparserT", "IngressParsers", "EgressParsers", "MultiParserPipeline",
        "MultiParserSwitch",
        # sfclab's earlier names for the blocks, kept so programs that use them still lex
        "IngressParser", "Ingress", "IngressDeparser", "EgressParser", "Egress", "EgressDeparser",
        "Register", "RegisterAction", "DirectRegister", "DirectRegisterAction", "RegisterParam",
        "Hash", "CRCPolynomial", "HashAlgorithm_t", "Counter", "DirectCounter", "CounterType_t",
        "Meter", "DirectMeter", "MeterType_t", "MeterColor_t", "Lpf", "DirectLpf", "Wred",
        "DirectWred", "MathUnit", "MathOp_t", "ActionProfile", "ActionSelector",
        "SelectorAction", "SelectorMode_t", "Digest", "Mirror", "Resubmit", "Checksum",
        "ParserCounter", "ParserPriority", "Random", "Atcam", "Alpm",
        "PortId_t", "MulticastGroupId_t", "QueueId_t", "MirrorType_t", "MirrorId_t",
        "ResubmitType_t", "DigestType_t", "ReplicationId_t", "L1ExclusionId_t",
        "L2ExclusionId_t", "ParserError_t", "CloneId_t",
        "ingress_intrinsic_metadata_t", "ingress_intrinsic_metadata_for_tm_t",
        "ingress_intrinsic_metadata_from_parser_t", "ingress_intrinsic_metadata_for_deparser_t",
        "egress_intrinsic_metadata_t", "egress_intrinsic_metadata_from_parser_t",
        "egress_intrinsic_metadata_for_deparser_t", "egress_intrinsic_metadata_for_output_port_t",
        "pktgen_timer_header_t", "pktgen_port_down_header_t", "pktgen_recirc_header_t",
        "ptp_metadata_t"}),
    values=frozenset({
        "PORT_METADATA_SIZE", "PARSER_ERROR_OK", "PARSER_ERROR_NO_MATCH",
        "PARSER_ERROR_PARTIAL_HDR", "PARSER_ERROR_CTR_RANGE", "PARSER_ERROR_TIMEOUT_USER",
        "PARSER_ERROR_TIMEOUT_HW", "PARSER_ERROR_SRC_EXT", "PARSER_ERROR_DST_CONT",
        "PARSER_ERROR_PHV_OWNER", "PARSER_ERROR_MULTIWRITE", "PARSER_ERROR_ARAM_MBE",
        "PARSER_ERROR_FCS", "max", "min", "port_metadata_unpack"}),
    typedefs=MappingProxyType({
        "PortId_t": 9, "MulticastGroupId_t": 16, "QueueId_t": 5, "MirrorType_t": 3,
        "MirrorId_t": 10, "ResubmitType_t": 3, "DigestType_t": 3, "ReplicationId_t": 16,
        "L1ExclusionId_t": 16, "L2ExclusionId_t": 9}),
    decls=(
        (None, "match_kind { range, selector, atcam_partition_index }"),
        (None, "error { CounterRange, Timeout, PhvOwner, MultiWrite, IbufOverflow, "
               "IbufUnderflow }"),
        (None, "enum MeterType_t { PACKETS, BYTES }"),
        (None, "enum bit<8> MeterColor_t { GREEN = 8w0, YELLOW = 8w1, RED = 8w3 }"),
        (None, "enum CounterType_t { PACKETS, BYTES, PACKETS_AND_BYTES }"),
        (None, "enum SelectorMode_t { FAIR, RESILIENT }"),
        (None, "enum HashAlgorithm_t { IDENTITY, RANDOM, XOR8, XOR16, XOR32, CRC8, CRC16, "
               "CRC32, CRC64, CUSTOM }"),
        (None, "enum MathOp_t { MUL, SQR, SQRT, DIV, RSQR, RSQRT }"),
        (None, "extern Checksum { Checksum(); void add<T>(in T data); "
               "void subtract<T>(in T data); bool verify(); "
               "void subtract_all_and_deposit<T>(out T residual); bit<16> get(); "
               "bit<16> update<T>(in T data, @optional in bool zeros_as_ones); }"),
        (None, "extern ParserCounter { ParserCounter(); void set<T>(in T value); "
               "void set<T>(in T field, in bit<8> max, in bit<8> rotate, in bit<3> mask, "
               "in bit<8> add); bool is_zero(); bool is_negative(); "
               "void increment(in bit<8> value); void decrement(in bit<8> value); }"),
        (None, "extern ParserPriority { ParserPriority(); void set(in bit<3> prio); }"),
        (None, "extern CRCPolynomial<T> { CRCPolynomial(T coeff, bool reversed, bool msb, "
               "bool extended, T init, T xor); }"),
        (None, "extern Hash<W> { Hash(HashAlgorithm_t algo); "
               "Hash(HashAlgorithm_t algo, CRCPolynomial<_> poly); W get<D>(in D data); }"),
        (None, "extern Random<W> { Random(); W get(); }"),
        (None, "extern void funnel_shift_right<T>(inout T dst, in T src1, in T src2, "
               "int shift_amount);"),
        (None, "extern void invalidate<T>(in T field);"),
        (None, "extern bool is_validated<T>(in T field);"),
        (None, "extern bit<32> sizeInBits<H>(in H h);"),
        (None, "extern bit<32> sizeInBytes<H>(in H h);"),
        (None, "extern Counter<W, I> { Counter(bit<32> size, CounterType_t type); "
               "void count(in I index, @optional in bit<32> adjust_byte_count); }"),
        (None, "extern DirectCounter<W> { DirectCounter(CounterType_t type); "
               "void count(@optional in bit<32> adjust_byte_count); }"),
        (None, "extern Meter<I> { Meter(bit<32> size, MeterType_t type); "
               "Meter(bit<32> size, MeterType_t type, bit<8> red, bit<8> yellow, bit<8> green); "
               "bit<8> execute(in I index, in MeterColor_t color, "
               "@optional in bit<32> adjust_byte_count); "
               "bit<8> execute(in I index, @optional in bit<32> adjust_byte_count); }"),
        (None, "extern DirectMeter { DirectMeter(MeterType_t type); "
               "DirectMeter(MeterType_t type, bit<8> red, bit<8> yellow, bit<8> green); "
               "bit<8> execute(in MeterColor_t color, @optional in bit<32> adjust_byte_count); "
               "bit<8> execute(@optional in bit<32> adjust_byte_count); }"),
        (None, "extern Lpf<T, I> { Lpf(bit<32> size); T execute(in T val, in I index); }"),
        (None, "extern DirectLpf<T> { DirectLpf(); T execute(in T val); }"),
        (None, "extern Wred<T, I> { Wred(bit<32> size, bit<8> drop_value, bit<8> no_drop_value); "
               "bit<8> execute(in T val, in I index); }"),
        (None, "extern DirectWred<T> { DirectWred(bit<8> drop_value, bit<8> no_drop_value); "
               "bit<8> execute(in T val); }"),
        (None, "extern Register<T, I> { Register(bit<32> size); "
               "Register(bit<32> size, T initial_value); T read(in I index); "
               "void write(in I index, in T value); }"),
        (None, "extern DirectRegister<T> { DirectRegister(); DirectRegister(T initial_value); "
               "T read(); void write(in T value); }"),
        (None, "extern RegisterParam<T> { RegisterParam(T initial_value); T read(); }"),
        (None, "extern MathUnit<T> { MathUnit(MathOp_t op, int factor); "
               "MathUnit(MathOp_t op, int A, int B); T execute(in T x); }"),
        (None, "extern RegisterAction<T, I, U> { RegisterAction(Register<_, _> reg); "
               "U execute(in I index); U execute_log(); "
               "abstract void apply(inout T value, @optional out U rv); "
               "U predicate(@optional in bool cmplo, @optional in bool cmphi); }"),
        (None, "extern DirectRegisterAction<T, U> { DirectRegisterAction(DirectRegister<T> reg); "
               "U execute(); abstract void apply(inout T value, @optional out U rv); "
               "U predicate(@optional in bool cmplo, @optional in bool cmphi); }"),
        (None, "extern ActionProfile { ActionProfile(bit<32> size); }"),
        (None, "extern ActionSelector { "
               "ActionSelector(ActionProfile action_profile, Hash<_> hash, SelectorMode_t mode, "
               "bit<32> max_group_size, bit<32> num_groups); "
               "ActionSelector(ActionProfile action_profile, Hash<_> hash, SelectorMode_t mode, "
               "Register<bit<1>, _> reg, bit<32> max_group_size, bit<32> num_groups); "
               "ActionSelector(bit<32> size, Hash<_> hash, SelectorMode_t mode); "
               "ActionSelector(bit<32> size, Hash<_> hash, SelectorMode_t mode, "
               "Register<bit<1>, _> reg); }"),
        (None, "extern SelectorAction { SelectorAction(ActionSelector sel); "
               "bit<1> execute(@optional in bit<32> index); "
               "abstract void apply(inout bit<1> value, @optional out bit<1> rv); }"),
        (None, "extern Mirror { Mirror(); Mirror(MirrorType_t mirror_type); "
               "void emit(in MirrorId_t session_id); void emit<T>(in MirrorId_t session_id, "
               "in T hdr); }"),
        (None, "extern Resubmit { Resubmit(); Resubmit(ResubmitType_t resubmit_type); "
               "void emit(); void emit<T>(in T hdr); }"),
        (None, "extern Digest<T> { Digest(); Digest(DigestType_t digest_type); "
               "void pack(in T data); }"),
        (None, "extern Atcam { Atcam(@optional bit<32> number_partitions); }"),
        (None, "extern Alpm { Alpm(@optional bit<32> number_partitions, "
               "@optional bit<32> subtrees_per_partition, @optional bit<32> atcam_subset_width, "
               "@optional bit<32> shift_granularity); }"),
    ),
)

#: Every file a program may include with ``#include <…>``, by name.
ARCH_FILES: Mapping[str, ArchFile] = MappingProxyType({
    **{f.name: f for f in (_CORE, _V1MODEL, _TNA)}, "tofino.p4": _TNA})

#: Macro -> the file that reads it (what ``#define`` may set).
DEFINES: Mapping[str, str] = MappingProxyType(
    {d: f.name for f in (_V1MODEL, _TNA) for d in f.defines})

#: Architecture -> the include that declares it.
ARCH_OF_INCLUDE: Mapping[str, str] = MappingProxyType(
    {f.name: f.arch for f in ARCH_FILES.values() if f.arch})
