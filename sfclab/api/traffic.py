"""Packets of a chain that keep flowing while a block of code changes the switches.

:meth:`Lab.traffic <sfclab.api.lab.Lab.traffic>` is what a lab uses to show that a change
is consistent under traffic::

    with lab.traffic("web") as traffic:           # web packets, sent while the block runs
        lab.add("chain web …"); lab.update()
    traffic.packets                               # what each packet did

Where threads run (CPython), a thread sends the packets, one after another, for as long as
the block runs: they meet the change wherever the thread's timing puts them.  Where no
thread can start (Pyodide: JupyterLite's kernel has none), the packets are sent between
the writes of the change instead: one after every P4Runtime Write the block makes to an
embedded switch (:func:`sfclab.runtime.inprocess.between_writes`), so each state the
switches pass through on the way meets a packet.  Either way the switch holds its lock
while it runs a packet or a Write, so a packet always sees the switch between two writes:
the second way sends one into every such gap.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .lab import Lab

__all__ = ["Traffic"]


class Traffic:
    """A context manager sending *chain*'s packets through *lab* while its block runs
    (module docstring); ``sent`` holds ``(ms since the block began, result)`` of each
    packet, ``packets`` the results, ``mode`` how they were sent (``"thread"`` or
    ``"between writes"``)."""

    def __init__(self, lab: Lab, chain: str, *, pause: float = 0.002) -> None:
        lab._chain_name(chain)                   # an unknown chain says so now
        self.lab, self.chain, self.pause = lab, chain, pause
        self.sent: list[tuple[float, Any]] = []
        self.mode = ""
        self._t0 = 0.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._errors: list[BaseException] = []
        self._writes = None

    def now(self) -> float:
        """Milliseconds since the block began (the clock ``sent`` is on)."""
        return (time.perf_counter() - self._t0) * 1000

    @property
    def packets(self) -> list[Any]:
        return [r for _, r in self.sent]

    def _send_one(self) -> None:
        at = self.now()
        self.sent.extend((at, r) for r in self.lab.send(self.chain, 1))

    def _loop(self) -> None:
        try:
            while not self._stop.is_set():
                self._send_one()
                time.sleep(self.pause)
        except BaseException as e:  # noqa: BLE001 - raised again when the block ends
            self._errors.append(e)

    def __enter__(self) -> Traffic:
        self._t0 = time.perf_counter()
        thread = threading.Thread(target=self._loop, daemon=True, name="sfclab-traffic")
        try:
            thread.start()
        except RuntimeError:                     # no threads here: between the writes
            from ..runtime.inprocess import between_writes

            self.mode = "between writes"
            self._writes = between_writes(self._send_one)
            self._writes.__enter__()
        else:
            self.mode, self._thread = "thread", thread
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
        if self._writes is not None:
            self._writes.__exit__(*exc)
        if self._errors and exc[0] is None:
            raise self._errors[0]

    def __repr__(self) -> str:
        return f"<Traffic {self.chain}: {len(self.sent)} packets, {self.mode or 'not begun'}>"
