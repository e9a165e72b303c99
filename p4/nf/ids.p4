/* ids: header-signature intrusion detection.
 * A ternary/range signature table over the IPv4 addresses, protocol, L4
 * ports, TCP flags and IPv4 total length (e.g. SYN-only packets to a port,
 * oversized ICMP, NULL/Xmas scans).  Entries need a priority.
 *   no_alert:   verdict 0 (default)
 *   alert:      verdict 1; the chain decides (e.g. `ids.verdict == 1 -> reporter`)
 *   alert_drop: verdict 1 and drop */
#include <core.p4>
#include "../include/sfc_headers.p4"
#include "../include/sfc_api.p4"

control ids(inout headers_t hdr, inout sfc_meta_t sfc) {
    bit<16> l4_sport = 0;
    bit<16> l4_dport = 0;
    bit<8> tcp_flags = 0;

    action no_alert() {
        sfc.metadata = 0;
    }

    action alert() {
        sfc.metadata = 1;
    }

    action alert_drop() {
        sfc.metadata = 1;
        sfc.drop = 1;
    }

    table signatures {
        key = {
            hdr.ipv4.src_addr : ternary;
            hdr.ipv4.dst_addr : ternary;
            hdr.ipv4.protocol : ternary;
            l4_sport : ternary;
            l4_dport : ternary;
            tcp_flags : ternary;
            hdr.ipv4.total_len : range;
        }
        actions = { no_alert; alert; alert_drop; }
        default_action = no_alert();
        size = 512;
    }

    apply {
        sfc.metadata = 0;
        if (hdr.ipv4.isValid()) {
            if (hdr.tcp.isValid()) {
                l4_sport = hdr.tcp.src_port;
                l4_dport = hdr.tcp.dst_port;
                tcp_flags = hdr.tcp.flags;
            } else if (hdr.udp.isValid()) {
                l4_sport = hdr.udp.src_port;
                l4_dport = hdr.udp.dst_port;
            }
            signatures.apply();
        }
    }
}
