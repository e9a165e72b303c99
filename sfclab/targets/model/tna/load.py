"""One entry for the model's program loaders: a v1model program runs on
:class:`~sfclab.targets.model.switch.ModelSwitch`, a TNA program (``Switch(...) main``)
on :class:`~.switch.TnaSwitch`.

>>> sw, arch = load_switch('''#include <core.p4>
... #include <tna.p4>
... header h_t { bit<8> x; }
... struct hs { h_t h; }
... struct ms { }
... parser IP(packet_in pkt, out hs hdr, out ms md, out ingress_intrinsic_metadata_t ig_intr_md) {
...     state start { pkt.extract(ig_intr_md); pkt.advance(PORT_METADATA_SIZE); transition accept; } }
... control I(inout hs hdr, inout ms md, in ingress_intrinsic_metadata_t ig_intr_md,
...           in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
...           inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
...           inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
...     apply { ig_tm_md.ucast_egress_port = ig_intr_md.ingress_port + 1; } }
... control ID(packet_out pkt, inout hs hdr, in ms md) { apply { pkt.emit(hdr); } }
... parser EP(packet_in pkt, out hs hdr, out ms md, out egress_intrinsic_metadata_t eg_intr_md) {
...     state start { pkt.extract(eg_intr_md); transition accept; } }
... control E(inout hs hdr, inout ms md) { apply { } }
... control ED(packet_out pkt, inout hs hdr, in ms md) { apply { pkt.emit(hdr); } }
... Pipeline(IP(), I(), ID(), EP(), E(), ED()) pipe;
... Switch(pipe) main;''')
>>> arch, sw.process(3, b"hello").outputs
('tna', [(4, b'hello')])
"""

from __future__ import annotations

from ..switch import ModelSwitch, _load
from ..types import flatten
from .switch import TnaSwitch, is_tna

__all__ = ["load_switch"]


def load_switch(program, *, cpu_port: int | None = None, tna: dict | None = None):
    """``(switch, arch)`` for *program* (a Program, P4 text or a path): a TNA program
    on a :class:`TnaSwitch` with *tna*'s options (``pipes``, ``loopback``,
    ``cpu_port``), else a v1model one on a :class:`ModelSwitch` (*cpu_port*)."""
    prog = flatten(_load(program))
    if is_tna(prog):
        return TnaSwitch(prog, **(tna or {})), "tna"
    kw = {} if cpu_port is None else {"cpu_port": cpu_port}
    return ModelSwitch(prog, **kw), "v1model"
