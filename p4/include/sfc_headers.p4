/* sfclab: the packet headers every NF sees, the SFC header that carries the
 * token between passes, and the NF interface struct (sfc_meta_t).
 *
 * Every NF is   control NAME(inout headers_t hdr, inout sfc_meta_t sfc)
 * and sees only these two arguments (Dejavu's single-argument NF API): parsed
 * headers, and a small struct of per-packet SFC state and requests.  It never
 * touches architecture metadata; the composed program maps sfc_meta_t to
 * v1model's standard_metadata or TNA's intrinsic metadata.
 *
 * Field names here are the ones the chain language's `match` fields resolve to
 * (sfclab/ir/fields.py: eth.dst -> hdr.ethernet.dst_addr, ...).
 */
/* EtherTypes and IP protocol numbers. */
const bit<16> ETHERTYPE_IPV4 = 0x0800;
const bit<16> ETHERTYPE_IPV6 = 0x86DD;
const bit<16> ETHERTYPE_VLAN = 0x8100;
const bit<16> ETHERTYPE_MPLS = 0x8847;
/* The SFC header's own EtherType: IEEE 802 "local experimental" 1. */
const bit<16> ETHERTYPE_SFC = 0x88B5;
const bit<8> IP_PROTO_ICMP = 1;
const bit<8> IP_PROTO_TCP = 6;
const bit<8> IP_PROTO_UDP = 17;
const bit<16> UDP_PORT_VXLAN = 4789;
/* Depth of the segment-routing label stack (sr_encap pushes one per loop run). */
const bit<32> SR_MAX_LABELS = 4;

typedef bit<48> mac_addr_t;
typedef bit<32> ipv4_addr_t;
typedef bit<128> ipv6_addr_t;
typedef bit<9> port_t;

header ethernet_t {
    mac_addr_t dst_addr;      /* 48: destination MAC */
    mac_addr_t src_addr;      /* 48: source MAC */
    bit<16> ether_type;       /* 16: next protocol */
}

/* The SFC header: the token of FlexMesh's data-plane model (its match id,
 * state id and bitmap), carried between passes the way Dejavu's NSH-style
 * header (its Fig. 3) carries the service path, so that header rewrites made
 * by NFs survive a recirculation.  It sits right after Ethernet (whose
 * ether_type is ETHERTYPE_SFC while it is there) and is removed before the
 * packet leaves the switch.  On a network of switches (sfclab/codegen/network.py)
 * it also crosses links: path_id is then the service path and state the index of
 * the next NF (NSH's SPI and SI), and flags bit 2 says it is in transit.  21 bytes.
 * When a chain's branch tests the field of an NF that ran before the branching one,
 * the composed program appends a bit<32> saved_md<k> per such NF (its value, kept
 * by a save table after its slot: p4/README.md), 4 bytes each; otherwise the
 * header is exactly this. */
header sfc_t {
    bit<16> path_id;          /* 16: service path id (FlexMesh's match id) */
    bit<8> state;             /*  8: FSM state: which pass of the path this is */
    bit<32> bitmap;           /* 32: NF slots to run in this pass; bit i = slot i */
    bit<8> counter;           /*  8: loop counter (runs of the loop so far) */
    bit<32> metadata;         /* 32: metadata value of the last NF that set one */
    bit<4> version;           /*  4: configuration version (consistent updates) */
    bit<4> flags;             /*  4: bit 0: drop requested, bit 1: to the CPU,
                                 bit 2: in transit between switches */
    bit<16> next_proto;       /* 16: EtherType of the header after this one */
    bit<9> egress_port;       /*  9: egress port requested by an NF */
    bit<1> egress_valid;      /*  1: egress_port holds a request */
    bit<6> reserved;          /*  6: zero */
    bit<16> mcast_grp;        /* 16: multicast group requested by an NF (0: none) */
    bit<16> ingress_port;     /* 16: the port the packet first came in on (9 bits used) */
}

header vlan_t {
    bit<3> pcp;               /*  3: priority code point */
    bit<1> dei;               /*  1: drop eligible */
    bit<12> vid;              /* 12: VLAN id */
    bit<16> ether_type;       /* 16: next protocol */
}

