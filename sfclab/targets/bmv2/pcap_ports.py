"""Packets through a BMv2 whose ports are pcap files (``--use-files``), with traces.

BMv2 1.15 with ``--use-files WAIT -i N@PREFIX`` (``src/bm_sim/switch.cpp``,
``dev_mgr.cpp``, ``pcap_file.cpp``):

* opens ``PREFIX_in.pcap`` and creates ``PREFIX_out.pcap`` when the port is added,
  at start — the input file must exist then, and is read **once**;
* with ``--no-p4`` starts its packet threads and the pcap reader only when the first
  pipeline config is committed (``start_and_return`` waits for it); the reader then
  sleeps WAIT seconds, and replays every file's packets in timestamp order (not in
  real time: ``FilesDevMgrImp(false, …)``);
* writes what leaves port N to ``PREFIX_out.pcap``, flushed after each packet.

So the first event of such a run comes WAIT seconds (plus the time to push) after
the subscriber opens; a collector that gives up after a short quiet period, as the
live test did, sees nothing.  :func:`run_pcap` writes the input files, starts the
switch, pushes the program and its entries, and follows the packets with the same
:class:`~sfclab.targets.bmv2.batch.BatchTracker` as ``send_many``, the output files standing for
the packet socket.  The reader has no back-pressure: a batch larger than BMv2's
egress queue (64 packets per port) can lose packets, which the traces then say.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ...codegen import Generated
from ...errors import TargetError
from .target import Bmv2Target, PortMap
from .switch import Bmv2Switch
from ..ports.packet_io import PacketResult

__all__ = ["write_inputs", "run_pcap"]


def write_inputs(ports: PortMap, packets: Sequence[tuple[int, bytes]]) -> None:
    """Write *packets* into the input files of *ports*, stamped so that BMv2's reader
    (earliest timestamp first) replays them in the order given.

    >>> import tempfile
    >>> from sfclab.targets.bmv2.target import read_pcap
    >>> with tempfile.TemporaryDirectory() as d:
    ...     pm = PortMap.pcap(d, [1, 2])
    ...     write_inputs(pm, [(2, b"x" * 60), (1, b"y" * 60)])
    ...     [len(read_pcap(pm.in_pcap(p))) for p in (1, 2)]
    [1, 1]
    """
    import struct

    records: dict[int, bytearray] = {p: bytearray() for p in ports.ports}
    for k, (port, frame) in enumerate(packets):
        if port not in records:
            raise TargetError(f"port {port} is not one of the switch's pcap ports "
                              f"{ports.ports}")
        records[port] += struct.pack("<IIII", k // 1_000_000, k % 1_000_000, len(frame),
                                     len(frame)) + bytes(frame)
    header = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)
    for port, data in records.items():
        path = ports.in_pcap(port)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(header + bytes(data))


def run_pcap(gen: Generated, packets: Iterable[tuple[int, Any]], *,
             ports: Iterable[int] = (1, 2, 3, 4), wait: int = 2, timeout: float = 30.0,
             workdir: str | os.PathLike | None = None, device_id: int = 0,
             start_timeout: float = 15.0) -> list[PacketResult]:
    """Run ``(port, packet)`` pairs through a ``simple_switch_grpc`` sfclab starts with
    pcap-file ports (*ports* plus the ones packets enter on): one result per packet, in
    order, with its outputs (from the output files) and its trace (from the event
    logger).  *wait* is BMv2's ``--use-files`` delay: pushing the program and its entries
    must fit in it."""
    items = [(int(p), bytes(f)) for p, f in packets]
    if not items:
        return []
    wd = Path(workdir) if workdir else None
    pm = PortMap.pcap((wd or _tmp()) / "pcap", set(ports) | {p for p, _ in items}, wait=wait)
    write_inputs(pm, items)
    target = Bmv2Target.start(ports=pm, workdir=wd or pm.directory.parent, device_id=device_id,
                              timeout=start_timeout)
    sw = Bmv2Switch(target)
    try:
        if sw._events is None:
            raise TargetError("the switch's event logger is off: a pcap run needs it to "
                              "know when the packets are done", hint="; ".join(sw.notes))
        sw._events.wait_connected()
        sw.push(gen)
        tracker = sw._tracker(items)
        start = time.monotonic()
        for k in range(len(items)):
            tracker.sent(k, now=start)
        deadline = start + wait + timeout
        tracker.lost_after = wait + timeout
        while True:
            # decided at the time the sockets were read to the end (Bmv2Switch._pump)
            got, now = sw._pump(tracker)
            if tracker.finished(now=now, sent=len(items)) or now >= deadline:
                break
            if not got:
                time.sleep(0.01)
        results = tracker.results()
        sw.results += results
        return results
    finally:
        sw.close()


def _tmp() -> Path:
    import tempfile

    return Path(tempfile.mkdtemp(prefix="sfclab-bmv2-pcap-"))
