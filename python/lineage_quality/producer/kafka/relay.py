"""`Relay`: events from Kafka in that need nothing but forwarding go straight to Kafka out, with no
spool row and no disk sync; their input offsets are committed once Kafka out acknowledged them.

An event of the listener's topic that no rule binds (a START, a RUNNING, a COMPLETE nothing
binds: `Intake.relayable`) is durable in its input topic until its offset is committed: the spool
adds nothing to it but a disk sync and a worker's handoff. A COMPLETE's lineage is kept first, on
this thread, when its turn in its run comes, as a write-through keeps it; one with an output
marked upstream is spooled instead, for a worker to add the marks (a kill -9 after the lineage
was kept and before the acknowledgement keeps it again after the restart: the same rows). While
the sink is Kafka out (a pipelined transport: producer/outbound.py), Kafka in's thread hands such
an event to the sink itself, and its offset counts as kept (offsets.py) only once the broker
acknowledged it: a kill -9 at any moment reads again what was not acknowledged.

A run's order (its lane, `events.lane_of`), whichever way each event goes:

- **A lane is the relay's while one of its events is out.** The first event of a lane the spool
  holds nothing of is relayed, its lane held (`Spool.begin_direct`: no worker takes it, another
  intake spooling an event of it waits). A lane the spool or a worker has goes on in the spool.
- **One event of a run out at a time.** Later events of the lane wait in memory (`held`, their
  offsets pending), whatever they need; once the one out was acknowledged, the next is relayed
  when it needs nothing, else it and every event after it are spooled in one commit, and the lane
  goes back to the spool (`end_direct`).
- **A failed delivery is not overtaken.** The event the broker did not take is spooled, with the
  lane's waiting events behind it, in one commit (a refusal for good counts towards its dead
  letter); workers retry it from there as any spooled event, in order.

Bounded: past `limit` events out or waiting, Kafka in fetches nothing more until acknowledgements
came (`full`): at most `limit` plus one batch of Kafka in (its `_BATCH`). Everything here runs on
Kafka in's thread but the delivery reports, which are queued for it (`pump`).
"""

from __future__ import annotations

import collections
import logging
import queue
import threading
import time

from lineage_quality.producer.backoff import refused_for_good
from lineage_quality.producer.envelope import Envelope
from lineage_quality.producer.intake import Intake
from lineage_quality.producer.kafka.offsets import Offsets, Partition
from lineage_quality.producer.outbound import Pipelined

log = logging.getLogger(__name__)

_QUICK = 0.001  # s: Kafka in's poll while events wait for an acknowledgement to go on


class Taken:
    """One event of Kafka in: where it came from and its envelope."""

    __slots__ = ("envelope", "epoch", "offset", "where")

    def __init__(self, where: Partition, offset: int, envelope: Envelope, epoch: int = 0) -> None:
        self.where = where
        self.offset = offset
        self.envelope = envelope
        self.epoch = epoch  # its partition's assignment (`Relay.forget` ends one)


class _Marked(Exception):
    """A report of the lineage thread: an output of the COMPLETE is marked (spool it)."""


class _Stopped(Exception):
    """A report of the lineage thread: stopping, the COMPLETE not sent (read again)."""


_MARKED, _STOPPED = _Marked(), _Stopped()


class NotKept(Exception):
    """The spool refused `rest` (the events of `take` it was to keep); the cause says why."""

    def __init__(self, rest: list[Taken]) -> None:
        super().__init__(f"{len(rest)} event(s) not kept")
        self.rest = rest


class _Lane:
    __slots__ = ("first", "held", "name", "out", "refused")

    def __init__(self, name: str) -> None:
        self.name = name
        self.out: Taken | None = None  # relayed, its acknowledgement awaited
        self.held: collections.deque[Taken] = collections.deque()  # after it, in order
        # to spool before `held`: not taken by the broker, or a COMPLETE with a marked output
        self.first: Taken | None = None
        self.refused = 0  # of `first`: refusals for good


