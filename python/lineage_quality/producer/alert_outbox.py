"""Durable outbox of alerts (SQLite beside the spool, WAL, synchronous=FULL).

One row per (sink, run, dataset): `offer` ignores a key it already holds, delivered or not, so an
alert goes out once per run and dataset whatever is evaluated again. A row stays until its sink
took it, or refused it for good (a 4xx other than 408/429, `AlertBounds.dead_letter_after` times):
then it is a dead letter, kept for inspection and `lineage-quality dead-letters --alerts`, never
tried again unless retried. Delivered and dead rows are kept `retention` seconds (the memory that
prevents a second alert), then pruned.

Undelivered rows are bounded by `Settings.alert_max_pending`: past it, in the same transaction
that adds alerts, the oldest undelivered ones expire (a long webhook outage during an alert flood:
the newest say most about the data now). Never silently: each one expired is told to `on_expired`
(the producer's `lineage_quality_alerts_expired` metric), and a warning says so (at most every
WARN_EVERY seconds, with the count since the last one).
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs

from lineage_quality.bounds import AlertBounds
from lineage_quality.producer.alerts import Alert, message_for
from lineage_quality.producer.settings import DEFAULTS
from lineage_quality.rawjson import storable

log = logging.getLogger(__name__)

WARN_EVERY = 600.0  # seconds between warnings that undelivered alerts expire

_WAITING = "sent IS NULL AND dead IS NULL"  # rows still to deliver

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
# Columns added after the first release; older outboxes get them on open.
_COLUMNS = {
    "refusals": "INTEGER NOT NULL DEFAULT 0",  # answers that refused it for good, in a row
    "dead": "REAL",  # when it was dead-lettered (epoch seconds)
    "reason": "TEXT",  # why: the last refusal
}


@attrs.frozen
class PendingAlert:
    rowid: int
    sink: str
    body: str
    attempts: int
    refusals: int = 0


@attrs.frozen
class DeadAlert:
    rowid: int
    sink: str
    run_id: str
    dataset: str
    body: str
    attempts: int
    reason: str
    dead: float  # when it was dead-lettered (epoch seconds)


def outbox_path(spool_path: str | Path) -> Path:
    """The outbox lives beside the spool: `spool.db` -> `spool.alerts.db`."""
    path = Path(spool_path)
    return path.with_name(path.stem + ".alerts.db")


class AlertOutbox:
    def __init__(
        self,
        path: str | Path,
        retention: float = AlertBounds().retention,
        max_pending: int | None = DEFAULTS.outputs.alert_max_pending,
    ) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.retention = retention
        self.max_pending = max_pending  # None: no bound
        self.on_expired: Callable[[int], None] = lambda count: None
        self._warned = -WARN_EVERY
        self._unwarned = 0  # expired since the last warning
        self._db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute(_SCHEMA)
        present = {row[1] for row in self._db.execute("PRAGMA table_info(alerts)")}
        for name, decl in _COLUMNS.items():
            if name not in present:
                self._db.execute(f"ALTER TABLE alerts ADD COLUMN {name} {decl}")
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
                            (sink, storable(alert.run_id), storable(alert.dataset), body,
                             now, now),
                        )
                        added += cur.rowcount
                self._db.execute(
                    "DELETE FROM alerts WHERE sent < ? OR dead < ?",
                    (now - self.retention, now - self.retention),
                )
                expired = self._expire_past_bound() if added else 0
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        if expired:
            self._expired(expired)
        if added:
            self.changed.set()
        return added

    def _expire_past_bound(self) -> int:
        """Delete the oldest undelivered alerts past `max_pending` (in the caller's transaction);
        how many. Their keys are forgotten: that run and dataset may alert again."""
        if self.max_pending is None:
            return 0
        held = self._db.execute(f"SELECT count(*) FROM alerts WHERE {_WAITING}").fetchone()[0]
        over = int(held) - self.max_pending
        if over <= 0:
            return 0
        self._db.execute(
            "DELETE FROM alerts WHERE rowid IN (SELECT rowid FROM alerts "
            f"WHERE {_WAITING} ORDER BY created, rowid LIMIT ?)",
            (over,),
        )
        return over

    def _expired(self, count: int) -> None:
        """Count the alerts just expired; warn at most every WARN_EVERY seconds."""
        self.on_expired(count)
        self._unwarned += count
        now = time.monotonic()
        if now - self._warned >= WARN_EVERY:
            self._warned = now
            log.warning(
                "alert outbox: %d undelivered alert(s) expired, the oldest first: more than "
                "alert_max_pending (%d, --alert-max-pending) were waiting for their webhooks "
                "(lineage_quality_alerts_expired counts them all)",
                self._unwarned,
                self.max_pending,
            )
            self._unwarned = 0

    def due(self, now: float | None = None, limit: int = 100) -> list[PendingAlert]:
        now = time.time() if now is None else now
        with self._lock:
            rows = self._db.execute(
                "SELECT rowid, sink, body, attempts, refusals FROM alerts "
                f"WHERE {_WAITING} AND next_at <= ? ORDER BY created, rowid LIMIT ?",
                (now, limit),
            ).fetchall()
        return [PendingAlert(int(r[0]), str(r[1]), str(r[2]), int(r[3]), int(r[4])) for r in rows]

    def next_due(self) -> float | None:
        """When the earliest undelivered alert may be tried (epoch seconds); None if none."""
        with self._lock:
            row = self._db.execute(f"SELECT min(next_at) FROM alerts WHERE {_WAITING}").fetchone()
        return None if row[0] is None else float(row[0])

    def delivered(self, rowid: int) -> None:
        with self._lock:
            self._db.execute("UPDATE alerts SET sent = ? WHERE rowid = ?", (time.time(), rowid))

    def retry_at(self, rowid: int, when: float, refused: bool = False) -> None:
        """A try failed: try again at `when`. `refused`: its webhook refused it for good (counted
        in `refusals`; any other failure starts that count again)."""
        with self._lock:
            self._db.execute(
                "UPDATE alerts SET attempts = attempts + 1, next_at = ?, "
                "refusals = CASE WHEN ? THEN refusals + 1 ELSE 0 END WHERE rowid = ?",
                (when, refused, rowid),
            )

    def dead_letter(self, rowid: int, reason: str) -> None:
        """Its webhook refused it for good: keep it aside, never tried again (unless retried)."""
        with self._lock:
            self._db.execute(
                "UPDATE alerts SET attempts = attempts + 1, refusals = refusals + 1, dead = ?, "
                "reason = ? WHERE rowid = ?",
                (time.time(), reason[:2000], rowid),
            )

    def dead_letters(self) -> list[DeadAlert]:
        with self._lock:
            rows = self._db.execute(
                "SELECT rowid, sink, run_id, dataset, body, attempts, reason, dead FROM alerts "
                "WHERE dead IS NOT NULL ORDER BY rowid"
            ).fetchall()
        return [
            DeadAlert(int(r[0]), r[1], r[2], r[3], r[4], int(r[5]), str(r[6]), float(r[7]))
            for r in rows
        ]

    def retry_dead_letter(self, rowid: int) -> None:
        """Deliver a dead letter again (now, its counts reset). KeyError when there is none."""
        with self._lock:
            cur = self._db.execute(
                "UPDATE alerts SET dead = NULL, reason = NULL, refusals = 0, attempts = 0, "
                "next_at = ? WHERE rowid = ? AND dead IS NOT NULL",
                (time.time(), rowid),
            )
        if not cur.rowcount:
            raise KeyError(rowid)
        self.changed.set()

    def purge_dead_letters(self, rowids: list[int] | None = None) -> int:
        """Delete the given dead letters (all when None); how many were deleted. Their keys are
        forgotten: the same run and dataset may alert again."""
        with self._lock:
            if rowids is None:
                cur = self._db.execute("DELETE FROM alerts WHERE dead IS NOT NULL")
            else:
                marks = ",".join("?" for _ in rowids)
                cur = self._db.execute(
                    f"DELETE FROM alerts WHERE dead IS NOT NULL AND rowid IN ({marks})",
                    tuple(rowids),
                )
            return int(cur.rowcount)

    def pending(self) -> int:
        """Alerts waiting for delivery (not delivered, not dead-lettered)."""
        with self._lock:
            return int(
                self._db.execute(f"SELECT count(*) FROM alerts WHERE {_WAITING}").fetchone()[0]
            )

    def rows(self) -> list[dict[str, Any]]:
        """Every row, for inspection and tests."""
        with self._lock:
            cur = self._db.execute(
                "SELECT sink, run_id, dataset, body, attempts, sent, dead FROM alerts "
                "ORDER BY rowid"
            )
            names = [d[0] for d in cur.description]
            return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]

    def close(self) -> None:
        with self._lock:
            self._db.close()
