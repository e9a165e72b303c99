"""The test suite's BMv2 stand-ins (``tests/targets/standin_bmv2.py``: sfclab's model
inside ``simple_switch_grpc`` and ``p4c-bm2-ss`` clothes), with the switch's ``-i
PORT@IFACE`` ports attached to their interfaces, as BMv2 attaches them: frames that
arrive run through the model and are published on the event logger, outputs leave on
their interfaces.  For Mininet with ``switch="bmv2"`` where BMv2 is not installed; it
tests sfclab's orchestration of BMv2 (command line, compiling, pushing, wires and
event logger), not BMv2's semantics.

As a script: ``python standin_veth.py switch ARGS…`` (as ``standin_bmv2.py``)."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "targets"))

import standin_bmv2 as S  # noqa: E402

_STANDIN_SERVER = S._make_server_class


def _with_interfaces(interfaces: dict[int, str]):
    base = _STANDIN_SERVER()

    class Bmv2OnInterfaces(base):
        def start(self, address: str = "127.0.0.1:0") -> str:
            from sfclab.targets.packet_io import InterfacePorts

            self.ports = InterfacePorts(interfaces)
            self.transmit = self.ports.send
            self.log(f"ports attached: {', '.join(f'{p}@{n}' for p, n in interfaces.items())}")
            threading.Thread(target=self._receive, daemon=True, name="interfaces").start()
            return super().start(address)

        def _receive(self) -> None:
            while True:
                try:
                    got = self.ports.recv(0.2)
                except OSError:
                    return
                for port, data in got:
                    with self._lock:
                        if self.switch is None:
                            continue
                        self.deliver(self.switch.process(port, data))

    return Bmv2OnInterfaces


def switch_main(argv: list[str]) -> int:
    args, _ = S._switch_args(argv)
    interfaces = {int(p): n for p, _, n in (i.partition("@") for i in args.interface)}
    S._make_server_class = lambda: _with_interfaces(interfaces)
    return S.switch_main(argv)


_LAUNCHER = """\
#!{python}
import sys
sys.path.insert(0, {here!r})
import standin_veth
sys.exit(standin_veth.switch_main(sys.argv[1:]))
"""


def install(directory: Path) -> tuple[Path, Path]:
    """``simple_switch_grpc`` (this one) and ``p4c-bm2-ss`` (the stand-in's) in
    *directory*, for ``SFCLAB_BMV2`` and ``SFCLAB_P4C``."""
    _, p4c = S.install_standins(directory)
    switch = Path(directory) / "simple_switch_grpc"
    switch.write_text(_LAUNCHER.format(python=sys.executable, here=str(HERE)))
    os.chmod(switch, 0o755)
    return switch, p4c


if __name__ == "__main__":
    sys.exit(switch_main(sys.argv[2:] if sys.argv[1:2] == ["switch"] else sys.argv[1:]))
