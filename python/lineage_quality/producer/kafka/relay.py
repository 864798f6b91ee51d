"""`Relay`: events from Kafka in that need nothing but forwarding go straight to Kafka out, with no
spool row and no disk sync; their input offsets are committed once Kafka out acknowledged them.

An event of the listener's topic that no rule binds (a START, a RUNNING, a COMPLETE nothing
binds: `Intake.relayable`) is durable in its input topic until its offset is committed: the spool
adds nothing to it but a disk sync and a worker's handoff. A COMPLETE's lineage is kept first, on
a thread of its own, when its turn in its run comes, as a write-through keeps it; one with an
output marked upstream is spooled instead, for a worker to add the marks (a kill -9 after the
lineage was kept and before the acknowledgement keeps it again after the restart: the same rows).
While the sink is Kafka out (a pipelined transport: producer/outbound.py), Kafka in's thread hands
such an event to the sink itself, and its offset counts as kept (offsets.py) only once the broker
acknowledged it: a kill -9 at any moment reads again what was not acknowledged.

A run's order (its lane, `events.lane_of`), whichever way each event goes:

- **A lane is the relay's while one of its events is out.** The first event of a lane the spool
  holds nothing of is relayed, its lane held (`Spool.begin_direct`: no worker takes it, another
  intake spooling an event of it waits). A lane the spool or a worker has goes on in the spool.
- **A run's events go out together, in order.** Its later events that need nothing are handed to
  Kafka out behind the ones out, without waiting for their acknowledgements: the transport's
  relay producer keeps a key's order, retries included (`enable.idempotence`), and stops rather
  than leave a gap (`enable.gapless.guarantee`: after a message it could not write, the ones
  behind it fail too; kafka/transport.py). Two wait in memory (`held`, their offsets pending): the
  events behind a COMPLETE whose lineage is being kept, until it is handed over or spooled; and an
  event that needs a worker, until everything before it was acknowledged -- it and every event
  after it are then spooled in one commit, and the lane goes back to the spool (`end_direct`).
- **A failed delivery is not overtaken.** The event the broker did not take is spooled, with every
  event of its run out after it and the lane's waiting ones, in one commit, once each event out
  was answered (a refusal for good counts towards its dead letter); workers retry them from there
  as any spooled event, in order. Should one behind it have been written all the same (librdkafka
  promises no gap for messages that time out in its queue), it is written again after the failed
  one (at least once), so that the run's last copies on the topic are in its order; the log says so.

Bounded: past `limit` events out (answered or not: one answered stays until the earlier ones of its
run are) or waiting, Kafka in fetches nothing more until acknowledgements came (`full`): at most
`limit` plus one batch of Kafka in (its `_BATCH`). Everything here runs on
Kafka in's thread but the delivery reports and the lineage thread's, which are queued for it
(`pump`).
"""

from __future__ import annotations

import collections
import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import Protocol

from lineage_quality.producer.backoff import refused_for_good
from lineage_quality.producer.envelope import Envelope
from lineage_quality.producer.intake import Intake
from lineage_quality.producer.kafka.keys import message_key
from lineage_quality.producer.kafka.offsets import Offsets, Partition

log = logging.getLogger(__name__)

_QUICK = 0.001  # s: Kafka in's poll while events wait for an acknowledgement to go on
# lineage threads: each COMPLETE's lineage is a store commit with a disk sync; several threads'
# commits are one (history/database.py `Grouped`), while a run has one COMPLETE there at a time
LINEAGE_THREADS = 4

# what became of an event out (`Taken.state`)
_OUT = 0  # handed to Kafka out, its answer awaited
_KEEPING = 1  # a COMPLETE at the lineage thread, its lineage being kept
_WRITTEN = 2  # acknowledged
_SPOOL = 3  # to spool: not taken by the broker, or a COMPLETE with an output marked
_LEFT = 4  # stopping: not sent, read again after the restart


