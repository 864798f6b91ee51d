"""Durable queue of received events (SQLite, WAL, synchronous=FULL).

An event is committed here before the receiver answers 2xx; it leaves only after a sink took it.
After evaluation the enriched body replaces the raw one, so a retry never re-evaluates.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import attrs

_SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    body TEXT NOT NULL,
    enriched INTEGER NOT NULL DEFAULT 0,
    attempts INTEGER NOT NULL DEFAULT 0,
    received REAL NOT NULL
)
"""


@attrs.frozen
class SpooledEvent:
    id: int
    body: str
    enriched: bool
    attempts: int


class Spool:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute(_SCHEMA)
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)

    def put(self, body: str) -> int:
        """Store an event durably; returns its id. Raises sqlite3.Error if it could not be kept."""
        with self._lock:
            cur = self._db.execute(
                "INSERT INTO events (body, received) VALUES (?, ?)", (body, time.time())
            )
            self._changed.notify_all()
            return int(cur.lastrowid or 0)

    def next(self, timeout: float | None = None) -> SpooledEvent | None:
        """The oldest event not yet forwarded (arrival order keeps each run's order)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            while True:
                row = self._db.execute(
                    "SELECT id, body, enriched, attempts FROM events ORDER BY id LIMIT 1"
                ).fetchone()
                if row is not None:
                    return SpooledEvent(int(row[0]), str(row[1]), bool(row[2]), int(row[3]))
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return None
                self._changed.wait(remaining)

    def replace(self, event_id: int, body: str) -> None:
        with self._lock:
            self._db.execute(
                "UPDATE events SET body = ?, enriched = 1 WHERE id = ?", (body, event_id)
            )

    def attempted(self, event_id: int) -> None:
        with self._lock:
            self._db.execute("UPDATE events SET attempts = attempts + 1 WHERE id = ?", (event_id,))

    def done(self, event_id: int) -> None:
        with self._lock:
            self._db.execute("DELETE FROM events WHERE id = ?", (event_id,))
            self._changed.notify_all()

    def pending(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT count(*) FROM events").fetchone()[0])

    def wait_empty(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        with self._lock:
            while self._db.execute("SELECT count(*) FROM events").fetchone()[0]:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._changed.wait(min(remaining, 0.5))
            return True

    def wake(self) -> None:
        with self._lock:
            self._changed.notify_all()

    def close(self) -> None:
        with self._lock:
            self._db.close()
