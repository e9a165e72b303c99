/* heavy_hitter: count-min sketch of per-flow packet counts.
 *
 * Three rows of 1024 32-bit counters, each indexed by its own hash of the
 * 5-tuple: row 0 CRC32 over (src, dst, proto, sport, dport), row 1 CRC16 over
 * the same fields, row 2 CRC32 over the fields in reverse order with a salt.
 * Every IPv4 packet increments its cell in each row (one read-modify-write
 * access per row, so Tofino does each in a single RegisterAction); the flow's estimate is
 * the minimum of the three (never an under-estimate) and is the NF's
 * metadata, hitter_value, so a chain can branch on it
 * (`heavy_hitter.hitter_value > 1000 -> ...`).
 *
 * Threshold: per destination prefix from the `thresholds` table (lpm on the
 * IPv4 destination; HH_THRESHOLD where no entry matches).  When a flow's
 * estimate reaches exactly its threshold the NF sends one digest (the 5-tuple and the estimate) to the controller, so it
 * learns each heavy hitter once per measurement interval without diverting
 * the packet.  The controller starts a new interval by zeroing the three
 * registers. */
#include <core.p4>
#include "../include/sfc_headers.p4"
#include "../include/sfc_api.p4"

/* Packets per measurement interval above which a flow is a heavy hitter,
 * where the thresholds table has no entry for the destination. */
const bit<32> HH_THRESHOLD = 1000;

struct heavy_hitter_digest_t {
    ipv4_addr_t src_addr;
    ipv4_addr_t dst_addr;
    bit<8> protocol;
    bit<16> src_port;
    bit<16> dst_port;
    bit<32> estimate;
}

control heavy_hitter(inout headers_t hdr, inout sfc_meta_t sfc) {
    SfcHash<bit<10>>(SfcHashAlgorithm.CRC32) row0_hash;
    SfcHash<bit<10>>(SfcHashAlgorithm.CRC16) row1_hash;
    SfcHash<bit<10>>(SfcHashAlgorithm.CRC32) row2_hash;
    SfcRegister<bit<32>, bit<10>>(1024) sketch_row0;
    SfcRegister<bit<32>, bit<10>>(1024) sketch_row1;
    SfcRegister<bit<32>, bit<10>>(1024) sketch_row2;
    SfcDigest<heavy_hitter_digest_t>() hitter_digest;

    bit<16> l4_sport = 0;
    bit<16> l4_dport = 0;
    bit<10> idx0 = 0;
    bit<10> idx1 = 0;
    bit<10> idx2 = 0;
    bit<32> cnt0 = 0;
    bit<32> min01 = 0;
    bit<32> estimate = 0;
    bit<32> threshold = HH_THRESHOLD;

    /* Rows 1 and 2 add 1 to their cell and give the minimum of the new count
     * and the estimate so far, in the same access (on Tofino the comparison
     * runs in the register's stateful ALU: a gateway compares a field with a
     * constant only). */
    SfcRegisterAction<bit<32>, bit<10>, bit<32>>(sketch_row1) row1_min = {
        void apply(inout bit<32> value, out bit<32> rv) {
            value = value + 1;
            if (value < cnt0) {
                rv = value;
            } else {
                rv = cnt0;
            }
        }
    };
    SfcRegisterAction<bit<32>, bit<10>, bit<32>>(sketch_row2) row2_min = {
        void apply(inout bit<32> value, out bit<32> rv) {
            value = value + 1;
            if (value < min01) {
                rv = value;
            } else {
                rv = min01;
            }
        }
    };

    action set_threshold(bit<32> packets) {
        threshold = packets;
    }

    table thresholds {
        key = {
            hdr.ipv4.dst_addr : lpm;
        }
        actions = {
            set_threshold;
        }
        default_action = set_threshold(HH_THRESHOLD);
        size = 256;
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
            idx0 = row0_hash.get({hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4.protocol,
                                  l4_sport, l4_dport});
            idx1 = row1_hash.get({hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4.protocol,
                                  l4_sport, l4_dport});
            idx2 = row2_hash.get({l4_dport, l4_sport, hdr.ipv4.protocol, hdr.ipv4.dst_addr,
                                  hdr.ipv4.src_addr, 32w0x9e3779b9});

            cnt0 = sketch_row0.add(idx0, 1);
            min01 = row1_min.execute(idx1);     /* min(row 0, row 1) */
            estimate = row2_min.execute(idx2);  /* min(row 0, row 1, row 2) */
            sfc.metadata = estimate;
            thresholds.apply();
            if (estimate == threshold) {
                hitter_digest.pack({hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4.protocol,
                                    l4_sport, l4_dport, estimate});
            }
        }
    }
}
