"""A ``simple_switch_grpc`` stand-in whose ``-i PORT@IFACE`` ports are real interfaces.

The test suite's BMv2 stand-in (``tests/targets/standin_bmv2.py``: sfclab's model
behind ``simple_switch_grpc``'s command line, P4Runtime server, packet-in socket
and event logger) moves packets only through BMv2's packet-in socket.  This
wrapper runs it with ``--packet-in`` and bridges that socket to the interfaces,
as BMv2 attaches ``-i`` interfaces itself: a frame that arrives on an interface
goes in on its port, a packet the switch sends out of a port leaves on that
port's interface.  It relies only on the stand-in's documented interfaces (the
command line and the packet-in protocol of :mod:`sfclab.targets.ports.packet_io`), so
it tests sfclab's orchestration of BMv2 in Mininet (command line, compiling,
pushing, wires and event logger), not BMv2.

As a script: ``python standin_veth.py ARGS…`` (``simple_switch_grpc``'s)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

HERE = Path(__file__).resolve().parent
STANDIN = HERE.parent / "targets" / "standin_bmv2.py"


def _interfaces(argv: list[str]) -> dict[int, str]:
    """The ``-i PORT@IFACE`` options before ``--``."""
    main = argv[:argv.index("--")] if "--" in argv else argv
    out = {}
    for flag, value in zip(main, main[1:]):
        if flag in ("-i", "--interface"):
            port, _, name = value.partition("@")
            out[int(port)] = name
    return out


def switch_main(argv: list[str]) -> int:
    import pynng

    from sfclab.targets.ports.interfaces import InterfacePorts
    from sfclab.targets.ports.packet_io import pack_packet_in, unpack_packet_out

    interfaces = _interfaces(argv)
    workdir = tempfile.mkdtemp(prefix="sfclab-veth-")
    address = f"ipc://{workdir}/packets.ipc"
    cut = argv.index("--") if "--" in argv else len(argv)
    child = subprocess.Popen([sys.executable, str(STANDIN), "switch", *argv[:cut],
                              "--packet-in", address, *argv[cut:]])
    signal.signal(signal.SIGTERM, lambda *_: child.send_signal(signal.SIGTERM))
    ports = InterfacePorts(interfaces)
    sock = pynng.Pair0(recv_timeout=200)
    sock.dial(address, block=False)
    stop = threading.Event()

    def to_switch() -> None:
        while not stop.is_set():
            for port, frame in ports.recv(0.2):
                sock.send(pack_packet_in(port, frame))

    def from_switch() -> None:
        while not stop.is_set():
            try:
                got = unpack_packet_out(sock.recv())
            except pynng.Timeout:
                continue
            except pynng.Closed:
                return
            if got is not None and got[0] in interfaces:
                ports.send(*got)

    threads = [threading.Thread(target=f, daemon=True) for f in (to_switch, from_switch)]
    for t in threads:
        t.start()
    status = child.wait()
    stop.set()
    sock.close()
    ports.close()
    shutil.rmtree(workdir, ignore_errors=True)
    return status


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
    sys.path.insert(0, str(STANDIN.parent))
    from standin_bmv2 import install_standins

    _, p4c = install_standins(Path(directory))
    switch = Path(directory) / "simple_switch_grpc"
    switch.write_text(_LAUNCHER.format(python=sys.executable, here=str(HERE)))
    os.chmod(switch, 0o755)
    return switch, p4c


if __name__ == "__main__":
    sys.exit(switch_main(sys.argv[1:]))
