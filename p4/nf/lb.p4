/* lb: layer-4 load balancer.
 * The 5-tuple is hashed (CRC16) onto 256 buckets; the `backends` table maps a
 * virtual IP (exact on the destination address) and a range of buckets to a
 * backend: `set_backend` rewrites the destination address to the backend's
 * and sets backend = its id (ids start at 1; 0: not load-balanced).  The
 * TCP/UDP checksum is updated incrementally (RFC 1624, SfcL4Checksum); the
 * IPv4 header checksum by the deparser.  Flows stay on one backend as long as the bucket
 * ranges do not change.  Entries need a priority (range key). */
#include <core.p4>
#include "../include/sfc_headers.p4"
#include "../include/sfc_api.p4"

control lb(inout headers_t hdr, inout sfc_meta_t sfc) {
    SfcHash<bit<8>>(SfcHashAlgorithm.CRC16) flow_hash;
    SfcL4Checksum() l4_checksum;

    bit<16> l4_sport = 0;
    bit<16> l4_dport = 0;
    bit<8> bucket = 0;
    ipv4_addr_t old_dst = 0;

    action set_backend(ipv4_addr_t backend_ip, bit<16> backend_id) {
        hdr.ipv4.dst_addr = backend_ip;
        sfc.metadata = (bit<32>) backend_id;
    }

    action no_backend() {
        sfc.metadata = 0;
    }

    table backends {
        key = {
            hdr.ipv4.dst_addr : exact;
            bucket : range;
        }
        actions = { set_backend; no_backend; }
        default_action = no_backend();
        size = 1024;
    }

    apply {
        sfc.metadata = 0;
        if (hdr.ipv4.isValid()) {
            if (hdr.tcp.isValid()) {
                l4_sport = hdr.tcp.src_port;
                l4_dport = hdr.tcp.dst_port;
            } else if (hdr.udp.isValid()) {
                l4_sport = hdr.udp.src_port;
                l4_dport = hdr.udp.dst_port;
            }
            bucket = flow_hash.get({hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4.protocol,
                                    l4_sport, l4_dport});
            old_dst = hdr.ipv4.dst_addr;
            if (backends.apply().hit) {
                l4_checksum.update({old_dst[31:16], old_dst[15:0]},
                                   {hdr.ipv4.dst_addr[31:16], hdr.ipv4.dst_addr[15:0]});
            }
        }
    }
}
