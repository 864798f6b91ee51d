"""Durable queue of received events (SQLite, WAL, synchronous=FULL).

An event is committed here before the receiver answers 2xx; it leaves only after a sink took it.
After evaluation the enriched body replaces the raw one, so a retry never re-evaluates.

Each event travels in a lane (its run, see `events.lane_of`). `claim` hands out the oldest event
of a lane nobody is working on, so a run's events go out in arrival order while other runs pass.

The spool is bounded (`max_events`, `max_bytes`): past the bound `put` raises SpoolFullError, and
the receiver answers 503; it warns once when it fills past `warn_ratio`. It also keeps a reserve
file of `reserve_bytes` beside the database: when the disk fills up, the reserve is given back so
forwarded events can still be deleted, and no new event is taken until the reserve can be
rewritten (the disk has room again).

The runs API's bookkeeping (`run_book.RunBook`, bounded by `RunBookBounds`) lives in the same
database: a put records its run in its own transaction.
"""

from __future__ import annotations

import collections
import contextlib
import json
import logging
import os
import shutil
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import attrs

from lineage_quality.producer.events import lane_of
from lineage_quality.producer.run_book import RunBook
from lineage_quality.producer.settings import DEFAULTS, Settings

log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    body TEXT NOT NULL,
    enriched INTEGER NOT NULL DEFAULT 0,
    attempts INTEGER NOT NULL DEFAULT 0,
    received REAL NOT NULL
)
"""
# Events a sink refused again and again (a 4xx): kept for inspection, out of their run's lane.
_DEAD_LETTERS = """
CREATE TABLE IF NOT EXISTS dead_letters (
    id INTEGER PRIMARY KEY,
    body TEXT NOT NULL,
    lane TEXT NOT NULL,
    kind TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    reason TEXT NOT NULL,
    received REAL NOT NULL,
    dead REAL NOT NULL
)
"""
# Columns added after the first release; older spools get them on open.
_COLUMNS = {
    "lane": "TEXT NOT NULL DEFAULT ''",
    "kind": "TEXT NOT NULL DEFAULT 'event'",
    "size": "INTEGER NOT NULL DEFAULT 0",
}
_ROW = "id, body, enriched, attempts, lane, kind"

# A worker that took its event less than this long ago is about to come back for more: an event
# of another lane waits for it rather than waking a second worker. On 2 cores a second worker
# forwarding at once only contends for the GIL (bench/passthrough.py: 1 worker ~1,880 events/s,
# 4 woken per lane ~1,410); a sink slower than this, or an evaluation, brings more workers in.
HELPER_AFTER = 0.002  # seconds

EVENT = "event"  # an event as received
LATE = "late"  # the follow-up carrying results that came after their event was forwarded

# Bodies of events put by this process are also kept in memory, up to this many bytes, until they
# leave the spool: a worker then takes them without reading the database, and without parsing
# them when their type needs no evaluation (see `SpooledEvent.event_type`).
MEMORY_BYTES = 16 * 1024 * 1024
# How long the writer must have been idle before the flusher commits riding deletes on their own
# (see `Spool.done`): while events arrive, their commits carry the deletes instead.
FLUSH_DELAY = 0.005


class SpoolFullError(Exception):
    """The spool is at its bound or its disk is full; the event was not stored."""


@attrs.frozen
class SpooledEvent:
    id: int
    body: str
    enriched: bool
    attempts: int
    lane: str = ""
    kind: str = EVENT
    # Known when the event was put by this process (and is still as received): its eventType
    # ("" when it has none) and run ids as the receiver parsed them; None: parse the body.
    event_type: str | None = None
    run_ids: tuple[str, ...] = ()


@attrs.define
class _Queued:
    """A put waiting for its group commit; settled once committed (or refused: `error`)."""

    body: str
    lane: str
    size: int
    run_ids: tuple[str, ...]
    pending: int
    event_type: str | None = None
    id: int = 0
    error: BaseException | None = None
    settled: bool = False
    lead: bool = False  # handed the commit of what queued behind the last batch
    waiter: Any = None  # a held _waiter() while waiting; released once, by the leader


@attrs.define
class _Deletion:
    """A `done` (delete of a forwarded event) waiting for its group commit: deletes share the
    puts' transactions instead of taking the writer for one transaction each."""

    id: int
    run_ids: tuple[str, ...]
    pending: int
    error: BaseException | None = None
    settled: bool = False
    lead: bool = False  # handed the commit of what queued behind the last batch
    waiter: Any = None  # a held _waiter() while waiting; released once, by the leader
    riding: bool = False  # queued behind a commit in flight; nobody waits for it (see `done`)


_waiter = threading.Lock  # what a waiting put or delete sleeps on (held, released once)


