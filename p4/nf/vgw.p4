/* vgw: VXLAN gateway.
 *
 * Decapsulation: a VXLAN packet whose (VNI, outer destination = our VTEP
 * address) is in `vxlan_decap` loses its outer IPv4/UDP/VXLAN headers; the
 * inner MACs and the inner IPv4 header take the outer ones' place (decap = 1).
 * The inner L4 header was never parsed (headers_t has no inner TCP/UDP), so it
 * simply follows as payload.
 *
 * Encapsulation: an IPv4 packet whose destination matches `vxlan_encap`
 * (longest prefix: tenant subnet -> remote VTEP) gets outer Ethernet, IPv4,
 * UDP (destination 4789, source port from a hash of the inner flow for ECMP
 * entropy) and VXLAN headers (decap = 0).  Because headers_t has no inner L4
 * headers, only packets whose L4 header was not parsed (no TCP/UDP/ICMP
 * header valid) can be encapsulated: a parsed one would be re-emitted in
 * front of the outer UDP header.  The outer IPv4 checksum is filled in by the
 * deparser; the outer UDP checksum is 0 (allowed for VXLAN over IPv4). */
#include <core.p4>
#include "../include/sfc_headers.p4"
#include "../include/sfc_api.p4"

control vgw(inout headers_t hdr, inout sfc_meta_t sfc) {
    SfcHash<bit<16>>(SfcHashAlgorithm.CRC16) entropy_hash;

    bit<16> entropy = 0;

    action decap() {
        hdr.ethernet.dst_addr = hdr.inner_ethernet.dst_addr;
        hdr.ethernet.src_addr = hdr.inner_ethernet.src_addr;
        hdr.ipv4 = hdr.inner_ipv4;
        hdr.udp.setInvalid();
        hdr.vxlan.setInvalid();
        hdr.inner_ethernet.setInvalid();
        hdr.inner_ipv4.setInvalid();
        sfc.metadata = 1;
    }

    action encap(bit<24> vni, ipv4_addr_t vtep_src, ipv4_addr_t vtep_dst,
                 mac_addr_t outer_smac, mac_addr_t outer_dmac) {
        hdr.inner_ethernet.setValid();
        hdr.inner_ethernet.dst_addr = hdr.ethernet.dst_addr;
        hdr.inner_ethernet.src_addr = hdr.ethernet.src_addr;
        hdr.inner_ethernet.ether_type = ETHERTYPE_IPV4;
        hdr.inner_ipv4 = hdr.ipv4;

        hdr.ethernet.dst_addr = outer_dmac;
        hdr.ethernet.src_addr = outer_smac;

        /* 50 = outer IPv4 20 + UDP 8 + VXLAN 8 + inner Ethernet 14 */
        hdr.ipv4.version = 4;
        hdr.ipv4.ihl = 5;
        hdr.ipv4.total_len = hdr.inner_ipv4.total_len + 50;
        hdr.ipv4.identification = 0;
        hdr.ipv4.flags = 0;
        hdr.ipv4.frag_offset = 0;
        hdr.ipv4.ttl = 64;
        hdr.ipv4.protocol = IP_PROTO_UDP;
        hdr.ipv4.hdr_checksum = 0;
        hdr.ipv4.src_addr = vtep_src;
        hdr.ipv4.dst_addr = vtep_dst;

        hdr.udp.setValid();
        hdr.udp.src_port = entropy | 0xc000;
        hdr.udp.dst_port = UDP_PORT_VXLAN;
        hdr.udp.length = hdr.inner_ipv4.total_len + 30;
        hdr.udp.checksum = 0;

        hdr.vxlan.setValid();
        hdr.vxlan.flags = 0x08;
        hdr.vxlan.reserved = 0;
        hdr.vxlan.vni = vni;
        hdr.vxlan.reserved2 = 0;
        sfc.metadata = 0;
    }

    table vxlan_decap {
        key = {
            hdr.vxlan.vni : exact;
            hdr.ipv4.dst_addr : exact;
        }
        actions = { decap; NoAction; }
        default_action = NoAction();
        size = 1024;
    }

    table vxlan_encap {
        key = { hdr.ipv4.dst_addr : lpm; }
        actions = { encap; NoAction; }
        default_action = NoAction();
        size = 1024;
    }

    apply {
        sfc.metadata = 0;
        if (hdr.vxlan.isValid()) {
            if (hdr.ipv4.isValid() && hdr.inner_ethernet.isValid() && hdr.inner_ipv4.isValid()) {
                vxlan_decap.apply();
            }
        } else if (hdr.ipv4.isValid() && !hdr.tcp.isValid() && !hdr.udp.isValid()
                   && !hdr.icmp.isValid()) {
            entropy = entropy_hash.get({hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4.protocol});
            vxlan_encap.apply();
        }
    }
}
