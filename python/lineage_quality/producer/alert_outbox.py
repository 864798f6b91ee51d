"""Durable outbox of alerts (SQLite beside the spool, WAL, synchronous=FULL).

One row per (sink, run, dataset): `offer` ignores a key it already holds, delivered or not, so an
alert goes out once per run and dataset whatever is evaluated again. A row stays until its sink
took it; delivered rows are kept `retention` seconds (the memory that prevents a second alert),
then pruned. Undelivered rows are never dropped.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from lineage_quality.producer.alerts import Alert, message_for

RETENTION_SECONDS = 7 * 24 * 3600

_SCHEMA = """
CREATE TABLE IF NOT EXISTS alerts (
    sink TEXT NOT NULL,
    run_id TEXT NOT NULL,
    dataset TEXT NOT NULL,
    body TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_at REAL NOT NULL,
    created REAL NOT NULL,
    sent REAL,
    PRIMARY KEY (sink, run_id, dataset)
)
"""


@attrs.frozen
class PendingAlert:
    rowid: int
    sink: str
    body: str
    attempts: int


def outbox_path(spool_path: str | Path) -> Path:
    """The outbox lives beside the spool: `spool.db` -> `spool.alerts.db`."""
    path = Path(spool_path)
    return path.with_name(path.stem + ".alerts.db")


class AlertOutbox:
    def __init__(self, path: str | Path, retention: float = RETENTION_SECONDS) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.retention = retention
        self._db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute(_SCHEMA)
        self._db.execute("CREATE INDEX IF NOT EXISTS alerts_due ON alerts (sent, next_at)")
        self._lock = threading.Lock()
        self.changed = threading.Event()  # set when an alert was added

    def offer(self, sinks: Sequence[tuple[str, str]], alerts: Sequence[Alert]) -> int:
        """Store each alert for each (sink name, kind) unless that key is known; how many rows
        were added. Raises sqlite3.Error when they could not be stored."""
        now = time.time()
        added = 0
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                for sink, kind in sinks:
                    for alert in alerts:
                        body = json.dumps(message_for(kind, alert.payload))
                        cur = self._db.execute(
                            "INSERT OR IGNORE INTO alerts (sink, run_id, dataset, body, next_at, "
                            "created) VALUES (?, ?, ?, ?, ?, ?)",
                            (sink, alert.run_id, alert.dataset, body, now, now),
                        )
                        added += cur.rowcount
                self._db.execute(
                    "DELETE FROM alerts WHERE sent IS NOT NULL AND sent < ?",
                    (now - self.retention,),
                )
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        if added:
            self.changed.set()
        return added

    def due(self, now: float | None = None, limit: int = 100) -> list[PendingAlert]:
        now = time.time() if now is None else now
        with self._lock:
            rows = self._db.execute(
                "SELECT rowid, sink, body, attempts FROM alerts "
                "WHERE sent IS NULL AND next_at <= ? ORDER BY created, rowid LIMIT ?",
                (now, limit),
            ).fetchall()
        return [PendingAlert(int(r[0]), str(r[1]), str(r[2]), int(r[3])) for r in rows]

    def next_due(self) -> float | None:
        """When the earliest undelivered alert may be tried (epoch seconds); None if none."""
        with self._lock:
            row = self._db.execute("SELECT min(next_at) FROM alerts WHERE sent IS NULL").fetchone()
        return None if row[0] is None else float(row[0])

    def delivered(self, rowid: int) -> None:
        with self._lock:
            self._db.execute("UPDATE alerts SET sent = ? WHERE rowid = ?", (time.time(), rowid))

    def retry_at(self, rowid: int, when: float) -> None:
        with self._lock:
            self._db.execute(
                "UPDATE alerts SET attempts = attempts + 1, next_at = ? WHERE rowid = ?",
                (when, rowid),
            )

    def pending(self) -> int:
        with self._lock:
            return int(
                self._db.execute("SELECT count(*) FROM alerts WHERE sent IS NULL").fetchone()[0]
            )

    def rows(self) -> list[dict[str, Any]]:
        """Every row, for inspection and tests."""
        with self._lock:
            cur = self._db.execute(
                "SELECT sink, run_id, dataset, body, attempts, sent FROM alerts ORDER BY rowid"
            )
            names = [d[0] for d in cur.description]
            return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]

    def close(self) -> None:
        with self._lock:
            self._db.close()
