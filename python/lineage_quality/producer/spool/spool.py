"""`Spool`: the one object the producer talks to, composing the parts of this package.

An event is committed here before the receiver answers 2xx (`put`); it leaves only after a sink
took it (`done`). After evaluation the enriched body replaces the raw one (`replace`), so a retry
never re-evaluates. Workers take events lane by lane (`claim`, `go_on`, `release`; lanes.py).
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from lineage_quality.producer.envelope import Envelope
from lineage_quality.producer.settings import DEFAULTS, Settings
from lineage_quality.producer.spool.bad_messages import BadMessage, BadMessages
from lineage_quality.producer.spool.commit import RUNS_ONLY, Delete, GroupCommit, Put
from lineage_quality.producer.spool.dead_letters import DeadLetter, DeadLetters
from lineage_quality.producer.spool.index import Index
from lineage_quality.producer.spool.lanes import Lanes
from lineage_quality.producer.spool.run_book import RecentRuns, RunBook
from lineage_quality.producer.spool.store import (
    EVENT,
    LATE,
    SpooledEvent,
    Store,
    lane_of_body,
)


class Spool:
    """The durable queue of events at `path`, bounded by `settings.spool.max_events` and
    `spool_max_bytes` (past them `put` raises SpoolFullError: the receiver answers 503), with
    `spool_reserve_bytes` of disk-full reserve, the runs API's bookkeeping
    (`settings.spool.runs`) and the dead letters (`settings.spool.dead_letter_max_events`,
    `_bytes`) and the records of bad Kafka messages
    (`settings.kafka.bad_messages_max`) in the same database."""

    def __init__(self, path: str | Path, settings: Settings = DEFAULTS) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.max_events = settings.spool.max_events
        self.max_bytes = settings.spool.max_bytes
        self.index = Index(self.max_events, self.max_bytes, settings.spool.warn_ratio)
        self.lanes = Lanes(self.index)
        self.store = Store(
            self.path,
            settings.spool.reserve_bytes,
            settings.spool.reserve_retry,
            held=lambda: self.index.count,
        )
        self.book = RunBook(self.store.db, self.store.write, settings.spool.runs)
        self.store.on_rollback.append(self.book.resync)  # its counts include what rolled back
        self.recent = RecentRuns()
        self.letters = DeadLetters(self.store, self.index, self.lanes, settings)
        self.bad = BadMessages(self.store, settings)
        self.commit = GroupCommit(self.store, self.index, self.lanes, self.book, self.recent)
        with self.index.lock:
            for event_id, lane, size in self.store.stored():
                self.index.add(event_id, lane, size)
        self.lanes.rebuild()

    # -- events in ------------------------------------------------------------------------------

    def put(
        self,
        body: str,
        run_ids: Sequence[str] = (),
        pending: int = 0,
        lane: str | None = None,
        event_type: str | None = None,
        event: Any = None,
        refused: int = 0,
    ) -> int:
        """Store an event durably; returns its id. Raises SpoolFullError past the bound or on a
        full disk, sqlite3.Error if it could not be kept for another reason. `run_ids` are
        recorded as by `run_seen`, in the same transaction; `lane` is `events.lane_of` of the
        body (computed here when not given). `event_type`, when given, is the event's `eventType`
        ("" for none): with `run_ids` and `event` (the body parsed, rawjson) it is handed to the
        worker, which then need not parse the body; `refused`: how many times the sink refused
        it for good already (write_through.py). Returns once a disk sync covers the event
        (group commit: commit.py)."""
        lane = lane_of_body(body) if lane is None else lane
        entry = Put(
            body, lane, len(body.encode()), tuple(run_ids), pending, event_type, event, refused
        )
        with self.lanes.putting(lane):
            return self.commit.put(entry)

    def keep(self, envelope: Envelope, refused: int = 0) -> int:
        """`put` of an event as the intake decoded it (producer/envelope.py): its facts come from
        the envelope, and a COMPLETE or a FAIL is kept in memory with it, so the worker neither
        parses it again nor binds it twice."""
        return self.put(
            envelope.text,
            envelope.run_ids,
            +1 if envelope.complete else 0,
            envelope.lane,
            envelope.event_type,
            envelope if envelope.kept else None,
            refused,
        )

    def keep_many(self, envelopes: Sequence[Envelope], refused: Sequence[int] = ()) -> list[int]:
        """`keep` of several events in one commit (one disk sync), in their order, all or none
        (Kafka in's batches: kafka/consumer.py); their ids. `refused`: how many times the sink
        refused each for good already (kafka/relay.py; missing: 0). Raises as `put` does, none
        kept."""
        entries = [
            Put(
                e.text,
                lane_of_body(e.text) if e.lane is None else e.lane,
                len(e.text.encode()),
                tuple(e.run_ids),
                +1 if e.complete else 0,
                e.event_type,
                e if e.kept else None,
                refused[i] if i < len(refused) else 0,
            )
            for i, e in enumerate(envelopes)
        ]
        with contextlib.ExitStack() as putting:
            for entry in entries:
                putting.enter_context(self.lanes.putting(entry.lane))
            return self.commit.put_many(entries)

    def done(
        self, event_id: int, run_ids: Sequence[str] = (), pending: int = 0, ride: bool = False
    ) -> None:
        """The event was forwarded (or is not needed any more): delete it, and record `run_ids`
        as by `run_seen` in the same transaction. With a commit in flight (or `ride`) it returns
        at once and the delete rides with the next commit (commit.py); after a crash or a power
        cut before that commit the event is forwarded once more, never lost."""
        self.commit.delete(Delete(event_id, tuple(run_ids), pending), ride)

    def sending(self, item: SpooledEvent) -> bool:
        """`item` (its lane held by the caller) is sent without waiting for the sink's answer:
        True, out from now on (never handed out again) until `reported`; False when it must
        not be sent now (lanes.py, `sending`)."""
        return self.lanes.sending(item.lane, item.id)

    def reported(
        self, lane: str, event_id: int, taken: bool
    ) -> tuple[list[int], list[int], list[int]]:
        """The sink's answer for an event out (lanes.py, `reported`): the events of `lane`
        settled: (taken, to delete with `done(..., ride=True)`; not taken, to count as
        attempted; taken after one that was not, kept to be sent again)."""
        return self.lanes.reported(lane, event_id, taken)

    def forwarded_directly(self, run_ids: Sequence[str]) -> None:
        """An event of `run_ids` went to the sink without the spool (write_through.py): record
        its runs as `run_seen(run_ids, 0)` would, riding with the next commit (commit.py,
        `ride`: within RUNS_DELAY; a crash before that forgets that the run was seen, nothing
        else). A run this process recorded already costs nothing."""
        if run_ids and self.recent.unseen(run_ids, 0):  # unlocked: at worst written twice
            self.commit.ride(Delete(RUNS_ONLY, tuple(run_ids), 0))

    def begin_direct(self, lane: str) -> bool:
        """Hold `lane` for an event the receiver forwards itself, when it may (lanes.py): True
        when it holds it, until `end_direct`. An event put in the spool meanwhile comes before any
        later event of the lane."""
        return self.lanes.begin_direct(lane)

    def wait_direct(self, lane: str) -> None:
        """Before spooling an event of `lane`: wait for an event of it being written through."""
        self.lanes.wait_direct(lane)

    def end_direct(self, lane: str) -> None:
        self.lanes.end_direct(lane)

    def replace(self, event_id: int, body: str) -> None:
        """Keep the enriched body in place of the received one."""
        size = len(body.encode())
        store = self.store
        with store.db_lock:
            with store.not_synced():  # lost in a power cut: evaluated again
                store.write(
                    "UPDATE events SET body = ?, enriched = 1, size = ? WHERE id = ?",
                    (body, size, event_id),
                )
            with self.index.lock:
                self.index.forget(event_id)
                self.index.resize(event_id, size)

    def hand_over(self, event_id: int, body: str, late_body: str) -> int:
        """In one transaction: keep `body` as event `event_id`'s enriched body, and add the
        follow-up `late_body` (not yet evaluated) after it in the same lane. The follow-up, and so
        the rest of its lane, is held until `unhold` (its evaluation ended)."""
        size, late_size = len(body.encode()), len(late_body.encode())
        store = self.store
        with store.db_lock:
            with self.index.lock:
                lane = self.index.lane(event_id)
            if lane is None:
                raise KeyError(f"no event {event_id} in the spool")
            late: list[int] = []

            def write() -> None:
                late.clear()
                store.write(
                    "UPDATE events SET body = ?, enriched = 1, size = ? WHERE id = ?",
                    (body, size, event_id),
                )
                cur = store.write(
                    "INSERT INTO events (body, received, lane, kind, size) VALUES (?, ?, ?, ?, ?)",
                    (late_body, time.time(), lane, LATE, late_size),
                )
                late.append(int(cur.lastrowid or 0))

            store.transaction(write)
            late_id = late[0]
            with self.index.lock:
                self.index.forget(event_id)
                self.index.resize(event_id, size)
                self.lanes.hold(late_id, lane)  # before any worker can see it
                self.index.add(late_id, lane, late_size)
                self.lanes.offer(lane)
                self.lanes.wake_all()
            return late_id

    def unhold(self, event_id: int) -> None:
        self.lanes.unhold(event_id)

    def attempted(self, event_id: int) -> None:
        with self.index.lock:
            self.index.forget(event_id)  # read from the database from now on (with attempts)
        with self.store.db_lock, contextlib.suppress(sqlite3.OperationalError):
            self.store.db.execute(
                "UPDATE events SET attempts = attempts + 1 WHERE id = ?", (event_id,)
            )

    # -- workers (lanes.py) ---------------------------------------------------------------------

    def claim(self, timeout: float | None = None) -> SpooledEvent | None:
        """The oldest event of a lane nobody holds, and hold its lane until `release`."""
        return self._take(timeout, claim=True)

    def next(self, timeout: float | None = None) -> SpooledEvent | None:
        """The oldest event not yet forwarded, whatever its lane (not claimed)."""
        return self._take(timeout, claim=False)

    def go_on(self, lane: str) -> SpooledEvent | None:
        """For a worker holding `lane` and done with its event: the lane's next event, the lane
        still held, as long as the scheduling policy keeps the worker on it; else None, the lane
        released (lanes.py)."""
        return self._then(lane, self.lanes.go_on(lane))

    def claim_next(self, lane: str) -> SpooledEvent | None:
        """For a worker holding `lane`: the lane's next event, the lane still held; None, the
        lane released, when it has nothing claimable now."""
        return self._then(lane, self.lanes.next_in_lane(lane))

    def release(self, lane: str) -> None:
        self.lanes.release(lane)

    def park(self, lane: str) -> None:
        self.lanes.park(lane)

    def unpark(self, lane: str) -> None:
        self.lanes.unpark(lane)

    @contextlib.contextmanager
    def parked(self, lane: str) -> Iterator[None]:
        """The worker holding `lane` waits meanwhile: other lanes' events get another worker."""
        with self.lanes.parked(lane):
            yield

    def _take(self, timeout: float | None, claim: bool) -> SpooledEvent | None:
        while True:
            picked = self.lanes.pick(timeout, claim)
            if picked is None:
                return None
            event = self._read(picked[0])
            if event is not None:
                return event
            # gone meanwhile (next() does not hold the lane): look again
            if claim:
                self.release(picked[1])

    def _then(self, lane: str, head: int | None) -> SpooledEvent | None:
        if head is None:
            return None
        event = self._read(head)
        if event is None:  # gone meanwhile
            self.release(lane)
        return event

    def _read(self, event_id: int) -> SpooledEvent | None:
        """The event as kept in memory (put by this process, as received), else as stored."""
        with self.index.lock:
            kept = self.index.kept(event_id)
            lane = self.index.lane(event_id)
        if kept is not None and lane is not None:  # as received, never attempted
            return SpooledEvent(
                event_id, kept.body, False, 0, lane, EVENT, kept.event_type, kept.run_ids,
                kept.event, kept.refused,
            )  # fmt: skip
        return self.store.read(event_id)

    # -- runs (run_book.py) ---------------------------------------------------------------------

    def run_seen(self, run_ids: Sequence[str], pending: int) -> None:
        """Record runs (a run and its parent) and how many COMPLETE events of them wait."""
        with self.store.db_lock:
            runs = self.recent.unseen(run_ids, pending)
            self.store.transaction(lambda: self.book.record(runs, pending))
            self.recent.update(runs)

    def add_verdicts(self, run_ids: Sequence[str], body: str) -> None:
        with self.store.db_lock:
            self.store.transaction(lambda: self.book.add_verdicts(run_ids, body))

    def run_report(self, run_id: str) -> tuple[int, list[str]] | None:
        """(COMPLETE events still waiting, verdict bodies) of a run; None when unknown."""
        with self.store.db_lock:
            return self.book.report(run_id)

    def mark_run_failed(self, run_id: str) -> None:
        with self.store.db_lock:
            self.store.transaction(lambda: self.book.mark_failed(run_id))

    def run_failed(self, run_id: str) -> bool:
        with self.store.db_lock:
            return self.book.failed(run_id)

    # -- dead letters (dead_letters.py) ---------------------------------------------------------

    def dead_letter(self, event_id: int, reason: str) -> int:
        """Move an event the sink keeps refusing out of its lane into the dead letters; how many
        of the oldest dead letters expired for it (`settings.spool.dead_letter_max_events`,
        `_bytes`)."""
        return self.letters.bury(event_id, reason)

    def keep_bad_message(self, raw: bytes | None, source: str, offset: int, reason: str) -> int:
        """Keep a bounded record of a Kafka message that is not an event (bad_messages.py); how
        many of the oldest records expired for it (`settings.kafka.bad_messages_max`)."""
        return self.bad.record(raw, source, offset, reason)

    def bad_messages(self) -> list[BadMessage]:
        return self.bad.entries()

    def purge_bad_messages(self, ids: list[int] | None = None) -> int:
        return self.bad.purge(ids)

    def dead_letters(self) -> list[DeadLetter]:
        return self.letters.entries()

    def retry_dead_letter(self, event_id: int) -> int:
        return self.letters.retry(event_id)

    def purge_dead_letters(self, event_ids: list[int] | None = None) -> int:
        return self.letters.purge(event_ids)

    # -- the spool as a whole -------------------------------------------------------------------

    def pending(self) -> int:
        """Events not forwarded yet."""
        with self.index.lock:
            return self.index.count

    def usage(self) -> tuple[int, int]:
        """(events, bytes) held now."""
        with self.index.lock:
            return self.index.count, self.index.bytes

    def wait_empty(self, timeout: float) -> bool:
        """Wait until every event was forwarded, and its delete committed."""
        deadline = time.monotonic() + timeout
        return self.lanes.wait_empty(deadline) and self.commit.wait_committed(deadline)

    def wake(self) -> None:
        self.lanes.wake()

    def close(self) -> None:
        """Close the database, after the deletes riding on a commit are committed (for at most
        a few seconds: what is left is forwarded once more after a restart)."""
        self.commit.wait_committed(time.monotonic() + 5.0)
        self.commit.close()
        self.store.close()
