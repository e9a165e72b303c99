/* sfclab's portable state API for NFs.
 *
 * An NF keeps state only through these externs, so one NF source serves both
 * architectures: the v1model and TNA emitters lower every declaration and call
 * to the architecture's own externs (the table is in p4/README.md).  The
 * declarations are standard P4_16; the calls take the forms written next to
 * each method, and sfclab's front end refuses other forms.
 */

enum SfcHashAlgorithm { CRC16, CRC32, IDENTITY, CSUM16 }

enum SfcCounterType { PACKETS, BYTES, PACKETS_AND_BYTES }

/* Meter colours as sfclab reports them (the emitters translate). */
const bit<2> SFC_GREEN = 0;
const bit<2> SFC_YELLOW = 1;
const bit<2> SFC_RED = 2;

/* An array of `size` cells of type T, indexed by I.
 *   v = r.read(i);      (a statement: assignment of the read to a variable or field)
 *   r.write(i, v);
 *   v = r.add(i, d);    (adds d to the cell and gives the new value: one access, so
 *                        Tofino can do it in a single RegisterAction)
 * One packet may access a register once on Tofino: a register both read and
 * written takes one SfcRegisterAction (below) instead of a read and a write. */
extern SfcRegister<T, I> {
    SfcRegister(bit<32> size);
    T read(in I index);
    void write(in I index, in T value);
    T add(in I index, in T delta);
}

/* One read-modify-write of a register cell, Tofino's RegisterAction: `apply`
 * gets the cell (`value`, written back when it returns) and sets the result
 * (`rv`); its body may read the NF's headers, sfc fields and variables
 * declared before it.  One packet may touch each register once, so a register
 * that is read and written goes through one of these (p4/README.md):
 *   SfcRegisterAction<bit<32>, bit<12>, bit<32>>(count) bump = {
 *       void apply(inout bit<32> value, out bit<32> rv) { value = value + 1; rv = value; }
 *   };
 *   n = bump.execute(i);        (or `bump.execute(i);` when the result is not needed) */
extern SfcRegisterAction<T, I, U> {
    SfcRegisterAction(SfcRegister<T, I> reg);
    U execute(in I index);
    abstract void apply(inout T value, @optional out U rv);
}

/* `size` counters indexed by I.      c.count(i); */
extern SfcCounter<I> {
    SfcCounter(bit<32> size, SfcCounterType type);
    void count(in I index);
}

/* A counter per entry of the table whose `counters` property names it;
 * counts every hit by itself. */
extern SfcDirectCounter {
    SfcDirectCounter(SfcCounterType type);
}

/* `size` two-rate three-colour meters (RFC 2698) indexed by I; rates are set
 * by the controller.      colour = m.execute(i);   (SFC_GREEN / SFC_YELLOW / SFC_RED) */
extern SfcMeter<I> {
    SfcMeter(bit<32> size, SfcCounterType type);
    bit<2> execute(in I index);
}

/* A hash of a list of fields onto the width of O: the result is in [0, 2^|O|).
 *   h = hash.get({f1, f2, ...}); */
extern SfcHash<O> {
    SfcHash(SfcHashAlgorithm algo);
    O get<D>(in D data);
}

/* The TCP/UDP checksum kept right when the NF rewrites 16-bit words it covers
 * (the IPv4 addresses of the pseudo-header, the ports), RFC 1624's incremental
 * update:
 *   c.update({old_w1, old_w2, ...}, {new_w1, new_w2, ...});
 * every element a 16-bit word (slice an address: a[31:16], a[15:0]), the old
 * and the new value of each word in the same place.  It updates the checksum of
 * the TCP or UDP header that is valid; a UDP checksum of 0 (none) stays 0, and
 * one that comes out 0 is sent as 0xffff.  On v1model the NF computes it
 * (ones'-complement sums in the NF); on TNA the ingress deparser does, with
 * `Checksum`: the parser takes the old IPv4 addresses, ports and checksum out, the
 * deparser adds the new ones in when an NF of the pass called `update` (so on
 * TNA the words must be IPv4 addresses or TCP/UDP ports). */
extern SfcL4Checksum {
    SfcL4Checksum();
    void update<T>(in T old_words, in T new_words);
}

/* Sends `data` (a struct of fields) to the controller as a P4Runtime digest
 * named after the NF instance.      d.pack({f1, f2, ...}); */
extern SfcDigest<T> {
    SfcDigest();
    void pack(in T data);
}
