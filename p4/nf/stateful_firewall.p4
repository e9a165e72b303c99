/* stateful_firewall: per-flow packet-rate limiting (P4NFV's stateful firewall).
 *
 * The 5-tuple is hashed (CRC32, 12 bits) onto 4096 register cells.  For each
 * cell two registers keep a fixed window: `window_start` (sfc.timestamp in µs,
 * truncated to 32 bits; wrap-around is handled by modular subtraction) and
 * `window_count` (packets seen in the window).  A packet that arrives
 * SFW_WINDOW_US or more after the window start opens a new window.  When the
 * count in the current window exceeds the limit the packet gets verdict 1 and
 * is dropped; otherwise verdict 0.
 *
 * Each register is touched once per packet, by one read-modify-write
 * (SfcRegisterAction, Tofino's RegisterAction): `roll_window` moves the start
 * to now when the window has passed and says so; `count_packet` restarts the
 * count at 1 in a new window, else adds 1, and says whether the count
 * exceeds the limit.
 *
 * The limit comes from the `limits` table (ternary on source/destination, so
 * it can be set per host or per subnet), else SFW_DEFAULT_LIMIT packets per
 * window.  The controller can migrate the state by reading and writing the two
 * registers (P4NFV's state migration). */
#include <core.p4>
#include "../include/sfc_headers.p4"
#include "../include/sfc_api.p4"

/* Window length in microseconds (1 s) and default packets per window. */
const bit<32> SFW_WINDOW_US = 1000000;
const bit<32> SFW_DEFAULT_LIMIT = 1000;

control stateful_firewall(inout headers_t hdr, inout sfc_meta_t sfc) {
    SfcHash<bit<12>>(SfcHashAlgorithm.CRC32) flow_hash;
    SfcRegister<bit<32>, bit<12>>(4096) window_start;
    SfcRegister<bit<32>, bit<12>>(4096) window_count;

    bit<16> l4_sport = 0;
    bit<16> l4_dport = 0;
    bit<12> flow_idx = 0;
    bit<32> now = 0;
    bit<1> new_window = 0;
    bit<32> pkt_limit = SFW_DEFAULT_LIMIT;
    bit<1> over_limit = 0;

    /* 1 when the packet opens a new window (the cell then holds now). */
    SfcRegisterAction<bit<32>, bit<12>, bit<1>>(window_start) roll_window = {
        void apply(inout bit<32> value, out bit<1> rv) {
            rv = 0;
            if (now - value >= SFW_WINDOW_US) {
                value = now;
                rv = 1;
            }
        }
    };

    /* Counts the packet in the current window; 1 when the count (this packet
     * included) exceeds the limit.  The comparison runs in the register's
     * stateful ALU on Tofino, where a gateway compares a field with a
     * constant only. */
    SfcRegisterAction<bit<32>, bit<12>, bit<1>>(window_count) count_packet = {
        void apply(inout bit<32> value, out bit<1> rv) {
            if (new_window == 1) {
                value = 1;
            } else {
                value = value + 1;
            }
            rv = 0;
            if (value > pkt_limit) {
                rv = 1;
            }
        }
    };

    action set_limit(bit<32> limit) {
        pkt_limit = limit;
    }

    table limits {
        key = {
            hdr.ipv4.src_addr : ternary;
            hdr.ipv4.dst_addr : ternary;
        }
        actions = { set_limit; NoAction; }
        default_action = NoAction();
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
            limits.apply();
            flow_idx = flow_hash.get({hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4.protocol,
                                      l4_sport, l4_dport});
            now = sfc.timestamp[31:0];
            new_window = roll_window.execute(flow_idx);
            over_limit = count_packet.execute(flow_idx);
            if (over_limit == 1) {
                sfc.metadata = 1;
                sfc.drop = 1;
            }
        }
    }
}
