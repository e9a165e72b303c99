"""Switch targets sfclab runs composed programs on, one folder per kind of thing.

* ``model`` — the embedded switch model, the default target: sfclab's own interpreter of
  P4_16, v1model and (``model/tna``) Tofino's TNA semantics, with its P4Runtime server.
* ``bmv2``, ``tofino`` — the real targets: ``simple_switch_grpc`` and its event logger,
  Thrift and pcap ports; ``p4c-barefoot``'s stages and a Tofino behind P4Runtime.
* ``network``, ``mininet`` — many switches: the embedded network and Mininet.
* ``traffic`` — where class traffic is made and sent (coverage, plans, NF values).
* ``traces`` — per-packet traces, the store of a Lab's packets, the per-pass timeline.
* ``ports`` — packets on a real switch's ports; ``process`` — the switch processes
  sfclab starts (the keeper, executables, what they listen on); ``stf`` — p4c's STF tests.
* ``connect`` turns a target URL into a target; ``diff`` compares two targets packet by packet.
"""


def _lends(package: str, module: str):
    """A folder's ``__getattr__`` that lends its old module's names: ``sfclab.targets.bmv2``
    was a module and is a folder now, so ``from sfclab.targets.bmv2 import X`` finds X in
    ``sfclab.targets.bmv2.target``, imported on first use."""

    def __getattr__(name: str):
        if name.startswith("__") or name == module:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        import importlib
        try:
            return getattr(importlib.import_module(f"{package}.{module}"), name)
        except AttributeError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
    return __getattr__
