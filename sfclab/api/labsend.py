"""A Lab's packets on one switch: class traffic, single packets and pcap files, at the
model's speed and in bounded memory.

:class:`Sender` is what :meth:`sfclab.Lab.send`, :meth:`~sfclab.Lab.send_packet` and
:meth:`~sfclab.Lab.send_pcap` run.  Packets go in a stream
(:func:`sfclab.targets.traffic.sending.stream`: the embedded model's batch run, a progress
bar after a second, an interrupt stopping between two packets); each result is
recorded in :attr:`Sender.traces`, a :class:`~sfclab.targets.traces.store.TraceStore`
that keeps the last traces whole and counts every packet in its summary.

Class traffic for a few packets is searched for as before
(:func:`~sfclab.targets.traffic.coverage.class_traffic`: every packet a candidate the
oracle ran); for more, a :class:`~sfclab.targets.traffic.plan.TrafficPlan` of a
few packets per service path is made once per program, chain and seed, and varied
by patching bytes, so the oracle and scapy do not run per packet.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import SfclabError
from ..targets.traces.store import DEFAULT_KEEP, TraceStore, TraceSummary, Window

__all__ = ["Sender", "SendResult", "LabTrace", "pcap_frames"]


@dataclass(frozen=True, slots=True)
class LabTrace:
    """One packet a Lab sent: its class, the service path it took, the target's result."""

    chain: str
    path: str | None
    result: Any

    @property
    def trace(self):
        return self.result.trace


class SendResult(Window):
    """The target's results of one :meth:`Lab.send`, in order (the last ``keep`` of them
    whole; ``len()`` counts every packet sent), and the service paths of the chain they
    covered: ``covered`` (path -> packets that took it on the target), ``missed``
    (path -> why no packet took it), ``took`` (each packet's path)."""

    def __init__(self, chain: str, plan: Any, keep: int = DEFAULT_KEEP) -> None:
        super().__init__(keep)
        self.chain = chain
        #: The :class:`~sfclab.targets.traffic.coverage.ClassTraffic` the packets came from.
        self.plan = plan
        #: Set when the send was interrupted: ``interrupted after k of n packets``.
        self.interrupted = ""
        #: How the Lab's chains differed from the target's when sent (:mod:`sfclab.api.drift`).
        self.drift = None
        #: The packets of this send counted (:class:`~sfclab.targets.traces.store.TraceSummary`).
        self.counts = TraceSummary()
        self._names: list[str | None] = []
        self._codes = array("I")
        self._counts: Counter = Counter()

    def add(self, result: Any, path: str | None) -> None:
        self.push(result)
        if path not in self._counts:
            self._names.append(path)
        self._counts[path] += 1
        self._codes.append(self._names.index(path))

    @property
    def took(self) -> list[str | None]:
        """The path each packet took, in order."""
        names = self._names
        return [names[c] for c in self._codes]

    @property
    def paths(self) -> tuple[str, ...]:
        return self.plan.paths

    @property
    def covered(self) -> dict[str, int]:
        return {p: self._counts[p] for p in self.paths if self._counts[p]}

    @property
    def missed(self) -> dict[str, str]:
        return {p: self.plan.missed.get(p, "its packets took another path on the target "
                                           "(the NFs' state differs from the model's)")
                for p in self.paths if not self._counts[p]}

    def summary(self) -> str:
        """``web: 4 packets covered 2 of 3 service paths (web/0 ×2, web/1 ×2)`` and a
        line per missed path with the reason."""
        covered = self.covered
        counts = ", ".join(f"{p} ×{k}" for p, k in covered.items())
        n = len(self)
        lines = [f"{self.chain}: {n} packet{'s' * (n != 1)} covered "
                 f"{len(covered)} of {len(self.paths)} service path"
                 f"{'s' * (len(self.paths) != 1)}" + (f" ({counts})" if counts else "")]
        labels = self.plan.labels
        lines += [f"  {labels.get(p, p)}: {why}" for p, why in self.missed.items()]
        if self.interrupted:
            lines.append(f"  {self.interrupted}")
        if self.drift is not None:
            lines.insert(0, f"warning: {self.drift.message(python=True)}")
        return "\n".join(lines)


