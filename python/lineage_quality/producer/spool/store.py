"""The spool's SQLite database: schema and migration of the `events` table, the writer and reader
connections, and the two ways every change is written (`write`, `transaction`), both of which
give back the disk-full reserve once when the disk is full and try again.

WAL mode, `synchronous=FULL`: a commit is on disk when it returns, so an event is durable before
the receiver answers 201. Writes that only repeat work when lost in a power cut (a delete after
forwarding, an enriched body) switch to `synchronous=NORMAL` for their commit (`synchronous`).
Workers read events on a connection of their own (`read`): a WAL reader is not blocked by the
writer's commit (its disk sync), so forwarding goes on while events arrive.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs

from lineage_quality import rawjson
from lineage_quality.producer.events import lane_of
from lineage_quality.producer.spool.reserve import Reserve, is_full

EVENT = "event"  # an event as received
LATE = "late"  # the follow-up carrying results that came after their event was forwarded

_SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    body TEXT NOT NULL,
    enriched INTEGER NOT NULL DEFAULT 0,
    attempts INTEGER NOT NULL DEFAULT 0,
    received REAL NOT NULL
)
"""
# Columns added after the first release; older spools get them on open.
_COLUMNS = {
    "lane": "TEXT NOT NULL DEFAULT ''",
    "kind": "TEXT NOT NULL DEFAULT 'event'",
    "size": "INTEGER NOT NULL DEFAULT 0",
}
_ROW = "id, body, enriched, attempts, lane, kind"


class SpoolFullError(Exception):
    """The spool is at its bound or its disk is full; the event was not stored."""


@attrs.frozen
class SpooledEvent:
    """An event as a worker gets it from the spool."""

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
    # The event as the receiver parsed it (rawjson: numbers as written), when it was kept in
    # memory with its body; None: parse the body.
    event: Any = None
    # Refusals for good by the sink before it was spooled (its write-through attempt), counted
    # towards `dead_letter_after`; kept in memory only, as the count of refusals itself is.
    refused: int = 0


def lane_of_body(body: str) -> str:
    """`events.lane_of` of an event's JSON text; "" when it is not a JSON object."""
    try:
        event = rawjson.loads_plain(body)
    except ValueError:
        return ""
    return lane_of(event) if isinstance(event, dict) else ""


class Store:
    """The database of the spool at `path`; `held()` counts the events the spool holds (for the
    reserve, see reserve.py). `db` and everything written on it are guarded by `db_lock`; `read`
    takes `reader_lock` (a leaf: nothing else is taken while it is held)."""

    def __init__(
        self, path: Path, reserve_bytes: int, reserve_retry: float, held: Callable[[], int]
    ) -> None:
        self.path = path
        self.db_lock = threading.RLock()
        self.db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self.reserve = Reserve(path, reserve_bytes, reserve_retry, held, self._vacuum)
        # Free pages can go back to the disk after it filled up (set before the file exists).
        self.db.execute("PRAGMA auto_vacuum=INCREMENTAL")
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.durable = True  # synchronous=FULL (see `synchronous`)
        self.db.execute(f"PRAGMA wal_autocheckpoint={int(self.reserve.checkpoint_pages)}")
        self.db.execute(f"PRAGMA journal_size_limit={int(max(reserve_bytes // 2, 65536))}")
        self.db.execute(_SCHEMA)
        present = {row[1] for row in self.db.execute("PRAGMA table_info(events)")}
        for name, decl in _COLUMNS.items():
            if name not in present:
                self.db.execute(f"ALTER TABLE events ADD COLUMN {name} {decl}")
        self._migrate_old_rows()
        # (lane, id) index of older versions: the lanes are now kept in memory (index.py)
        self.db.execute("DROP INDEX IF EXISTS events_lane")
        self.reader = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self.reader.execute("PRAGMA query_only=1")
        self.reader_lock = threading.Lock()
        # called after a transaction was rolled back (the run book counts again)
        self.on_rollback: list[Callable[[], None]] = []

    def _migrate_old_rows(self) -> None:
        rows = self.db.execute("SELECT id, body FROM events WHERE size = 0").fetchall()
        for event_id, body in rows:
            self.db.execute(
                "UPDATE events SET size = ?, lane = ? WHERE id = ?",
                (len(body.encode()), lane_of_body(body), event_id),
            )

    def _vacuum(self) -> None:
        """Give the emptied pages back to the disk (after it filled up)."""
        with contextlib.suppress(sqlite3.Error):
            self.db.executescript("PRAGMA incremental_vacuum;")  # execute() frees one page
            self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def stored(self) -> Iterator[tuple[int, str, int]]:
        """(id, lane, size) of every stored event, oldest first (read once, at open)."""
        for event_id, lane, size in self.db.execute(
            "SELECT id, lane, size FROM events ORDER BY id"
        ):
            yield int(event_id), str(lane), int(size)

    def read(self, event_id: int) -> SpooledEvent | None:
        """Event `event_id` as stored; None when it is gone."""
        with self.reader_lock:
            row = self.reader.execute(
                f"SELECT {_ROW} FROM events WHERE id = ?", (event_id,)
            ).fetchall()
        if not row:
            return None
        r = row[0]
        return SpooledEvent(int(r[0]), str(r[1]), bool(r[2]), int(r[3]), str(r[4]), r[5])

    def insert(self, body: str, lane: str, size: int, kind: str = EVENT) -> int:
        """INSERT an event (in the caller's transaction); its id."""
        cur = self.db.execute(
            "INSERT INTO events (body, received, lane, kind, size) VALUES (?, ?, ?, ?, ?)",
            (body, time.time(), lane, kind, size),
        )
        return int(cur.lastrowid or 0)

    def write(self, sql: str, params: tuple[object, ...]) -> sqlite3.Cursor:
        """Run a write; on a full disk give back the reserve once and try again (inside a
        transaction the error goes to `transaction`, which runs it all again)."""
        inside = self.db.in_transaction
        try:
            return self.db.execute(sql, params)
        except sqlite3.OperationalError as exc:
            if not is_full(exc) or inside:
                raise
            if not self.reserve.give_back():
                raise
            return self.db.execute(sql, params)

    def transaction(self, body: Callable[[], object]) -> None:
        """Run `body` in one transaction; when the disk is full (at any statement or at the
        commit), give back the reserve once and run it again."""
        for last in (False, True):
            try:
                self.db.execute("BEGIN IMMEDIATE")
                body()
                self.db.execute("COMMIT")
                return
            except BaseException as exc:
                self.rollback()
                if not is_full(exc) or last or not self.reserve.give_back():
                    raise

    def rollback(self) -> None:
        """End a failed transaction: roll it back, and let those counting rows count again."""
        if self.db.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                self.db.execute("ROLLBACK")
        for hook in self.on_rollback:
            hook()

    def synchronous(self, durable: bool) -> None:
        """FULL: the commit is on disk when it returns (events taken). NORMAL (WAL): it is on
        disk with the next FULL commit or checkpoint; used where losing the last changes in a
        power cut only repeats work (a delete after forwarding: the event is sent again)."""
        if durable != self.durable:
            self.db.execute(f"PRAGMA synchronous={'FULL' if durable else 'NORMAL'}")
            self.durable = durable

    @contextlib.contextmanager
    def not_synced(self) -> Iterator[None]:
        """Writes in the block are committed with synchronous=NORMAL (see `synchronous`)."""
        self.synchronous(durable=False)
        try:
            yield
        finally:
            self.synchronous(durable=True)

    def close(self) -> None:
        with self.db_lock:
            self.db.close()
            with self.reader_lock:
                self.reader.close()