class Relay:
    """Relays to `sink` what `intake` finds relayable; marks in `offsets` what is kept."""

    def __init__(self, sink: Pipelined, intake: Intake, offsets: Offsets, limit: int) -> None:
        self.sink = sink
        self.intake = intake
        self.spool = intake.spool
        self.offsets = offsets
        self.limit = max(1, limit)
        self._lanes: dict[str, _Lane] = {}
        self._stuck: set[str] = set()  # lanes whose spooling the spool refused: tried again
        self._reports: collections.deque[tuple[_Lane, Taken, Exception | None]] = (
            collections.deque()
        )
        self._reported = threading.Event()  # a report queued (`wait`)
        self._epochs: dict[Partition, int] = {}
        # COMPLETEs whose lineage is kept before they go, in their turn, off Kafka in's thread
        # (a store commit each: a disk sync Kafka in does not wait for)
        self._keeping: queue.SimpleQueue[tuple[_Lane, Taken] | None] = queue.SimpleQueue()
        self._keeper: threading.Thread | None = None
        self._out = 0
        self._held = 0
        self._stopping = False

    # -- what Kafka in asks ---------------------------------------------------------------------

    @property
    def out(self) -> int:
        """Events relayed and not acknowledged yet (read by /metrics from another thread)."""
        return self._out

    def full(self) -> bool:
        """No room for more events out or waiting: fetch nothing more until reports came."""
        return self._out + self._held >= self.limit

    def poll_timeout(self, default: float) -> float:
        """How long Kafka in may wait in its poll: briefly while events wait for a report."""
        return _QUICK if self._held or self._reports or self._stuck else default

    def epoch(self, where: Partition) -> int:
        return self._epochs.get(where, 0)

    def take(self, items: list[Taken]) -> None:
        """Take Kafka in's events, in their order: each relayed, waiting behind its lane's event
        out, or spooled (one commit for them all). Their offsets are marked kept once spooled
        here, or once acknowledged (`pump`). Raises NotKept with the events to spool when the
        spool refused them (none of those kept; the others are taken)."""
        spooled: list[Taken] = []
        spooling: set[str] = set()
        relayable = self.intake.relayable
        for item in items:
            name = item.envelope.lane or ""
            lane = self._lanes.get(name)
            if lane is not None:  # one of its events is out: after it, whatever it needs
                lane.held.append(item)
                self._held += 1
                continue
            if (
                name in spooling
                or not relayable(item.envelope)
                or not self.spool.begin_direct(name)  # the spool or a worker has its run
            ):
                spooled.append(item)
                spooling.add(name)
                continue
            lane = self._lanes[name] = _Lane(name)
            self._send(lane, item)
        if spooled:
            try:
                self.intake.spool_many([item.envelope for item in spooled])
            except Exception as exc:
                raise NotKept(spooled) from exc
            self._kept(spooled)

    def pump(self) -> None:
        """Settle the delivery reports that came: an acknowledged event's offset kept and its
        lane's next event relayed or spooled; a failed one spooled before its lane's next."""
        self._reported.clear()
        reports = self._reports
        while reports:
            lane, item, error = reports.popleft()
            self._out -= 1
            lane.out = None
            if error is None:
                if self._current(item):
                    self.offsets.kept(item.where, item.offset)
                self.intake.relayed(item.envelope)
            elif error is _MARKED:
                if self._current(item):  # a worker adds the marks, in the run's order
                    lane.first, lane.refused = item, 0
            elif error is not _STOPPED:  # stopped: left pending, read again
                self._failed(lane, item, error)
            self._advance(lane)
        for name in list(self._stuck):
            stuck = self._lanes.get(name)
            if stuck is None:
                self._stuck.discard(name)
            else:
                self._advance(stuck)

    def wait(self, timeout: float) -> None:
        """Wait for a delivery report (at most `timeout` s)."""
        if not self._reports:
            self._reported.wait(timeout)

    def forget(self, gone: set[Partition]) -> None:
        """Partitions revoked or lost: their events waiting here are the next owner's (dropped:
        not committed, read again there); the reports of those out are ignored."""
        for where in gone:
            self._epochs[where] = self._epochs.get(where, 0) + 1
        for lane in list(self._lanes.values()):
            kept = [item for item in lane.held if self._current(item)]
            self._held -= len(lane.held) - len(kept)
            lane.held = collections.deque(kept)
            if lane.first is not None and not self._current(lane.first):
                lane.first = None
            if lane.out is None:
                self._advance(lane)

    def finish(self, timeout: float) -> None:
        """Stopping: wait (at most `timeout` s) for the reports of the events out; relay and
        spool nothing more. What waits here stays pending (read again after the restart); every
        lane goes back to the spool."""
        self._stopping = True
        deadline = time.monotonic() + timeout
        while self._out and time.monotonic() < deadline:
            self.wait(min(0.05, max(0.0, deadline - time.monotonic())))
            self.pump()
        self.pump()
        if self._keeper is not None:
            self._keeping.put(None)
            self._keeper.join(max(0.0, deadline - time.monotonic()) + 0.1)
        for lane in list(self._lanes.values()):  # its event out, if any, is read again
            lane.out = None
            self._end(lane)
        if self._out:
            log.warning(
                "Kafka in: %d relayed event(s) not acknowledged at the stop: read again after "
                "the restart", self._out,
            )  # fmt: skip

    # -- lanes ----------------------------------------------------------------------------------

    def _send(self, lane: _Lane, item: Taken) -> None:
        """Hand `item` to Kafka out, its report queued for `pump`; a COMPLETE whose lineage is
        kept here goes to the lineage thread first (`_keep_lineage`: the lane is this relay's
        meanwhile, nothing of its run before it is out or spooled)."""
        lane.out = item
        self._out += 1
        if self.intake.keeps_lineage(item.envelope):
            if self._keeper is None:
                self._keeper = threading.Thread(
                    target=self._keep_lineage, name="kafka-relay-lineage", daemon=True
                )
                self._keeper.start()
            self._keeping.put((lane, item))
            return
        self._produce(lane, item)

    def _produce(self, lane: _Lane, item: Taken) -> None:
        def told(error: Exception | None) -> None:  # on the reports thread
            self._report(lane, item, error)

        try:
            self.sink.produce(item.envelope.text, item.envelope.tree, told)
        except Exception as exc:  # not even queued (librdkafka's queue full, stopping)
            told(exc)

    def _report(self, lane: _Lane, item: Taken, error: Exception | None) -> None:
        self._reports.append((lane, item, error))
        self._reported.set()

    def _keep_lineage(self) -> None:
        """The lineage thread: each COMPLETE in its turn, its lineage kept, then relayed; one
        with an output marked (or whose step failed: a worker keeps it again, the same rows) is
        reported back to be spooled (`_MARKED`)."""
        while True:
            job = self._keeping.get()
            if job is None:
                return
            lane, item = job
            if self._stopping:
                self._report(lane, item, _STOPPED)
                continue
            try:
                marked = self.intake.lineage_marked(item.envelope)
            except Exception:
                log.exception("Kafka in: keeping a relayed COMPLETE's lineage failed; spooled")
                marked = True
            if marked:
                self._report(lane, item, _MARKED)
            else:
                self._produce(lane, item)

    def _failed(self, lane: _Lane, item: Taken, error: Exception) -> None:
        self.intake.relay_failed()
        said = str(error).strip().splitlines()
        log.warning(
            "relaying an event of %s failed: %s; spooled, its run's next events behind it",
            lane.name or "an event without a run",
            said[0][:300] if said else type(error).__name__,
        )
        if self._current(item):  # else the partition's next owner reads it again
            lane.first = item
            lane.refused = 1 if refused_for_good(error) else 0

    def _advance(self, lane: _Lane) -> None:
        """`lane` has no event out: relay its next event when it needs nothing, else spool the
        failed one and the rest in one commit; the lane ends when nothing of it is left."""
        if lane.out is not None:
            return
        if self._stopping:
            return
        if lane.first is None and lane.held:
            head = lane.held[0]
            if self.intake.relayable(head.envelope):
                lane.held.popleft()
                self._held -= 1
                self._send(lane, head)
                return
        rest = ([] if lane.first is None else [lane.first]) + list(lane.held)
        if rest:
            refused = [lane.refused] if lane.first is not None else []
            try:
                self.intake.spool_many([item.envelope for item in rest], refused)
            except Exception as exc:  # a full spool, a disk error: the lane waits, tried again
                if lane.name not in self._stuck:
                    log.warning("Kafka in: the spool did not keep a relayed run's events (%s); "
                                "tried again", exc)  # fmt: skip
                self._stuck.add(lane.name)
                return
            self._kept(rest)
            self._held -= len(lane.held)
            lane.held.clear()
            lane.first = None
        self._end(lane)

    def _end(self, lane: _Lane) -> None:
        """Nothing of `lane` out: it goes back to the spool (a worker, or the next relay)."""
        if lane.out is not None:
            return
        self._lanes.pop(lane.name, None)
        self._stuck.discard(lane.name)
        self._held -= len(lane.held)  # only when stopping: left pending, read again
        lane.held.clear()
        self.spool.end_direct(lane.name)

    def _kept(self, items: list[Taken]) -> None:
        for item in items:
            if self._current(item):
                self.offsets.kept(item.where, item.offset)

    def _current(self, item: Taken) -> bool:
        """`item`'s partition is still assigned as when it was fetched."""
        return item.epoch == self._epochs.get(item.where, 0)
