"""Dead letters: events a sink refused again and again (a 4xx), moved out of their run's lane into
their own table, so the run's later events go on. `lineage-quality dead-letters` lists, shows,
retries (back at the end of the lane) and purges them.

The table is bounded by `Settings.dead_letter_max_events` and `dead_letter_max_bytes`: past
either, the oldest dead letters expire in the burial's transaction (the caller counts and logs
them). Expiring rather than refusing: a dead letter is an event its sink already refused for
good, and refusing would keep it in its lane, retried, until the spool answers 503 to new events.
A Kafka message that is not an event is no dead letter: it is kept, bounded, as a bad message
(bad_messages.py), so that no amount of them ever expires a dead letter.
"""

from __future__ import annotations

import time

import attrs

from lineage_quality.producer.settings import DEFAULTS, Settings
from lineage_quality.producer.spool.index import Index
from lineage_quality.producer.spool.lanes import Lanes
from lineage_quality.producer.spool.store import Store

_SCHEMA = """
CREATE TABLE IF NOT EXISTS dead_letters (
    id INTEGER PRIMARY KEY,
    size INTEGER NOT NULL,
    body TEXT NOT NULL,
    lane TEXT NOT NULL,
    kind TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    reason TEXT NOT NULL,
    received REAL NOT NULL,
    dead REAL NOT NULL
)
"""
# Tables of older versions get `size` (bytes of the body, counted against the bound) on open:
# at the end of the row there, before the body in new tables (read without the body's pages).
_SIZE_COLUMN = "ALTER TABLE dead_letters ADD COLUMN size INTEGER"
_SIZE_FILL = "UPDATE dead_letters SET size = length(CAST(body AS BLOB)) WHERE size IS NULL"
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
    """The dead letters of one spool (its store, index and lanes), within `settings`'
    `dead_letter_max_events` and `dead_letter_max_bytes`."""

    def __init__(
        self, store: Store, index: Index, lanes: Lanes, settings: Settings = DEFAULTS
    ) -> None:
        self.store = store
        self.index = index
        self.lanes = lanes
        self.max_events = settings.spool.dead_letter_max_events
        self.max_bytes = settings.spool.dead_letter_max_bytes
        store.db.execute(_SCHEMA)
        present = {row[1] for row in store.db.execute("PRAGMA table_info(dead_letters)")}
        if "size" not in present:
            store.db.execute(_SIZE_COLUMN)
            store.db.execute(_SIZE_FILL)
        self._recount()

    def _recount(self) -> None:
        """The count and bytes held, read from the table (on open, after a purge)."""
        with self.store.db_lock:
            row = self.store.db.execute(
                "SELECT count(*), coalesce(sum(size), 0) FROM dead_letters"
            ).fetchone()
        self.count, self.bytes = int(row[0]), int(row[1])

    def bury(self, event_id: int, reason: str) -> int:
        """Move event `event_id` out of its lane into the dead letters, in one transaction that
        also expires the oldest dead letters past the bound; how many expired."""
        store = self.store
        with store.db_lock:
            row = store.db.execute(
                "SELECT body, lane, kind, attempts, received, size FROM events WHERE id = ?",
                (event_id,),
            ).fetchone()
            if row is None:
                return 0
            size = int(row[5]) or len(str(row[0]).encode())  # 0: a row of an older version
            expired: list[tuple[int, int]] = []

            def move() -> None:
                expired.clear()
                store.write(
                    "INSERT OR REPLACE INTO dead_letters "
                    "(id, size, body, lane, kind, attempts, reason, received, dead) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (event_id, size, row[0], row[1], row[2], row[3], reason[:MAX_REASON],
                     row[4], time.time()),
                )  # fmt: skip
                store.write("DELETE FROM events WHERE id = ?", (event_id,))
                # one more (ids come from the events' AUTOINCREMENT: none replaced here)
                expired.extend(self._oldest_past_bound(self.count + 1, self.bytes + size))
                for old_id, _ in expired:
                    store.write("DELETE FROM dead_letters WHERE id = ?", (old_id,))

            store.transaction(move)
            self.count += 1 - len(expired)
            self.bytes += size - sum(s for _, s in expired)
            with self.index.lock:
                self.index.remove(event_id)
                self.lanes.wake_all()
                self.lanes.removed()
            return len(expired)

    def _oldest_past_bound(self, count: int, size: int) -> list[tuple[int, int]]:
        """(id, size) of the oldest dead letters to expire so that `count` dead letters of
        `size` bytes in all fit the bounds (the newest one too, if it alone is over)."""
        over_count = count - self.max_events if self.max_events else 0
        over_bytes = size - self.max_bytes if self.max_bytes else 0
        if over_count <= 0 and over_bytes <= 0:
            return []
        out: list[tuple[int, int]] = []
        rows = self.store.db.execute("SELECT id, size FROM dead_letters ORDER BY dead, id")
        for old_id, old_size in rows:
            if over_count <= 0 and over_bytes <= 0:
                break
            out.append((int(old_id), int(old_size)))
            over_count -= 1
            over_bytes -= int(old_size)
        rows.close()  # the rest is not needed; the deletes follow on this connection
        return out

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
                "SELECT body, lane, kind, received, size FROM dead_letters WHERE id = ?",
                (event_id,),
            ).fetchone()
            if row is None:
                raise KeyError(event_id)
            size = int(row[4])
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
            self.count -= 1
            self.bytes -= size
            with self.index.lock:
                self.index.add(new_id[0], str(row[1]), size)
                self.lanes.offer(str(row[1]))
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
        self._recount()
        return int(cur.rowcount)