/* One MPLS-style label of the segment-routing stack. */
header mpls_t {
    bit<20> label;            /* 20: segment label */
    bit<3> tc;                /*  3: traffic class */
    bit<1> bos;               /*  1: bottom of stack */
    bit<8> ttl;               /*  8: time to live */
}

header ipv4_t {
    bit<4> version;           /*  4: 4 */
    bit<4> ihl;               /*  4: header length in 32-bit words (5: no options) */
    bit<6> dscp;              /*  6: differentiated services code point */
    bit<2> ecn;               /*  2: explicit congestion notification */
    bit<16> total_len;        /* 16: packet length in bytes */
    bit<16> identification;   /* 16 */
    bit<3> flags;             /*  3 */
    bit<13> frag_offset;      /* 13 */
    bit<8> ttl;               /*  8: time to live */
    bit<8> protocol;          /*  8: next protocol */
    bit<16> hdr_checksum;     /* 16: header checksum (updated by the deparser) */
    ipv4_addr_t src_addr;     /* 32 */
    ipv4_addr_t dst_addr;     /* 32 */
}

header ipv6_t {
    bit<4> version;           /*  4: 6 */
    bit<8> traffic_class;     /*  8 */
    bit<20> flow_label;       /* 20 */
    bit<16> payload_len;      /* 16 */
    bit<8> next_hdr;          /*  8: next protocol */
    bit<8> hop_limit;         /*  8 */
    ipv6_addr_t src_addr;     /* 128 */
    ipv6_addr_t dst_addr;     /* 128 */
}

header tcp_t {
    bit<16> src_port;         /* 16 */
    bit<16> dst_port;         /* 16 */
    bit<32> seq_no;           /* 32 */
    bit<32> ack_no;           /* 32 */
    bit<4> data_offset;       /*  4 */
    bit<4> res;               /*  4 */
    bit<8> flags;             /*  8: CWR ECE URG ACK PSH RST SYN FIN */
    bit<16> window;           /* 16 */
    bit<16> checksum;         /* 16 */
    bit<16> urgent_ptr;       /* 16 */
}

header udp_t {
    bit<16> src_port;         /* 16 */
    bit<16> dst_port;         /* 16 */
    bit<16> length;           /* 16 */
    bit<16> checksum;         /* 16 */
}

header icmp_t {
    bit<8> type;              /*  8 */
    bit<8> code;              /*  8 */
    bit<16> checksum;         /* 16 */
}

header vxlan_t {
    bit<8> flags;             /*  8: 0x08 (VNI valid) */
    bit<24> reserved;         /* 24 */
    bit<24> vni;              /* 24: VXLAN network identifier */
    bit<8> reserved2;         /*  8 */
}

/* Every header an NF may read or write.  The composed program's parser fills
 * what the packet has; an NF tests isValid() before it relies on one. */
struct headers_t {
    ethernet_t ethernet;
    sfc_t sfc;
    vlan_t vlan;
    mpls_t[4] mpls;
    ipv4_t ipv4;
    ipv6_t ipv6;
    tcp_t tcp;
    udp_t udp;
    icmp_t icmp;
    vxlan_t vxlan;
    ethernet_t inner_ethernet;
    ipv4_t inner_ipv4;
}

/* The NF interface: per-packet SFC state and the NF's requests.  Requests are
 * applied once, at the end of the pass, by the composed program. */
struct sfc_meta_t {
    bit<32> metadata;         /* the NF's metadata value (FlexMesh's global_metadata):
                                 what branch conditions on this NF test */
    bit<8> counter;           /* read-only: runs of the current loop so far */
    bit<16> path_id;          /* read-only: the packet's service path */
    port_t ingress_port;      /* read-only: the port the packet came in on (on a network:
                                 the network port of where it entered the network) */
    bit<48> timestamp;        /* read-only: arrival time in microseconds */
    bit<1> drop;              /* request: drop the packet */
    bit<1> to_cpu;            /* request: send the packet to the controller */
    bit<1> egress_valid;      /* request: egress_port is set */
    port_t egress_port;       /* request: send the packet out of this port */
    bit<16> mcast_grp;        /* request: replicate to this multicast group (0: none) */
}
