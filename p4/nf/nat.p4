/* nat: stateless source NAT.
 * Exact match on the IPv4 source address, plus a ternary match on the L4
 * source port (TCP or UDP; 0 for other protocols).  `translate` rewrites the
 * source address, `translate_port` the address and the source port; both set
 * translated = 1 (0 when no entry matches).  The TCP/UDP checksum is updated
 * incrementally (RFC 1624, SfcL4Checksum) for the rewritten pseudo-header and port; a UDP
 * checksum of 0 (none) is left alone.  The IPv4 header checksum is
 * recomputed by the deparser.  Entries need a priority (ternary key). */
#include <core.p4>
#include "../include/sfc_headers.p4"
#include "../include/sfc_api.p4"

control nat(inout headers_t hdr, inout sfc_meta_t sfc) {
    SfcL4Checksum() l4_checksum;

    bit<16> l4_sport = 0;
    ipv4_addr_t old_src = 0;
    bit<16> old_sport = 0;

    action translate(ipv4_addr_t new_src) {
        hdr.ipv4.src_addr = new_src;
        sfc.metadata = 1;
    }

    action translate_port(ipv4_addr_t new_src, bit<16> new_port) {
        hdr.ipv4.src_addr = new_src;
        l4_sport = new_port;
        sfc.metadata = 1;
    }

    action no_translate() {
        sfc.metadata = 0;
    }

    table src_nat {
        key = {
            hdr.ipv4.src_addr : exact;
            l4_sport : ternary;
        }
        actions = { translate; translate_port; no_translate; }
        default_action = no_translate();
        size = 4096;
    }

    apply {
        sfc.metadata = 0;
        if (hdr.ipv4.isValid()) {
            if (hdr.tcp.isValid()) {
                l4_sport = hdr.tcp.src_port;
            } else if (hdr.udp.isValid()) {
                l4_sport = hdr.udp.src_port;
            }
            old_src = hdr.ipv4.src_addr;
            old_sport = l4_sport;
            if (src_nat.apply().hit) {
                if (hdr.tcp.isValid()) {
                    hdr.tcp.src_port = l4_sport;
                } else if (hdr.udp.isValid()) {
                    hdr.udp.src_port = l4_sport;
                }
                l4_checksum.update({old_src[31:16], old_src[15:0], old_sport},
                                   {hdr.ipv4.src_addr[31:16], hdr.ipv4.src_addr[15:0], l4_sport});
            }
        }
    }
}