def _batch_error(exc: BaseException) -> BaseException:
    # each failed put raises its own exception object (they are raised in several threads)
    if isinstance(exc, SpoolFullError):
        return SpoolFullError(str(exc))
    if isinstance(exc, sqlite3.Error):
        return sqlite3.OperationalError(f"event not stored: {exc}")
    return RuntimeError(f"event not stored: {exc!r}")


@attrs.frozen
class DeadLetter:
    id: int
    body: str
    lane: str
    attempts: int
    reason: str
    dead: float  # when it was moved aside (epoch seconds)


def _is_full(exc: sqlite3.Error) -> bool:
    return getattr(exc, "sqlite_errorname", "") == "SQLITE_FULL" or "full" in str(exc)


def _lane(body: str) -> str:
    try:
        event = json.loads(body)
    except ValueError:
        return ""
    return lane_of(event) if isinstance(event, dict) else ""


class Spool:
    def __init__(self, path: str | Path, settings: Settings = DEFAULTS) -> None:
        """Open (or create) the spool at `path`, bounded by `settings.spool_*` and `runs`."""
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.max_events = settings.spool_max_events
        self.max_bytes = settings.spool_max_bytes
        self.warn_ratio = settings.spool_warn_ratio
        self.reserve_bytes = reserve_bytes = settings.spool_reserve_bytes
        runs = settings.runs
        self.reserve_retry = (
            settings.spool_reserve_retry
        )  # seconds between tries to rewrite the reserve
        self._reserve = self.path.with_name(self.path.name + ".reserve")
        self._reserve_tried = 0.0
        self._db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None)
        # Free pages can go back to the disk after it filled up (set before the file exists).
        self._db.execute("PRAGMA auto_vacuum=INCREMENTAL")
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        # Checkpoint often enough that the write-ahead log stays well under the reserve.
        pages = max(16, reserve_bytes // 4096 // 4)
        self._headroom = 2 * pages * 4096  # room the log needs besides the reserve
        self._db.execute(f"PRAGMA wal_autocheckpoint={int(pages)}")
        self._db.execute(f"PRAGMA journal_size_limit={int(max(reserve_bytes // 2, 65536))}")
        self._db.execute(_SCHEMA)
        self._db.execute(_DEAD_LETTERS)
        # the runs API's bookkeeping, in its own tables
        self._book = RunBook(self._db, self._write, runs)
        present = {row[1] for row in self._db.execute("PRAGMA table_info(events)")}
        for name, decl in _COLUMNS.items():
            if name not in present:
                self._db.execute(f"ALTER TABLE events ADD COLUMN {name} {decl}")
        self._migrate_old_rows()
        # (lane, id) index of older versions: claim() now finds lane heads in memory
        self._db.execute("DROP INDEX IF EXISTS events_lane")
        # Workers read claimed events on a connection of their own: a WAL reader is not blocked
        # by the writer's commit (its disk sync), so forwarding goes on while events arrive.
        self._reader = sqlite3.connect(
            str(self.path), check_same_thread=False, isolation_level=None
        )
        self._reader.execute("PRAGMA query_only=1")
        self._reader_lock = threading.Lock()
        # Locks: _db_lock guards the writer connection (and _known_runs, _durable); _lock guards
        # what is held in memory (lanes, busy, held, counts, deletes). Always _db_lock first.
        self._db_lock = threading.RLock()
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)  # workers: something to claim
        # `wait_empty`: its own condition, so a spool draining (after nearly every event when
        # traffic is light) does not wake every idle worker for nothing
        self._emptied = threading.Condition(self._lock)
        # lanes a worker holds -> monotonic time it took its current event (see HELPER_AFTER)
        self._busy: dict[str, float] = {}
        self._parked: set[str] = set()  # busy lanes whose worker waits (evaluation, backoff)
        self.helper_after = HELPER_AFTER
        self._worker = threading.local()  # `took`: when this worker took its last event
        self._held: dict[int, str] = {}  # follow-ups waiting for their evaluation -> lane
        self._known_runs: set[str] = set()  # runs recorded by this process (see _unseen)
        self._durable = True  # synchronous=FULL (see _synchronous)
        self._queue: list[_Queued | _Deletion] = []  # puts and deletes waiting to be committed
        self._queue_lock = threading.Lock()  # guards _queue and _committing
        self._committing = False  # a thread is committing (its batch is off the queue)
        # The flusher commits riding deletes that no put came to carry; the thread ending a
        # commit sets this when only such deletes are left on the queue.
        self._flush_wanted = threading.Event()
        self._last_commit = 0.0  # monotonic time the last commit ended; guarded by _queue_lock
        self._closing = False
        self._flusher = threading.Thread(
            target=self._flush_loop, name="lq-spool-flush", daemon=True
        )
        self._events: dict[int, tuple[str, int]] = {}  # id -> (lane, size), every stored event
        # id -> (body, eventType, run ids) of events put by this process, as received (see
        # MEMORY_BYTES); guarded by _lock
        self._memory: dict[int, tuple[str, str, tuple[str, ...], int]] = {}
        self._memory_bytes = 0
        self._lanes: dict[str, collections.deque[int]] = {}  # lane -> its ids, oldest first
        self._count = 0
        self._bytes = 0
        self._warned = False
        for event_id, lane, size in self._db.execute(
            "SELECT id, lane, size FROM events ORDER BY id"
        ):
            self._index(int(event_id), str(lane), int(size))
        self._full_level: int | None = None  # events held when the disk filled up
        self._make_reserve()

    def _migrate_old_rows(self) -> None:
        rows = self._db.execute("SELECT id, body FROM events WHERE size = 0").fetchall()
        for event_id, body in rows:
            self._db.execute(
                "UPDATE events SET size = ?, lane = ? WHERE id = ?",
                (len(body.encode()), _lane(body), event_id),
            )

    # -- disk reserve ---------------------------------------------------------------------------

    def _make_reserve(self) -> bool:
        if self.reserve_bytes <= 0 or self._reserve.exists():
            return True
        self._reserve_tried = time.monotonic()
        try:
            with self._reserve.open("wb") as f:
                f.write(b"\0" * self.reserve_bytes)
                f.flush()
                os.fsync(f.fileno())
        except OSError:
            with contextlib.suppress(OSError):
                self._reserve.unlink()
            return False
        return True

    def _accepting(self) -> bool:
        """After the disk filled up, take events again once the spool has drained to half of
        what it held then (its free pages are room again) and the reserve could be rewritten."""
        if self.reserve_bytes <= 0 or self._reserve.exists():
            return True
        if self._full_level is not None and self._count > self._full_level // 2:
            return False
        if time.monotonic() - self._reserve_tried < self.reserve_retry:
            return False
        self._reserve_tried = time.monotonic()
        with contextlib.suppress(sqlite3.Error):  # give the emptied pages back to the disk
            self._db.executescript("PRAGMA incremental_vacuum;")  # execute() frees one page
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        if shutil.disk_usage(self.path.parent).free < self.reserve_bytes + self._headroom:
            return False
        if not self._make_reserve():
            return False
        self._full_level = None
        log.info("spool disk has room again: accepting events")
        return True

    def _drop_reserve(self) -> bool:
        try:
            self._reserve.unlink()
        except FileNotFoundError:
            return False
        log.error("spool disk %s is full: released the reserve; not accepting events", self.path)
        return True

    def _write(self, sql: str, params: tuple[object, ...]) -> sqlite3.Cursor:
        """Run a write; on a full disk give back the reserve once and try again (inside a
        transaction the error goes to `_transaction`, which runs it all again)."""
        inside = self._db.in_transaction
        try:
            return self._db.execute(sql, params)
        except sqlite3.OperationalError as exc:
            if not _is_full(exc) or inside:
                raise
            if self._full_level is None:
                self._full_level = self._count
            if not self._drop_reserve():
                raise
            return self._db.execute(sql, params)

    def _transaction(self, body: Callable[[], object]) -> None:
        """Run `body` in one transaction; when the disk is full (at any statement or at the
        commit), give back the reserve once and run it again."""
        for last in (False, True):
            try:
                self._db.execute("BEGIN IMMEDIATE")
                body()
                self._db.execute("COMMIT")
                return
            except BaseException as exc:
                if self._db.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        self._db.execute("ROLLBACK")
                self._book.resync()  # its counts include what was rolled back
                full = isinstance(exc, sqlite3.OperationalError) and _is_full(exc)
                if not full or last:
                    raise
                if self._full_level is None:
                    self._full_level = self._count
                if not self._drop_reserve():
                    raise

    # -- bounds ---------------------------------------------------------------------------------

    def _ratio(self, count: int, size: int) -> float:
        ratios = [0.0]
        if self.max_events:
            ratios.append(count / self.max_events)
        if self.max_bytes:
            ratios.append(size / self.max_bytes)
        return max(ratios)

    def _check_level(self) -> None:
        ratio = self._ratio(self._count, self._bytes)
        if ratio >= self.warn_ratio and not self._warned:
            self._warned = True
            log.warning(
                "spool is %.0f%% full (%d events, %d bytes; bound %s events, %s bytes): the sink "
                "is not keeping up; new events get 503 once it is full",
                ratio * 100,
                self._count,
                self._bytes,
                self.max_events or "-",
                self.max_bytes or "-",
            )
        elif ratio < self.warn_ratio * 0.75 and self._warned:
            self._warned = False
            log.info("spool back to %.0f%% of its bound", ratio * 100)

    # -- queue ----------------------------------------------------------------------------------

    def put(
        self,
        body: str,
        run_ids: Sequence[str] = (),
        pending: int = 0,
        lane: str | None = None,
        event_type: str | None = None,
    ) -> int:
        """Store an event durably; returns its id. Raises SpoolFullError past the bound or on a
        full disk, sqlite3.Error if it could not be kept for another reason. `run_ids` are
        recorded as by `run_seen`, in the same transaction; `lane` is `events.lane_of` of the body
        (computed here when not given). `event_type`, when given, is the event's `eventType`
        ("" for none), handed to the worker with `run_ids` (it need not parse the body).

        Group commit: events put by several threads at once share one transaction, so one disk
        sync covers all of them; each put returns only after the sync that covers its event."""
        lane = _lane(body) if lane is None else lane
        entry = _Queued(body, lane, len(body.encode()), tuple(run_ids), pending, event_type)
        self._enqueue(entry)
        return entry.id

    def _enqueue(self, entry: _Queued | _Deletion) -> None:
        """Queue a put or a delete for the next group commit and return once it is committed
        (raising its error if it was refused). With no commit in flight the caller commits at
        once (its own entry and whatever queued meanwhile); otherwise it waits for the commit in
        flight, and the first waiter left over commits what queued behind it."""
        with self._queue_lock:
            self._queue.append(entry)
            lead = not self._committing
            if not lead:
                entry.waiter = waiter = _waiter()
                waiter.acquire()
            self._committing = True
        if not lead:
            # one wakeup: the leader releases it when the entry is settled, or hands it the lead
            waiter.acquire()
            lead = entry.lead and not entry.settled
            if lead:
                entry.waiter = None  # released already (to hand it the lead)
        if lead:  # commit everything queued by now (this entry too) while the others wait
            self._lead()
        if entry.error is not None:
            raise entry.error

    def _lead(self) -> None:
        """Commit what is queued (the caller was handed the lead), then hand the lead on: to the
        oldest waiting entry queued meanwhile, else to nobody; when only riding deletes were
        queued meanwhile, the next commit carries them, or the flusher (see `_flush_loop`)."""
        with self._queue_lock:
            batch, self._queue = self._queue, []
        try:
            with self._db_lock:
                self._commit_queued(batch)
        finally:
            for other in batch:
                if not other.settled:  # only when the commit raised (a BaseException)
                    other.error = other.error or RuntimeError("event not stored")
                    other.settled = True
                if other.waiter is not None:
                    other.waiter.release()
                elif isinstance(other, _Deletion) and other.riding and other.error is not None:
                    # forwarded already: a restart forwards it once more, never loses it
                    log.error(
                        "event %d was forwarded but not deleted from the spool: %s",
                        other.id,
                        other.error,
                    )
            with self._queue_lock:
                self._last_commit = time.monotonic()
                following = next((e for e in self._queue if e.waiter is not None), None)
                if following is not None:  # queued during this commit: it commits them next
                    following.lead = True
                    following.waiter.release()
                else:
                    self._committing = False
                    if self._queue:  # riding deletes only: the next commit or the flusher's
                        self._flush_wanted.set()

    def _flush_loop(self) -> None:
        """Commit riding deletes left on the queue once the writer has been idle for
        FLUSH_DELAY: while events arrive, their puts carry the deletes (no commit of their own)."""
        while True:
            self._flush_wanted.wait()
            if self._closing:
                return
            time.sleep(FLUSH_DELAY)
            with self._queue_lock:
                idle = not self._committing and time.monotonic() - self._last_commit >= FLUSH_DELAY
                lead = idle and bool(self._queue)
                if lead:
                    self._committing = True
                if idle or not self._queue:  # else look again after another FLUSH_DELAY
                    self._flush_wanted.clear()
            if lead:
                self._lead()

    def _commit_queued(self, batch: Sequence[_Queued | _Deletion]) -> None:
        """One transaction (at most one disk sync) for the queued puts and deletes. Caller holds
        _db_lock. A batch with puts is committed with synchronous=FULL (the 201s wait for it); a
        batch of deletes only is not synced on its own (see `done`)."""
        puts = [e for e in batch if isinstance(e, _Queued)]
        deletes = [e for e in batch if isinstance(e, _Deletion)]
        self._synchronous(durable=bool(puts))
        count, size = self._count, self._bytes
        stored: list[_Queued] = []
        recorded: set[str] = set()
        try:
            accepting = self._accepting() if puts else True
            self._db.execute("BEGIN IMMEDIATE")
            for entry in puts:
                try:
                    self._admit(count + 1, size + entry.size, accepting)
                except SpoolFullError as exc:
                    entry.error = exc
                    continue
                entry.id = self._insert(entry.body, entry.lane, entry.size)
                runs = self._unseen(entry.run_ids, entry.pending)
                if not entry.pending:
                    runs = [r for r in runs if r not in recorded]
                self._book.record(runs, entry.pending)
                recorded.update(runs)
                stored.append(entry)
                count, size = count + 1, size + entry.size
            recorded.update(self._delete_rows(deletes))
            self._db.execute("COMMIT")
        except BaseException as exc:
            # nothing of this batch is kept: every put of it fails (the senders retry)
            if self._db.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    self._db.execute("ROLLBACK")
            self._book.resync()
            full = isinstance(exc, SpoolFullError) or (
                isinstance(exc, sqlite3.OperationalError) and _is_full(exc)
            )
            if full:
                self._full_level = self._count  # the commit itself found the disk full
                self._drop_reserve()
                exc = SpoolFullError("spool disk is full; retry later")
            for put in puts:
                put.error = put.error or _batch_error(exc)
                put.settled = True
            if full and deletes and isinstance(exc, Exception):
                # deletes make room: run them again on their own (the reserve was given back)
                self._commit_deletes_alone(deletes)
            else:
                for deletion in deletes:
                    deletion.error = _batch_error(exc)
                    deletion.settled = True
            if not isinstance(exc, Exception):
                raise
            return
        self._known_runs.update(recorded)
        with self._lock:
            for entry in stored:
                self._index(entry.id, entry.lane, entry.size)
                if entry.event_type is not None:
                    self._remember(entry)
            for deletion in deletes:
                self._unindex(deletion.id)
            # one waiting worker per lane that got a claimable event, at most (waking them all
            # costs a GIL handoff each; a lane a worker holds is gone on with by that worker),
            # and none while a worker that will be back within HELPER_AFTER can take them
            fresh = {entry.lane for entry in stored if entry.lane not in self._busy}
            if fresh and not self._engaged():
                self._changed.notify(len(fresh))
            if deletes and not self._count:
                self._emptied.notify_all()
        for settled in batch:
            settled.settled = True

    def _delete_rows(self, deletes: Sequence[_Deletion]) -> set[str]:
        """DELETE the events and count their runs down (inside the caller's transaction); the
        runs recorded."""
        recorded: set[str] = set()
        for deletion in deletes:
            self._db.execute("DELETE FROM events WHERE id = ?", (deletion.id,))
            runs = self._unseen(deletion.run_ids, deletion.pending)
            if not deletion.pending:
                runs = [r for r in runs if r not in recorded]
            self._book.record(runs, deletion.pending)
            recorded.update(runs)
        return recorded

    def _commit_deletes_alone(self, deletes: Sequence[_Deletion]) -> None:
        recorded: set[str] = set()
        self._synchronous(durable=False)

        def delete() -> None:
            recorded.clear()
            recorded.update(self._delete_rows(deletes))

        try:
            self._transaction(delete)
        except Exception as exc:
            for deletion in deletes:
                deletion.error = _batch_error(exc)
                deletion.settled = True
            return
        self._known_runs.update(recorded)
        with self._lock:
            for deletion in deletes:
                self._unindex(deletion.id)
            if not self._count:
                self._emptied.notify_all()
        for deletion in deletes:
            deletion.settled = True

    def _unseen(self, run_ids: Sequence[str], pending: int) -> list[str]:
        """Runs to write: all of them when the pending count changes, else those not recorded
        yet by this process (a START, RUNNING or FAIL only makes a run known)."""
        if pending:
            return list(run_ids)
        if len(self._known_runs) > 100_000:
            self._known_runs.clear()
        return [r for r in run_ids if r not in self._known_runs]

    def _admit(self, count: int, size: int, accepting: bool) -> None:
        """Raise SpoolFullError when holding `count` events of `size` bytes would pass the bound,
        or while the disk is full (`accepting`: `_accepting()`, asked outside the transaction:
        it may vacuum and checkpoint)."""
        if self._ratio(count, size) > 1.0:
            raise SpoolFullError(
                f"spool full ({self._count} events, {self._bytes} bytes); retry later"
            )
        if not accepting:
            raise SpoolFullError("spool disk is full; retry later")

    def _insert(self, body: str, lane: str, size: int) -> int:
        """INSERT the event (in the caller's transaction; it calls _counted after the commit)."""
        try:
            cur = self._db.execute(
                "INSERT INTO events (body, received, lane, kind, size) VALUES (?, ?, ?, ?, ?)",
                (body, time.time(), lane, EVENT, size),
            )
        except sqlite3.OperationalError as exc:
            if _is_full(exc):
                self._full_level = self._count
                self._drop_reserve()
                raise SpoolFullError("spool disk is full; retry later") from exc
            raise
        return int(cur.lastrowid or 0)

    def _synchronous(self, durable: bool) -> None:
        """FULL: the commit is on disk when it returns (events taken). NORMAL (WAL): it is on
        disk with the next FULL commit or checkpoint; used where losing the last changes in a
        power cut only repeats work (a delete after forwarding: the event is sent again)."""
        if durable != self._durable:
            self._db.execute(f"PRAGMA synchronous={'FULL' if durable else 'NORMAL'}")
            self._durable = durable

    # -- what is held, in memory (caller holds _lock) ------------------------------------------

    def _index(self, event_id: int, lane: str, size: int) -> None:
        self._events[event_id] = (lane, size)
        self._lanes.setdefault(lane, collections.deque()).append(event_id)  # ids only grow
        self._count += 1
        self._bytes += size
        self._check_level()

    def _remember(self, entry: _Queued) -> None:
        if self._memory_bytes + entry.size <= MEMORY_BYTES:
            self._memory[entry.id] = (entry.body, entry.event_type or "", entry.run_ids, entry.size)
            self._memory_bytes += entry.size

    def _forget(self, event_id: int) -> None:
        kept = self._memory.pop(event_id, None)
        if kept is not None:
            self._memory_bytes -= kept[3]

    def _unindex(self, event_id: int) -> None:
        self._forget(event_id)
        known = self._events.pop(event_id, None)
        if known is None:
            return
        lane, size = known
        ids = self._lanes[lane]
        if ids[0] == event_id:
            ids.popleft()
        else:
            ids.remove(event_id)
        if not ids:
            del self._lanes[lane]
        self._count -= 1
        self._bytes -= size
        self._check_level()

    def _resize(self, event_id: int, size: int) -> None:
        known = self._events.get(event_id)
        if known is not None:
            self._events[event_id] = (known[0], size)
            self._bytes += size - known[1]
            self._check_level()

    # -- workers --------------------------------------------------------------------------------

    def next(self, timeout: float | None = None) -> SpooledEvent | None:
        """The oldest event not yet forwarded, whatever its lane (not claimed)."""
        return self._take(timeout, claim=False)

    def claim(self, timeout: float | None = None) -> SpooledEvent | None:
        """The oldest event of a lane nobody holds, and hold its lane until `release`."""
        return self._take(timeout, claim=True)

    def claim_next(self, lane: str) -> SpooledEvent | None:
        """For a worker holding `lane` and done with its event: the lane's next event, the lane
        still held (no handoff to another thread: a run's events go out back to back); None, the
        lane released, when it has nothing claimable now."""
        with self._lock:
            ids = self._lanes.get(lane)
            head = ids[0] if ids else None
            if head is not None and any(
                held_lane == lane and head >= held_id for held_id, held_lane in self._held.items()
            ):
                head = None  # at or behind a follow-up waiting for its evaluation
            if head is None:  # nothing of the lane is claimable: no other worker to wake
                self._let_go(lane)
                return None
            self._took(lane)
        event = self._read(head)
        if event is None:  # gone meanwhile
            self.release(lane)
        return event

    def _read(self, event_id: int) -> SpooledEvent | None:
        with self._lock:
            kept = self._memory.get(event_id)
            known = self._events.get(event_id)
        if kept is not None and known is not None:  # as received, never attempted
            body, event_type, run_ids, _ = kept
            return SpooledEvent(event_id, body, False, 0, known[0], EVENT, event_type, run_ids)
        with self._reader_lock:
            row = self._reader.execute(
                f"SELECT {_ROW} FROM events WHERE id = ?", (event_id,)
            ).fetchall()
        if not row:
            return None
        r = row[0]
        return SpooledEvent(int(r[0]), str(r[1]), bool(r[2]), int(r[3]), str(r[4]), r[5])

    def _take(self, timeout: float | None, claim: bool) -> SpooledEvent | None:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            with self._lock:
                while True:
                    event_id = self._claimable() if claim else self._oldest()
                    if event_id is not None:
                        lane = self._events[event_id][0]
                        if claim:
                            self._took(lane)
                        break
                    remaining = None if deadline is None else deadline - time.monotonic()
                    if remaining is not None and remaining <= 0:
                        return None
                    self._worker.took = None  # idle from now on: not slow
                    self._changed.wait(remaining)
            event = self._read(event_id)
            if event is not None:
                return event
            # gone meanwhile (next() does not hold the lane): look again
            log.debug("event %d left the spool before it was read", event_id)
            if claim:
                self.release(lane)

    def _oldest(self) -> int | None:
        heads = [ids[0] for ids in self._lanes.values()]
        return min(heads) if heads else None

    def _claimable(self) -> int | None:
        """The oldest event of a lane no worker holds, and not at or behind a held follow-up."""
        held: dict[str, int] = {}
        for held_id, lane in self._held.items():
            held[lane] = min(held_id, held.get(lane, held_id))
        best = None
        for lane, ids in self._lanes.items():
            if lane in self._busy:
                continue
            head = ids[0]
            if lane in held and head >= held[lane]:
                continue
            if best is None or head < best:
                best = head
        return best

    def release(self, lane: str) -> None:
        with self._lock:
            self._let_go(lane)
            self._changed.notify()  # the lane's next event is one event for one worker

    def park(self, lane: str) -> None:
        """The worker holding `lane` waits (for an evaluation, or before retrying its sink): it
        is not coming back soon, so another lane's event wakes another worker (one is woken now
        if such an event waits)."""
        with self._lock:
            self._parked.add(lane)
            if self._claimable() is not None:
                self._changed.notify()

    @contextlib.contextmanager
    def parked(self, lane: str) -> Iterator[None]:
        """`park(lane)` for the time of the `with` block, then `unpark(lane)`."""
        self.park(lane)
        try:
            yield
        finally:
            self.unpark(lane)

    def unpark(self, lane: str) -> None:
        with self._lock:
            self._parked.discard(lane)
            if lane in self._busy:
                self._busy[lane] = time.monotonic()

    def _took(self, lane: str) -> None:
        """The calling worker took an event of `lane`, which it holds from now on (caller holds
        _lock). When its previous one kept it longer than `helper_after` (a slow sink) and
        another lane has an event waiting, a second worker is woken for it: events already
        spooled (a backlog after an outage or a restart) are not forwarded one at a time to a
        slow sink."""
        now = time.monotonic()
        before: float | None = getattr(self._worker, "took", None)
        self._worker.took = now
        self._busy[lane] = now
        slow = before is not None and now - before > self.helper_after
        if slow and self._claimable() is not None:
            self._changed.notify()

    def _let_go(self, lane: str) -> None:
        self._busy.pop(lane, None)
        self._parked.discard(lane)

    def _engaged(self) -> bool:
        """A worker took its event less than `helper_after` ago and waits for nothing: it will
        be back for more soon (caller holds _lock)."""
        recent = time.monotonic() - self.helper_after
        return any(t >= recent for lane, t in self._busy.items() if lane not in self._parked)

    def replace(self, event_id: int, body: str) -> None:
        """Keep the enriched body in place of the received one."""
        size = len(body.encode())
        with self._db_lock:
            self._synchronous(durable=False)  # lost in a power cut: evaluated again
            try:
                self._write(
                    "UPDATE events SET body = ?, enriched = 1, size = ? WHERE id = ?",
                    (body, size, event_id),
                )
            finally:
                self._synchronous(durable=True)
            with self._lock:
                self._forget(event_id)
                self._resize(event_id, size)

    def hand_over(self, event_id: int, body: str, late_body: str) -> int:
        """In one transaction: keep `body` as event `event_id`'s enriched body, and add the
        follow-up `late_body` (not yet evaluated) after it in the same lane. The follow-up, and so
        the rest of its lane, is held until `unhold` (its evaluation ended)."""
        size, late_size = len(body.encode()), len(late_body.encode())
        with self._db_lock:
            with self._lock:
                known = self._events.get(event_id)
            if known is None:
                raise KeyError(f"no event {event_id} in the spool")
            lane = known[0]
            late: list[int] = []

            def write() -> None:
                late.clear()
                self._write(
                    "UPDATE events SET body = ?, enriched = 1, size = ? WHERE id = ?",
                    (body, size, event_id),
                )
                cur = self._write(
                    "INSERT INTO events (body, received, lane, kind, size) VALUES (?, ?, ?, ?, ?)",
                    (late_body, time.time(), lane, LATE, late_size),
                )
                late.append(int(cur.lastrowid or 0))

            self._transaction(write)
            late_id = late[0]
            with self._lock:
                self._forget(event_id)
                self._resize(event_id, size)
                self._held[late_id] = lane  # before any worker can see it
                self._index(late_id, lane, late_size)
                self._changed.notify_all()
            return late_id

    def unhold(self, event_id: int) -> None:
        with self._lock:
            self._held.pop(event_id, None)
            self._changed.notify_all()

    def attempted(self, event_id: int) -> None:
        with self._lock:
            self._forget(event_id)  # read from the database from now on (with its attempts)
        with self._db_lock, contextlib.suppress(sqlite3.OperationalError):
            self._db.execute("UPDATE events SET attempts = attempts + 1 WHERE id = ?", (event_id,))

    def done(self, event_id: int, run_ids: Sequence[str] = (), pending: int = 0) -> None:
        """The event was forwarded (or is not needed any more): delete it, and record `run_ids`
        as by `run_seen` in the same transaction. With a commit in flight, returns at once: the
        delete rides with the commit after it (with the next puts, or on its own once the writer
        has been idle for FLUSH_DELAY), and the event is not claimable from now on; the worker
        goes on forwarding instead of waiting for the writer. Otherwise it commits at once,
        without a sync (see `_synchronous`). Either way, after a crash or a power cut before
        that commit the event is forwarded once more, never lost."""
        deletion = _Deletion(event_id, tuple(run_ids), pending)
        with self._queue_lock:
            deletion.riding = self._committing
            if deletion.riding:
                deletion.settled = True  # nobody waits for it
                self._queue.append(deletion)
                if self._flusher.ident is None:  # not started yet
                    self._flusher.start()
        if not deletion.riding:
            self._enqueue(deletion)
            return
        with self._lock:  # not claimable from now on, though its delete is not committed yet
            self._unindex(event_id)
            if not self._count:
                self._emptied.notify_all()

    def run_seen(self, run_ids: Sequence[str], pending: int) -> None:
        """Record runs (a run and its parent) and how many COMPLETE events of them wait."""
        with self._db_lock:
            runs = self._unseen(run_ids, pending)
            self._transaction(lambda: self._book.record(runs, pending))
            self._known_runs.update(runs)

    def add_verdicts(self, run_ids: Sequence[str], body: str) -> None:
        with self._db_lock:
            self._transaction(lambda: self._book.add_verdicts(run_ids, body))

    def run_report(self, run_id: str) -> tuple[int, list[str]] | None:
        """(COMPLETE events still waiting, verdict bodies) of a run; None when unknown."""
        with self._db_lock:
            return self._book.report(run_id)

    def mark_run_failed(self, run_id: str) -> None:
        with self._db_lock:
            self._transaction(lambda: self._book.mark_failed(run_id))

    def run_failed(self, run_id: str) -> bool:
        with self._db_lock:
            return self._book.failed(run_id)

    def dead_letter(self, event_id: int, reason: str) -> None:
        """Move an event the sink keeps refusing out of its lane into `dead_letters`, in one
        transaction: its run's later events go on, and nothing is lost."""
        with self._db_lock:
            row = self._db.execute(
                "SELECT body, lane, kind, attempts, received, size FROM events WHERE id = ?",
                (event_id,),
            ).fetchone()
            if row is None:
                return

            def move() -> None:
                self._write(
                    "INSERT OR REPLACE INTO dead_letters "
                    "(id, body, lane, kind, attempts, reason, received, dead) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (event_id, row[0], row[1], row[2], row[3], reason[:2000], row[4], time.time()),
                )
                self._write("DELETE FROM events WHERE id = ?", (event_id,))

            self._transaction(move)
            with self._lock:
                self._unindex(event_id)
                self._changed.notify_all()
                if not self._count:
                    self._emptied.notify_all()

    def dead_letters(self) -> list[DeadLetter]:
        with self._db_lock:
            rows = self._db.execute(
                "SELECT id, body, lane, attempts, reason, dead FROM dead_letters ORDER BY id"
            ).fetchall()
        return [DeadLetter(int(r[0]), r[1], r[2], int(r[3]), r[4], float(r[5])) for r in rows]

    def retry_dead_letter(self, event_id: int) -> int:
        """Put a dead letter back at the end of its lane (after the run's later events); the new
        spool id. KeyError when there is no such dead letter."""
        with self._db_lock:
            row = self._db.execute(
                "SELECT body, lane, kind, received FROM dead_letters WHERE id = ?", (event_id,)
            ).fetchone()
            if row is None:
                raise KeyError(event_id)
            size = len(str(row[0]).encode())
            new_id: list[int] = []

            def move_back() -> None:
                new_id.clear()
                cur = self._write(
                    "INSERT INTO events (body, enriched, received, lane, kind, size) "
                    "VALUES (?, 1, ?, ?, ?, ?)",
                    (row[0], row[3], row[1], row[2], size),
                )
                self._write("DELETE FROM dead_letters WHERE id = ?", (event_id,))
                new_id.append(int(cur.lastrowid or 0))

            self._transaction(move_back)
            with self._lock:
                self._index(new_id[0], str(row[1]), size)
                self._changed.notify_all()
            return new_id[0]

    def purge_dead_letters(self, event_ids: list[int] | None = None) -> int:
        """Delete the given dead letters (all when None); how many were deleted."""
        with self._db_lock:
            if event_ids is None:
                cur = self._write("DELETE FROM dead_letters", ())
            else:
                marks = ",".join("?" for _ in event_ids)
                sql = f"DELETE FROM dead_letters WHERE id IN ({marks})"
                cur = self._write(sql, tuple(event_ids))
            return int(cur.rowcount)

    def pending(self) -> int:
        """Events not forwarded yet."""
        with self._lock:
            return self._count

    def usage(self) -> tuple[int, int]:
        """(events, bytes) held now."""
        with self._lock:
            return self._count, self._bytes

    def wait_empty(self, timeout: float) -> bool:
        """Wait until every event was forwarded, and its delete committed."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while self._count:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._emptied.wait(min(remaining, 0.5))
        return self._wait_committed(deadline)

    def _wait_committed(self, deadline: float) -> bool:
        """Wait (until `deadline`, monotonic) until no commit is in flight and nothing is
        queued: riding deletes are in the database."""
        while True:
            with self._queue_lock:
                if not self._committing and not self._queue:
                    return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.001)

    def wake(self) -> None:
        with self._lock:
            self._changed.notify_all()

    def close(self) -> None:
        """Close the database, after the deletes riding on a commit are committed (for at most
        a few seconds: what is left is forwarded once more after a restart)."""
        self._wait_committed(time.monotonic() + 5.0)
        with self._queue_lock:
            self._closing = True
            if self._flusher.ident is not None:
                self._flush_wanted.set()  # let it end (it commits nothing: the queue is empty)
        with self._db_lock:
            self._db.close()
            with self._reader_lock:
                self._reader.close()
