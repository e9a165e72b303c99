/* monitor: per-flow packet and byte counters.
 * `flows` (ternary on IPv4 source/destination, entries need a priority) has a
 * direct counter per entry: the controller installs the aggregates it wants
 * to watch and reads their counters.  Independently, every IPv4 packet is
 * counted in one of 1024 indirect counters chosen by a CRC32 hash of its
 * 5-tuple, a cheap per-flow view for flows no entry covers.  Sets no
 * metadata. */
#include <core.p4>
#include "../include/sfc_headers.p4"
#include "../include/sfc_api.p4"

control monitor(inout headers_t hdr, inout sfc_meta_t sfc) {
    SfcDirectCounter(SfcCounterType.PACKETS_AND_BYTES) flow_counters;
    SfcCounter<bit<10>>(1024, SfcCounterType.PACKETS_AND_BYTES) flow_buckets;
    SfcHash<bit<10>>(SfcHashAlgorithm.CRC32) flow_hash;

    bit<16> l4_sport = 0;
    bit<16> l4_dport = 0;
    bit<10> bucket = 0;

    action count_flow() {
    }

    table flows {
        key = {
            hdr.ipv4.src_addr : ternary;
            hdr.ipv4.dst_addr : ternary;
        }
        actions = { count_flow; @defaultonly NoAction; }
        default_action = NoAction();
        counters = flow_counters;
        size = 1024;
    }

    apply {
        if (hdr.ipv4.isValid()) {
            if (hdr.tcp.isValid()) {
                l4_sport = hdr.tcp.src_port;
                l4_dport = hdr.tcp.dst_port;
            } else if (hdr.udp.isValid()) {
                l4_sport = hdr.udp.src_port;
                l4_dport = hdr.udp.dst_port;
            }
            flows.apply();
            bucket = flow_hash.get({hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4.protocol,
                                    l4_sport, l4_dport});
            flow_buckets.count(bucket);
        }
    }
}
