"""Dead letters: events a sink refused again and again (a 4xx), moved out of their run's lane into
their own table, so the run's later events go on and nothing is lost. `lineage-quality
dead-letters` lists, shows, retries (back at the end of the lane) and purges them.
"""

from __future__ import annotations

import time

import attrs

from lineage_quality.producer.spool.index import Index
from lineage_quality.producer.spool.lanes import Lanes
from lineage_quality.producer.spool.store import Store

_SCHEMA = """
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
MAX_REASON = 2000  # characters of the sink's answer kept with a dead letter


@attrs.frozen
class DeadLetter:
    id: int
    body: str
    lane: str
    attempts: int
    reason: str
    dead: float  # when it was moved aside (epoch seconds)


class DeadLetters:
    """The dead letters of one spool (its store, index and lanes)."""

    def __init__(self, store: Store, index: Index, lanes: Lanes) -> None:
        self.store = store
        self.index = index
        self.lanes = lanes
        store.db.execute(_SCHEMA)

    def bury(self, event_id: int, reason: str) -> None:
        """Move event `event_id` out of its lane into the dead letters, in one transaction."""
        store = self.store
        with store.db_lock:
            row = store.db.execute(
                "SELECT body, lane, kind, attempts, received, size FROM events WHERE id = ?",
                (event_id,),
            ).fetchone()
            if row is None:
                return

            def move() -> None:
                store.write(
                    "INSERT OR REPLACE INTO dead_letters "
                    "(id, body, lane, kind, attempts, reason, received, dead) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (event_id, row[0], row[1], row[2], row[3], reason[:MAX_REASON], row[4],
                     time.time()),
                )  # fmt: skip
                store.write("DELETE FROM events WHERE id = ?", (event_id,))

            store.transaction(move)
            with self.index.lock:
                self.index.remove(event_id)
                self.lanes.wake_all()
                self.lanes.removed()

    def entries(self) -> list[DeadLetter]:
        with self.store.db_lock:
            rows = self.store.db.execute(
                "SELECT id, body, lane, attempts, reason, dead FROM dead_letters ORDER BY id"
            ).fetchall()
        return [DeadLetter(int(r[0]), r[1], r[2], int(r[3]), r[4], float(r[5])) for r in rows]

    def retry(self, event_id: int) -> int:
        """Put a dead letter back at the end of its lane (after the run's later events); the new
        spool id. KeyError when there is no such dead letter."""
        store = self.store
        with store.db_lock:
            row = store.db.execute(
                "SELECT body, lane, kind, received FROM dead_letters WHERE id = ?", (event_id,)
            ).fetchone()
            if row is None:
                raise KeyError(event_id)
            size = len(str(row[0]).encode())
            new_id: list[int] = []

            def move_back() -> None:
                new_id.clear()
                cur = store.write(
                    "INSERT INTO events (body, enriched, received, lane, kind, size) "
                    "VALUES (?, 1, ?, ?, ?, ?)",
                    (row[0], row[3], row[1], row[2], size),
                )
                store.write("DELETE FROM dead_letters WHERE id = ?", (event_id,))
                new_id.append(int(cur.lastrowid or 0))

            store.transaction(move_back)
            with self.index.lock:
                self.index.add(new_id[0], str(row[1]), size)
                self.lanes.wake_all()
            return new_id[0]

    def purge(self, event_ids: list[int] | None = None) -> int:
        """Delete the given dead letters (all when None); how many were deleted."""
        with self.store.db_lock:
            if event_ids is None:
                cur = self.store.write("DELETE FROM dead_letters", ())
            else:
                marks = ",".join("?" for _ in event_ids)
                sql = f"DELETE FROM dead_letters WHERE id IN ({marks})"
                cur = self.store.write(sql, tuple(event_ids))
            return int(cur.rowcount)
