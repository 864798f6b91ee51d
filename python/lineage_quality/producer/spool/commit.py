"""Group commit: puts (new events) and deletes (forwarded events) share transactions, so one disk
sync covers every event put by several threads at once, and deletes cost no commit of their own.

- **One queue, one leader.** A put or a delete appends to one queue. With no commit in flight the
  caller commits at once (its entry and whatever queued meanwhile); otherwise it sleeps until the
  commit in flight ends, and the oldest entry queued behind it commits everything queued by then,
  in one transaction. Each put returns only after the sync that covers its event.
- **One wakeup per waiter.** Each waiting put or delete sleeps on a lock of its own (`_waiter`),
  released once by the thread that committed it (or to hand it the next commit).
- **Deletes ride.** A delete that finds a commit in flight queues itself and returns at once (the
  event is out of the lanes at once, never handed out again); the next commit carries it. When
  only such deletes are left, the flusher commits them once the writer has been idle for
  FLUSH_DELAY, so a busy receiver's next put carries them instead. A batch with at least one event
  is committed with `synchronous=FULL` (its deletes are synced with it); a batch of deletes only
  with `synchronous=NORMAL`: a power cut can only make those events go out again.
- **A full disk still lets deletes through.** When a batch fails on a full disk, the reserve is
  given back, its puts fail (`SpoolFullError`: the receiver answers 503) and its deletes are
  committed again on their own (they free room).
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Sequence
from typing import Any

import attrs

from lineage_quality.producer.spool.index import Index, Kept
from lineage_quality.producer.spool.lanes import Lanes
from lineage_quality.producer.spool.reserve import is_full
from lineage_quality.producer.spool.run_book import RecentRuns, RunBook
from lineage_quality.producer.spool.store import SpoolFullError, Store

log = logging.getLogger(__name__)

# How long the writer must have been idle before the flusher commits riding deletes on their own:
# while events arrive, their commits carry the deletes instead.
FLUSH_DELAY = 0.005
# Runs of events written through (no put to carry them) are recorded at most this often: one
# commit for every run seen meanwhile, instead of a commit every FLUSH_DELAY (a third of the
# write-through path's CPU when each commit held a run or two).
RUNS_DELAY = 0.1


@attrs.define
class Put:
    """A put waiting for its group commit; settled once committed (or refused: `error`)."""

    body: str
    lane: str
    size: int
    run_ids: tuple[str, ...]
    pending: int
    event_type: str | None = None
    event: Any = None  # the event parsed, kept in memory with the body (index.Kept)
    refused: int = 0  # refusals for good by the sink already (a write-through attempt)
    id: int = 0
    error: BaseException | None = None
    settled: bool = False
    lead: bool = False  # handed the commit of what queued behind the last batch
    waiter: Any = None  # a held _waiter() while waiting; released once, by the leader
    # the puts queued with it by `put_many` (it among them): admitted all or none
    together: list[Put] | None = None


@attrs.define
class Delete:
    """A delete of a forwarded event waiting for its group commit; with `id` 0 (RUNS_ONLY), no
    event to delete, only its runs to record (an event forwarded without the spool)."""

    id: int
    run_ids: tuple[str, ...]
    pending: int
    error: BaseException | None = None
    settled: bool = False
    lead: bool = False  # handed the commit of what queued behind the last batch
    waiter: Any = None  # a held _waiter() while waiting; released once, by the leader
    riding: bool = False  # queued behind a commit in flight; nobody waits for it


RUNS_ONLY = 0  # a Delete's id when there is no event to delete (ids start at 1)

_waiter = threading.Lock  # what a waiting put or delete sleeps on (held, released once)


def _batch_error(exc: BaseException) -> BaseException:
    # each failed put raises its own exception object (they are raised in several threads)
    if isinstance(exc, SpoolFullError):
        return SpoolFullError(str(exc))
    if isinstance(exc, sqlite3.Error):
        return sqlite3.OperationalError(f"event not stored: {exc}")
    return RuntimeError(f"event not stored: {exc!r}")


class GroupCommit:
    """The queue of puts and deletes of one spool, and the batch writer that commits them. The
    batch writer holds the store's `db_lock`, then the index's lock (the lock order)."""

    def __init__(
        self, store: Store, index: Index, lanes: Lanes, book: RunBook, recent: RecentRuns
    ) -> None:
        self.store = store
        self.index = index
        self.lanes = lanes
        self.book = book
        self.recent = recent
        self._queue: list[Put | Delete] = []  # puts and deletes waiting to be committed
        self._queue_lock = threading.Lock()  # guards _queue, _committing, _last_commit: a leaf
        self._committing = False  # a thread is committing (its batch is off the queue)
        # The flusher commits riding deletes that no put came to carry; the thread ending a
        # commit sets this when only such deletes are left on the queue.
        self._flush_wanted = threading.Event()
        self._last_commit = 0.0  # monotonic time the last commit ended
        self._closing = False
        self._flusher = threading.Thread(
            target=self._flush_loop, name="lq-spool-flush", daemon=True
        )

    # -- queueing -------------------------------------------------------------------------------

    def put(self, entry: Put) -> int:
        """Store `entry` durably (see the module docstring); its id. Raises its error."""
        self._enqueue(entry)
        return entry.id

    def put_many(self, entries: list[Put]) -> list[int]:
        """Store `entries` durably in one commit (one disk sync), in their order, all or none:
        their ids. Raises the error that refused them (`SpoolFullError` at the bound: none is
        kept)."""
        if not entries:
            return []
        for entry in entries:
            entry.together = entries
        # queued as one entry's waiting: the queue takes them whole into one batch
        self._enqueue(entries[0], entries[1:])
        return [entry.id for entry in entries]

    def delete(self, deletion: Delete, ride: bool = False) -> None:
        """Delete a forwarded event: with a commit in flight (or `ride`: the caller never waits
        for a commit, e.g. the thread serving Kafka's delivery reports), queue it to ride with
        the next commit and return at once (the event is out of its lane now); otherwise commit
        at once."""
        with self._queue_lock:
            deletion.riding = self._committing or ride
            if deletion.riding:
                deletion.settled = True  # nobody waits for it
                self._queue.append(deletion)
                if self._flusher.ident is None:  # not started yet
                    self._flusher.start()
                if not self._committing:  # nobody's commit carries it: the flusher's
                    self._flush_wanted.set()
        if not deletion.riding:
            self._enqueue(deletion)
            return
        with self.index.lock:  # not claimable from now on, though its delete is not committed
            self.index.remove(deletion.id)
            self.lanes.removed()

    def ride(self, deletion: Delete) -> None:
        """Queue `deletion` (runs to record, RUNS_ONLY) for the next commit, whoever makes it:
        a put's, or the flusher's within RUNS_DELAY; returns at once. Lost in a crash before that
        commit: only the record that these runs were seen."""
        deletion.riding = deletion.settled = True
        with self._queue_lock:
            self._queue.append(deletion)
            if self._flusher.ident is None:  # not started yet
                self._flusher.start()
            if not self._committing:
                self._flush_wanted.set()

    def _enqueue(self, entry: Put | Delete, riders: Sequence[Put] = ()) -> None:
        """Queue a put or a delete (and `riders`, right behind it: put_many) for the next group
        commit and return once it is committed (raising its error if it was refused). With no
        commit in flight the caller commits at once; otherwise it waits for the commit in
        flight, and the first waiter left over commits what queued behind it."""
        with self._queue_lock:
            self._queue.append(entry)
            self._queue.extend(riders)
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
        queued meanwhile, the next commit carries them, or the flusher."""
        with self._queue_lock:
            batch, self._queue = self._queue, []
        try:
            with self.store.db_lock:
                self._commit_batch(batch)
        finally:
            for other in batch:
                if not other.settled:  # only when the commit raised (a BaseException)
                    other.error = other.error or RuntimeError("event not stored")
                    other.settled = True
                if other.waiter is not None:
                    other.waiter.release()
                elif isinstance(other, Delete) and other.riding and other.error is not None:
                    if other.id == RUNS_ONLY:
                        log.warning("could not record runs %s: %s", other.run_ids, other.error)
                        continue
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
                runs_only = all(isinstance(e, Delete) and e.id == RUNS_ONLY for e in self._queue)
            if runs_only and not self._closing:
                time.sleep(RUNS_DELAY - FLUSH_DELAY)
            with self._queue_lock:
                idle = not self._committing and time.monotonic() - self._last_commit >= FLUSH_DELAY
                lead = idle and bool(self._queue)
                if lead:
                    self._committing = True
                if idle or not self._queue:  # else look again after another FLUSH_DELAY
                    self._flush_wanted.clear()
            if lead:
                self._lead()

    def wait_committed(self, deadline: float) -> bool:
        """Wait (until `deadline`, monotonic) until no commit is in flight and nothing is
        queued: riding deletes are in the database."""
        while True:
            with self._queue_lock:
                if not self._committing and not self._queue:
                    return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.001)

    def close(self) -> None:
        """Let the flusher end (after `wait_committed`: it has nothing left to commit)."""
        with self._queue_lock:
            self._closing = True
            if self._flusher.ident is not None:
                self._flush_wanted.set()

    # -- the batch writer (caller holds the store's db_lock) ------------------------------------

    def _commit_batch(self, batch: Sequence[Put | Delete]) -> None:
        """One transaction (at most one disk sync) for the queued puts and deletes. A batch with
        puts is committed with synchronous=FULL (the 201s wait for it); a batch of deletes only
        is not synced on its own."""
        store, index = self.store, self.index
        puts = [e for e in batch if isinstance(e, Put)]
        deletes = [e for e in batch if isinstance(e, Delete)]
        store.synchronous(durable=bool(puts))
        count, size = index.count, index.bytes
        stored: list[Put] = []
        recorded: set[str] = set()
        try:
            accepting = store.reserve.accepting() if puts else True
            store.db.execute("BEGIN IMMEDIATE")
            for entry in puts:
                group = entry.together
                if entry.error is not None:  # its group was refused
                    continue
                try:
                    if group is None:
                        index.admit(count + 1, size + entry.size)
                    elif entry is group[0]:  # the group's room at once: all or none
                        index.admit(count + len(group), size + sum(e.size for e in group))
                    if not accepting:
                        raise SpoolFullError("spool disk is full; retry later")
                except SpoolFullError as exc:
                    for refused in group or [entry]:
                        refused.error = exc
                    continue
                entry.id = self._insert(entry.body, entry.lane, entry.size)
                runs = self.recent.unseen(entry.run_ids, entry.pending)
                if not entry.pending:
                    runs = [r for r in runs if r not in recorded]
                self.book.record(runs, entry.pending)
                recorded.update(runs)
                stored.append(entry)
                count, size = count + 1, size + entry.size
            recorded.update(self._delete_rows(deletes))
            store.db.execute("COMMIT")
        except BaseException as exc:
            # nothing of this batch is kept: every put of it fails (the senders retry)
            store.rollback()
            full = isinstance(exc, SpoolFullError) or is_full(exc)
            if full:
                store.reserve.give_back(always_note=True)  # the commit itself found it full
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
        self.recent.update(recorded)
        with index.lock:
            for entry in stored:
                index.add(entry.id, entry.lane, entry.size)
                if entry.event_type is not None:
                    index.remember(
                        entry.id,
                        Kept(
                            entry.body,
                            entry.event_type,
                            entry.run_ids,
                            entry.size,
                            entry.event,
                            entry.refused,
                        ),
                    )
            for deletion in deletes:
                index.remove(deletion.id)
            self.lanes.stored({entry.lane for entry in stored})
            if deletes:
                self.lanes.removed()
        for settled in batch:
            settled.settled = True

    def _insert(self, body: str, lane: str, size: int) -> int:
        """INSERT a put's event (in the batch's transaction); a full disk is SpoolFullError."""
        try:
            return self.store.insert(body, lane, size)
        except sqlite3.OperationalError as exc:
            if is_full(exc):
                self.store.reserve.give_back(always_note=True)
                raise SpoolFullError("spool disk is full; retry later") from exc
            raise

    def _delete_rows(self, deletes: Sequence[Delete]) -> set[str]:
        """DELETE the events and count their runs down (inside the caller's transaction); the
        runs recorded."""
        recorded: set[str] = set()
        for deletion in deletes:
            if deletion.id != RUNS_ONLY:
                self.store.db.execute("DELETE FROM events WHERE id = ?", (deletion.id,))
            runs = self.recent.unseen(deletion.run_ids, deletion.pending)
            if not deletion.pending:
                runs = [r for r in runs if r not in recorded]
            self.book.record(runs, deletion.pending)
            recorded.update(runs)
        return recorded

    def _commit_deletes_alone(self, deletes: Sequence[Delete]) -> None:
        recorded: set[str] = set()
        self.store.synchronous(durable=False)

        def delete() -> None:
            recorded.clear()
            recorded.update(self._delete_rows(deletes))

        try:
            self.store.transaction(delete)
        except Exception as exc:
            for deletion in deletes:
                deletion.error = _batch_error(exc)
                deletion.settled = True
            return
        self.recent.update(recorded)
        with self.index.lock:
            for deletion in deletes:
                self.index.remove(deletion.id)
            self.lanes.removed()
        for deletion in deletes:
            deletion.settled = True
