"""The import paths users know from before the modules moved into packages, kept working.

``import sfclab.network`` (the README), ``from sfclab.plots import bar_plot`` and
``from sfclab.diagrams import placement_figure`` (the labs) and ``sfclab.lab`` / ``sfclab.demo``
name the moved module itself, imported on first use: the same module object, so classes and
state are shared, and a plain ``import sfclab`` stays light.

>>> import sfclab.network, sfclab.api.network
>>> sfclab.network is sfclab.api.network
True
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

__all__ = ["MOVED"]

#: old public module path -> where the module lives now
MOVED = {
    "sfclab.lab": "sfclab.api.lab",
    "sfclab.network": "sfclab.api.network",
    "sfclab.demo": "sfclab.cli.demo",
    "sfclab.plots": "sfclab.draw.plots",
    "sfclab.diagrams": "sfclab.draw.switch",
    # sfclab/targets/ laid out in folders (traffic, traces, bmv2, tofino, ports, process, stf);
    # the old ``sfclab.targets.bmv2`` / ``.tofino`` / ``.stf`` are those folders, which lend
    # the old module's names (see their ``__getattr__``).
    "sfclab.targets.coverage": "sfclab.targets.traffic.coverage",
    "sfclab.targets.traffic_plan": "sfclab.targets.traffic.plan",
    "sfclab.targets.sending": "sfclab.targets.traffic.sending",
    "sfclab.targets.nf_values": "sfclab.targets.traffic.nf_values",
    "sfclab.targets.trace": "sfclab.targets.traces.trace",
    "sfclab.targets.trace_store": "sfclab.targets.traces.store",
    "sfclab.targets.timeline": "sfclab.targets.traces.timeline",
    "sfclab.targets.bmv2_batch": "sfclab.targets.bmv2.batch",
    "sfclab.targets.bmv2_entries": "sfclab.targets.bmv2.entries",
    "sfclab.targets.bmv2_events": "sfclab.targets.bmv2.events",
    "sfclab.targets.bmv2_pcap": "sfclab.targets.bmv2.pcap_ports",
    "sfclab.targets.bmv2_registers": "sfclab.targets.bmv2.registers",
    "sfclab.targets.bmv2_sp": "sfclab.targets.bmv2.sp",
    "sfclab.targets.bmv2_switch": "sfclab.targets.bmv2.switch",
    "sfclab.targets.bmv2_thrift": "sfclab.targets.bmv2.thrift",
    "sfclab.targets.tofino_stages": "sfclab.targets.tofino.stages",
    "sfclab.targets.packet_io": "sfclab.targets.ports.packet_io",
    "sfclab.targets.interfaces": "sfclab.targets.ports.interfaces",
    "sfclab.targets.pcap": "sfclab.targets.ports.pcap",
    "sfclab.targets.stf_bmv2": "sfclab.targets.stf.bmv2",
    "sfclab.targets.stf_script": "sfclab.targets.stf.script",
    "sfclab.targets.tools": "sfclab.targets.process.tools",
    "sfclab.targets.keeper": "sfclab.targets.process.keeper",
    "sfclab.targets.exposure": "sfclab.targets.process.exposure",
}


class _OldPath(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds an old path of :data:`MOVED` and loads it as the module at its new path."""

    def find_spec(self, name, path=None, target=None):
        return importlib.util.spec_from_loader(name, self) if name in MOVED else None

    def create_module(self, spec):
        return importlib.import_module(MOVED[spec.name])

    def exec_module(self, module) -> None:
        pass  # already executed under its new name


if not any(isinstance(f, _OldPath) for f in sys.meta_path):
    sys.meta_path.append(_OldPath())
