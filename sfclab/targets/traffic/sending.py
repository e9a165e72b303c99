"""Sending many packets: in a stream, with a progress bar, interruptible packet by packet.

:func:`stream` runs ``(port, bytes, tag)`` items through a target — its ``run``
(the embedded model: a generator of results, no per-call work) where it has one,
else batches to its ``send_many`` (BMv2), else one ``send`` at a time — and hands
each result to a *record*
callback before the next packet goes.  A send taking more than
:data:`PROGRESS_AFTER` seconds shows a progress bar (tqdm: a widget in the
notebook, a line on the command line).

An interrupt (Ctrl-C, Kernel > Interrupt) stops the stream *between* packets:
while it runs, SIGINT only sets a flag, the packets being run (one, or a batch
given to a target's ``send_many``) finish and are recorded, no other is sent, and
then :class:`SendInterrupted` (a ``KeyboardInterrupt``) is raised, so what the
caller recorded is exactly what the target ran.  A second interrupt
stops at once.

>>> class Echo:
...     def send(self, port, data): return (port, data)
>>> got = []
>>> stream(Echo(), [(1, b"a", "x"), (2, b"b", "y")], lambda r, tag: got.append((r, tag)))
2
>>> got
[((1, b'a'), 'x'), ((2, b'b'), 'y')]
"""

from __future__ import annotations

import gc
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from itertools import islice
from typing import Any

__all__ = ["stream", "young_only", "SendInterrupted", "PROGRESS_AFTER", "BATCH"]

#: Seconds a send runs before its progress bar shows.
PROGRESS_AFTER = 1.0
#: Packets a target with ``send_many`` (BMv2) is given at a time.
BATCH = 256
#: Packets between two updates of the progress bar.
_STEP = 64


class SendInterrupted(KeyboardInterrupt):
    """A send stopped by an interrupt, after ``sent`` of ``total`` packets; ``result``
    is what the caller made of the packets sent (a partial send result)."""

    def __init__(self, sent: int, total: int | None, result: Any = None) -> None:
        super().__init__(f"interrupted after {sent:,} of {total:,} packets" if total
                         else f"interrupted after {sent:,} packets")
        self.sent, self.total, self.result = sent, total, result


def _results(target: Any, items: Iterator[tuple[int, bytes]]) -> Iterator[Any]:
    """The results of *items* on *target*: its ``run`` (the model), else batches to
    its ``send_many`` (BMv2: every packet of a batch taken is run and recorded), else
    one ``send`` each."""
    run = getattr(target, "run", None)
    if run is not None:
        return run(items)
    many = getattr(target, "send_many", None)
    if many is not None:
        return (r for batch in iter(lambda: list(islice(items, BATCH)), [])
                for r in many(batch))
    return (target.send(port, data) for port, data in items)


def stream(target: Any, items: Iterable[tuple[int, bytes, Any]],
           record: Callable[[Any, Any], None], *, total: int | None = None,
           progress: bool | None = None, desc: str = "sending") -> int:
    """Send every ``(port, bytes, tag)`` of *items* through *target*, calling
    ``record(result, tag)`` after each; returns how many were sent.  *progress*:
    True shows a bar at once, False never, None after :data:`PROGRESS_AFTER` s.
    Raises :class:`SendInterrupted` (``result`` None, the caller fills it) when
    interrupted, after recording the packet being run."""
    tags: deque = deque()        # in the order sent: a target may take a batch ahead
    stop = _Interrupt()

    def packets() -> Iterator[tuple[int, bytes]]:
        for port, data, tag in items:
            if stop.asked:           # interrupted: no packet after the one being run
                return
            tags.append(tag)
            yield port, data

    bar = _bar(total, desc, 0) if progress else None
    start, sent = time.monotonic(), 0
    try:
        with stop, young_only():
            for result in _results(target, packets()):
                record(result, tags.popleft())
                sent += 1
                if not sent % _STEP:
                    if bar is not None:
                        bar.update(_STEP)
                    elif progress is None and time.monotonic() - start > PROGRESS_AFTER:
                        bar = _bar(total, desc, sent)     # made only for a long send
        if stop.asked:
            raise SendInterrupted(sent, total)
    finally:
        if bar is not None:
            bar.update(sent - bar.n)
            bar.close()
    return sent


def _bar(total: int | None, desc: str, done: int):
    """A tqdm bar (a widget in a notebook, a line on a terminal) at *done* packets."""
    from tqdm.auto import tqdm

    return tqdm(total=total, initial=done, desc=desc, unit="pkt", unit_scale=True,
                leave=False, mininterval=0.2)


@contextmanager
def young_only() -> Iterator[None]:
    """While entered, the cyclic garbage collector looks only at objects made since
    (``gc.freeze``): the traces kept while packets run would otherwise make it walk
    the whole heap (the parsed P4, the compiled switch) again and again, halving the
    rate.  Objects are still freed as they were (by reference counts); nothing is
    frozen when something else froze objects first."""
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


class _Interrupt:
    """While entered (in the main thread), SIGINT sets :attr:`asked` instead of raising;
    a second SIGINT raises at once."""

    def __init__(self) -> None:
        self.asked = False
        self._old: Any = None

    def _handler(self, signum, frame) -> None:
        if self.asked:
            raise KeyboardInterrupt
        self.asked = True

    def __enter__(self) -> _Interrupt:
        if threading.current_thread() is threading.main_thread():
            try:
                self._old = signal.signal(signal.SIGINT, self._handler)
            except ValueError:            # not allowed here (an embedded interpreter)
                self._old = None
        return self

    def __exit__(self, *exc) -> None:
        if self._old is not None:
            signal.signal(signal.SIGINT, self._old)