class Sender:
    """The packets a Lab sends to one switch, and what it keeps of them."""

    def __init__(self, keep: int = DEFAULT_KEEP) -> None:
        #: Every packet sent, by number (:class:`~sfclab.targets.traces.store.TraceStore`).
        self.traces = TraceStore(keep)
        self._plans: dict[tuple, Any] = {}       # (chain, seed) -> [plan, packets made]
        self._plans_for: Any = None               # the oracle the plans were made with
        self._memo: tuple[Any, dict[int, str | None]] = (None, {})

    # -- recording -------------------------------------------------------------------------
    def record(self, target: Any, r: Any, label: str) -> str | None:
        """Count and keep result *r* of a packet sent with *label*; returns its path."""
        session = target.session
        facts = getattr(r, "facts", None)
        if facts is not None:                  # the model: read the raw events, no trace built
            r.label = label
            dp, tables = facts()
            path = self._path(session, dp) if dp is not None else session.path_of(r.trace)
            drop = r.drop_reason
        else:
            trace = r.trace
            trace.label = label
            path, tables, drop = session.path_of(trace), trace.tables(), trace.drop_reason
        if getattr(r, "_trace", None) is not None:
            r._trace.label = label
        self.traces.append(LabTrace(label, path, r), path,
                           r.outputs[0][0] if r.outputs else None, drop, tables)
        return path

    def send_one(self, target: Any, port: int, packet: Any, label: str) -> Any:
        """Send one packet and record it; returns the target's result."""
        from ..targets.traffic.sending import young_only

        with young_only():
            r = target.send(port, packet)
            self.record(target, r, label)
        return r

    def _path(self, session: Any, dp: int) -> str | None:
        gen, memo = self._memo
        if gen is not session.generated:
            gen, memo = session.generated, {}
            self._memo = (gen, memo)
        if dp not in memo:
            memo[dp] = session.path_of_id(dp)
        return memo[dp]

    # -- sending ---------------------------------------------------------------------------
    def send_class(self, target: Any, gen: Any, oracle: Any, name: str, n: int, *,
                   port: int | None = None, seed: int | None = None,
                   progress: bool | None = None) -> SendResult:
        """*n* packets of chain *name*'s class covering its service paths (see the module)."""
        from ..targets.traffic.coverage import class_traffic
        from ..targets.traffic.plan import PER_PATH, TrafficPlan

        paths = sum(1 for p in gen.compiled.paths if p.chain == name)
        items: Iterable[tuple[int, bytes, str]]
        if n <= PER_PATH * max(1, paths):        # a few: every packet a candidate the oracle ran
            plan = class_traffic(gen, name, n, seed=len(self.traces) if seed is None else seed,
                                 oracle=oracle)
            items = [(cp.port, bytes(cp.packet), path)
                     for cp, path in zip(plan.packets, plan.expected)]
        else:
            if self._plans_for is not oracle:
                self._plans, self._plans_for = {}, oracle
            key = (name, seed or 0)
            made = self._plans.get(key)
            if made is None:
                made = self._plans[key] = [TrafficPlan.make(gen, name, oracle=oracle,
                                                            seed=seed or 0), 0]
            traffic, start = made
            plan = traffic.coverage
            made[1] += n if traffic.bases else 0
            items = traffic.packets(n, start)
        if port is not None:
            items = ((port, data, path) for _, data, path in items)
        out = SendResult(name, plan, self.traces.keep)
        return self._stream(target, items, name, out, n, progress)

    def send_frames(self, target: Any, items: Iterable[tuple[int, bytes]], label: str, *,
                    total: int | None = None, progress: bool | None = None) -> SendResult:
        """Send ``(port, bytes)`` frames (a pcap's) labelled *label*."""
        from ..targets.traffic.coverage import ClassTraffic

        out = SendResult(label, ClassTraffic(label, (), (), ()), self.traces.keep)
        return self._stream(target, ((p, d, None) for p, d in items), label, out, total,
                            progress)

    def _stream(self, target: Any, items: Iterable, label: str, out: SendResult,
                total: int | None, progress: bool | None) -> SendResult:
        from ..targets.traffic.sending import SendInterrupted, stream

        def record(r: Any, _planned: Any) -> None:
            out.add(r, self.record(target, r, label))
        before = self.traces.summary.copy()
        try:
            stream(target, items, record, total=total, progress=progress,
                   desc=f"sending {label}")
        except SendInterrupted as e:
            out.interrupted = str(e)
            e.result = out
            raise
        finally:
            out.counts = self.traces.summary - before
        return out


def pcap_frames(path: str | Path) -> Iterator[bytes]:
    """The frames of a pcap or pcapng file, one at a time (the file is not read whole).
    A file that is missing or not a capture raises :class:`SfclabError` saying so."""
    from scapy.utils import RawPcapReader

    try:
        reader = RawPcapReader(str(path))
    except FileNotFoundError:
        raise SfclabError(f"cannot read {str(path)!r}: there is no such file",
                          hint="give the path of a pcap file") from None
    except Exception as e:               # noqa: BLE001 - scapy raises plain exceptions
        raise SfclabError(f"cannot read {str(path)!r} as a capture: {e}",
                          hint="give a pcap or pcapng file (tcpdump -w, wireshark)") from None
    return _frames(reader)


def _frames(reader: Any) -> Iterator[bytes]:
    with reader:
        for frame, _ in reader:
            yield frame