class RelaySink(Protocol):
    """Kafka out for a run's events at once (kafka/transport.py `Gapless`): `told` is called
    once with the broker's answer (None: written), from another thread; raises when the event
    could not even be queued (`told` is then never called)."""

    def produce(
        self, text: str, key: str | None, told: Callable[[Exception | None], None]
    ) -> None: ...


class Taken:
    """One event of Kafka in: where it came from and its envelope."""

    __slots__ = ("envelope", "epoch", "offset", "refused", "state", "where")

    def __init__(self, where: Partition, offset: int, envelope: Envelope, epoch: int = 0) -> None:
        self.where = where
        self.offset = offset
        self.envelope = envelope
        self.epoch = epoch  # its partition's assignment (`Relay.forget` ends one)
        self.state = _OUT
        self.refused = 0  # refused for good by the broker when relayed (towards its dead letter)


class _Marked(Exception):
    """A report of the lineage thread: an output of the COMPLETE is marked (spool it)."""


class _Stopped(Exception):
    """A report of the lineage thread: stopping, the COMPLETE not sent (read again)."""


class _Handed(Exception):
    """A report of the lineage thread: the COMPLETE was handed to Kafka out (its run goes on)."""


_MARKED, _STOPPED, _HANDED = _Marked(), _Stopped(), _Handed()


class NotKept(Exception):
    """The spool refused `rest` (the events of `take` it was to keep); the cause says why."""

    def __init__(self, rest: list[Taken]) -> None:
        super().__init__(f"{len(rest)} event(s) not kept")
        self.rest = rest


class _Lane:
    __slots__ = ("held", "keeping", "key", "logged", "name", "out", "spooling")

    def __init__(self, name: str) -> None:
        self.name = name
        self.out: collections.deque[Taken] = collections.deque()  # handed over, in order
        self.held: collections.deque[Taken] = collections.deque()  # after them, in order
        self.keeping = False  # a COMPLETE of `out` is at the lineage thread: `held` waits
        self.spooling = False  # an event of `out` is to spool: nothing more is sent
        self.key: str | None = None  # the Kafka key of its events out (one partition)
        self.logged = False  # its first failure was logged

    def answered(self) -> bool:
        """Every event out has its answer (written, to spool, or left)."""
        return all(item.state >= _WRITTEN for item in self.out)


class Relay:
    """Relays to `sink` what `intake` finds relayable; marks in `offsets` what is kept."""

    def __init__(self, sink: RelaySink, intake: Intake, offsets: Offsets, limit: int) -> None:
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
        self._keepers: list[threading.Thread] = []
        self._out = 0
        # events in the lanes' `out`, answered or not: an answered one stays behind an earlier
        # one of its run until that is answered too (the bound counts them: `full`)
        self._in_lanes = 0
        self._held = 0
        self._stopping = False

    # -- what Kafka in asks ---------------------------------------------------------------------

    @property
    def out(self) -> int:
        """Events relayed and not acknowledged yet (read by /metrics from another thread)."""
        return self._out

    def full(self) -> bool:
        """No room for more events out or waiting: fetch nothing more until reports came."""
        return self._in_lanes + self._held >= self.limit

    def poll_timeout(self, default: float) -> float:
        """How long Kafka in may wait in its poll: briefly while events are out or wait (a
        report does not end the poll: its lane's next events would wait the whole poll)."""
        return _QUICK if self._out or self._held or self._reports or self._stuck else default

    def epoch(self, where: Partition) -> int:
        return self._epochs.get(where, 0)

    def take(self, items: list[Taken]) -> None:
        """Take Kafka in's events, in their order: each relayed, waiting behind its lane's events
        out, or spooled (one commit for them all). Their offsets are marked kept once spooled
        here, or once acknowledged (`pump`). Raises NotKept with the events to spool when the
        spool refused them (none of those kept; the others are taken)."""
        spooled: list[Taken] = []
        spooling: set[str] = set()
        relayable = self.intake.relayable
        for item in items:
            name = item.envelope.lane or ""
            lane = self._lanes.get(name)
            if lane is not None:  # the relay's: after its events out, whatever it needs
                if lane.held or not self._goes_now(lane, item):
                    lane.held.append(item)
                    self._held += 1
                else:
                    self._send(lane, item)
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
        """Settle the reports that came: an acknowledged event's offset kept and its lane's
        next events relayed or spooled; a failed one spooled with what follows it in its run."""
        self._reported.clear()
        reports = self._reports
        touched: dict[int, _Lane] = {}
        while reports:
            lane, item, error = reports.popleft()
            if error is _HANDED:  # at Kafka out now: its run's next events may follow it
                if item.state == _KEEPING:  # else answered already (and `keeping` with it):
                    item.state = _OUT  # its lane may have ended, a new one of the run begun
                    lane.keeping = False
                    touched[id(lane)] = lane
                continue
            touched[id(lane)] = lane
            self._out -= 1
            if item.state == _KEEPING:
                lane.keeping = False
            if error is None:
                item.state = _WRITTEN
                if self._current(item):
                    self.offsets.kept(item.where, item.offset)
                self.intake.relayed(item.envelope)
            elif error is _STOPPED:  # left pending: read again
                item.state = _LEFT
            else:
                if error is not _MARKED:  # a worker adds the marks, in the run's order
                    self._failed(lane, item, error)
                item.state = _SPOOL
                lane.spooling = True
        for lane in touched.values():
            self._advance(lane)
        for name in list(self._stuck):
            stuck = self._lanes.get(name)
            if stuck is None:
                self._stuck.discard(name)
            else:
                self._advance(stuck)

    def wait(self, timeout: float) -> None:
        """Wait for a report (at most `timeout` s)."""
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
        for _ in self._keepers:
            self._keeping.put(None)
        for keeper in self._keepers:
            keeper.join(max(0.0, deadline - time.monotonic()) + 0.1)
        for lane in list(self._lanes.values()):  # its events out, if any, are read again
            self._end(lane)
        if self._out:
            log.warning(
                "Kafka in: %d relayed event(s) not acknowledged at the stop: read again after "
                "the restart", self._out,
            )  # fmt: skip

    # -- lanes ----------------------------------------------------------------------------------

    def _goes_now(self, lane: _Lane, item: Taken) -> bool:
        """`item` may go out behind `lane`'s events out: it needs nothing, no COMPLETE of the
        run is at the lineage threads, nothing of it is to spool, and it goes to the same
        partition (the same key) as those out -- else it waits for their answers."""
        if lane.keeping or lane.spooling or not self.intake.relayable(item.envelope):
            return False
        return not lane.out or lane.key == _key(item)

    def _send(self, lane: _Lane, item: Taken) -> None:
        """Hand `item` to Kafka out behind its lane's events out, its report queued for `pump`;
        a COMPLETE whose lineage is kept here goes to the lineage thread first (`_keep_lineage`:
        the lane's later events wait for it)."""
        lane.out.append(item)
        lane.key = _key(item)
        self._out += 1
        self._in_lanes += 1
        if self.intake.keeps_lineage(item.envelope):
            item.state = _KEEPING
            lane.keeping = True
            self._keeping.put((lane, item))
            if len(self._keepers) < LINEAGE_THREADS:
                keeper = threading.Thread(
                    target=self._keep_lineage, name="kafka-relay-lineage", daemon=True
                )
                keeper.start()
                self._keepers.append(keeper)
            return
        if not self._produce(lane, item):
            lane.spooling = True  # refused at once: nothing more of its run goes out

    def _produce(self, lane: _Lane, item: Taken) -> bool:
        """Hand `item` to Kafka out, its answer reported for `pump`; False when it was refused
        at once (not even queued: librdkafka's queue full, stopping, too large)."""

        def told(error: Exception | None) -> None:  # on the reports thread
            self._report(lane, item, error)

        try:
            self.sink.produce(item.envelope.text, _key(item), told)
        except Exception as exc:
            told(exc)
            return False
        return True

    def _report(self, lane: _Lane, item: Taken, error: Exception | None) -> None:
        self._reports.append((lane, item, error))
        self._reported.set()

    def _keep_lineage(self) -> None:
        """The lineage thread: each COMPLETE in its turn, its lineage kept, then relayed (and
        reported handed over, so its run's next events follow it); one with an output marked
        (or whose step failed: a worker keeps it again, the same rows) is reported back to be
        spooled (`_MARKED`)."""
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
                self._report(lane, item, _HANDED)

    def _failed(self, lane: _Lane, item: Taken, error: Exception) -> None:
        self.intake.relay_failed()
        item.refused = 1 if refused_for_good(error) else 0
        if not lane.logged:  # the first of its run (the ones behind it fail with it)
            lane.logged = True
            said = str(error).strip().splitlines()
            log.warning(
                "relaying an event of %s failed: %s; spooled, its run's next events behind it",
                lane.name or "an event without a run",
                said[0][:300] if said else type(error).__name__,
            )

    def _advance(self, lane: _Lane) -> None:
        """Go on with `lane` after reports: its answered events out settled from the front;
        its waiting events relayed while they need nothing, else (once everything before them
        was answered) spooled in one commit with what is to spool; the lane ends when nothing
        of it is left."""
        out = lane.out
        while out and out[0].state == _WRITTEN:
            out.popleft()
            self._in_lanes -= 1
        if self._stopping:
            return
        if not lane.spooling:
            while lane.held and self._goes_now(lane, lane.held[0]):
                self._held -= 1
                self._send(lane, lane.held.popleft())
            if out or not lane.held:
                if not out:
                    self._end(lane)
                return
        elif not lane.answered():
            return  # the events out after the one to spool are answered first
        self._spool_rest(lane)

    def _spool_rest(self, lane: _Lane) -> None:
        """Everything of `lane` from its first event to spool on, then what waits, in one
        commit (an event written after a failed one is written again after it); the lane
        ends."""
        rest = [item for item in lane.out if item.state != _LEFT]
        rest = [item for item in rest + list(lane.held) if self._current(item)]
        again = sum(1 for item in rest if item.state == _WRITTEN)  # counted when written
        if rest:
            try:
                self.intake.spool_many(
                    [item.envelope for item in rest], [item.refused for item in rest], again
                )
            except Exception as exc:  # a full spool, a disk error: the lane waits, tried again
                if lane.name not in self._stuck:
                    log.warning("Kafka in: the spool did not keep a relayed run's events (%s); "
                                "tried again", exc)  # fmt: skip
                self._stuck.add(lane.name)
                return
            self._kept(rest)
            if again:
                log.warning(
                    "Kafka in: %d event(s) of %s were written after an earlier one of their run "
                    "that failed; written again after it", again, lane.name or "a run",
                )  # fmt: skip
        self._held -= len(lane.held)
        lane.held.clear()
        self._in_lanes -= len(lane.out)
        lane.out.clear()
        lane.spooling = False
        self._end(lane)

    def _end(self, lane: _Lane) -> None:
        """Nothing of `lane` waits here: it goes back to the spool (a worker, or the next
        relay). Stopping, what it holds is left pending, read again. Once only: a lane ended
        already may share its name with a newer lane of its run, which is not this one's to end."""
        if self._lanes.get(lane.name) is not lane:
            return
        del self._lanes[lane.name]
        self._stuck.discard(lane.name)
        self._held -= len(lane.held)
        lane.held.clear()
        self.spool.end_direct(lane.name)

    def _kept(self, items: list[Taken]) -> None:
        for item in items:
            if self._current(item):
                self.offsets.kept(item.where, item.offset)

    def _current(self, item: Taken) -> bool:
        """`item`'s partition is still assigned as when it was fetched."""
        return item.epoch == self._epochs.get(item.where, 0)


def _key(item: Taken) -> str | None:
    """The Kafka key `item` goes out with (keys.py; the transport's fixed key aside)."""
    envelope = item.envelope
    if envelope.facts is not None:  # read by the skeleton (kafka/skeleton.py)
        return envelope.facts.key
    tree = envelope.tree
    return message_key(tree) if isinstance(tree, dict) else None
