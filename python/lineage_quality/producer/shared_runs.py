"""`SharedRuns`: run verdicts in the history store (`--history`: SQLite beside the spool, or the
PostgreSQL several `serve` processes share), so that any of them -- and `gate --run-id ID
--history URL` -- knows what any of them evaluated, and a COMPLETE evaluated by one is not
evaluated again by another.

Several producers in one Kafka consumer group split the partitions; one killed before it committed
an offset has the events after it read again by the next owner (kafka/consumer.py). A redelivered
COMPLETE whose enriched text is here goes out as that text (the same facets, no second
evaluation, no second alert); one evaluated but not yet kept here when its producer died is
evaluated again (docs/producer.md, "Several producers").

Two tables, bounded by `SharedRunBounds`:
- `lq_run_verdicts`: (event, run id) -> the verdict rows (JSON, as run_verdicts.verdict_rows) of
  one evaluated event, under its run, its parent's and its root's;
- `lq_run_events`: event -> its enriched text.
An event is named by `event_key`: its run id, type, time and job (a redelivered message names
the same; two events of one run differ in time or type).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from lineage_quality.bounds import DAY, SharedRunBounds
from lineage_quality.history.database import Statements, connect, made
from lineage_quality.masking import masked
from lineage_quality.producer.run_verdicts import blocking
from lineage_quality.producer.spool import Spool

log = logging.getLogger(__name__)

ROW_OVERHEAD = 64
_TABLES = (
    """CREATE TABLE IF NOT EXISTS lq_run_verdicts (
    event_key TEXT NOT NULL,
    run_id TEXT NOT NULL,
    rows TEXT NOT NULL,
    at_ms BIGINT NOT NULL,
    row_bytes BIGINT NOT NULL,
    PRIMARY KEY (event_key, run_id)
)""",
    "CREATE INDEX IF NOT EXISTS lq_run_verdicts_run ON lq_run_verdicts (run_id)",
    "CREATE INDEX IF NOT EXISTS lq_run_verdicts_age ON lq_run_verdicts (at_ms)",
    """CREATE TABLE IF NOT EXISTS lq_run_events (
    event_key TEXT PRIMARY KEY,
    body TEXT NOT NULL,
    at_ms BIGINT NOT NULL,
    row_bytes BIGINT NOT NULL
)""",
    "CREATE INDEX IF NOT EXISTS lq_run_events_age ON lq_run_events (at_ms)",
)
_KEYS = {"lq_run_verdicts": "event_key, run_id", "lq_run_events": "event_key"}


def event_key(event: Mapping[str, Any]) -> str:
    """What names one event across producers: its run id, type, time and job, hashed."""
    run = event.get("run") or {}
    job = event.get("job") or {}
    parts = [
        run.get("runId") if isinstance(run, Mapping) else None,
        event.get("eventType"),
        event.get("eventTime"),
        job.get("namespace") if isinstance(job, Mapping) else None,
        job.get("name") if isinstance(job, Mapping) else None,
    ]
    text = json.dumps([p if isinstance(p, str) else None for p in parts], ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()


class SharedRuns(Statements):
    """The two tables over a DB-API connection (`?` placeholders; PostgreSQL's `%s`
    substituted), one statement at a time under a lock (workers share it)."""

    def __init__(
        self,
        connection: Any,
        bounds: SharedRunBounds | None = None,
        *,
        placeholder: str = "?",
        read_only: bool = False,
    ) -> None:
        self._db = connection
        self.bounds = bounds or SharedRunBounds()
        self.placeholder = placeholder
        self.read_only = read_only
        self._lock = threading.Lock()
        self._kept = 0  # events kept since the bounds were checked
        if not read_only:
            with self._transaction() as cur:
                for statement in _TABLES:
                    cur.execute(statement)

    # -- writing --------------------------------------------------------------------------------

    def add_verdicts(self, event: Mapping[str, Any], run_ids: Sequence[str], rows: str) -> None:
        """Keep one evaluated event's verdict rows (JSON) under each of its run ids."""
        key, now = event_key(event), _now_ms()
        size = len(rows.encode("utf-8", "surrogatepass")) + ROW_OVERHEAD
        with self._transaction() as cur:
            for run_id in run_ids:
                cur.execute(
                    self._sql(
                        "INSERT INTO lq_run_verdicts (event_key, run_id, rows, at_ms, row_bytes) "
                        "VALUES (?, ?, ?, ?, ?) ON CONFLICT (event_key, run_id) DO UPDATE SET "
                        "rows = excluded.rows, at_ms = excluded.at_ms, "
                        "row_bytes = excluded.row_bytes"
                    ),
                    (key, run_id, rows, now, size),
                )
        self._maybe_expire()

    def keep_event(self, event: Mapping[str, Any], body: str) -> None:
        """Keep the enriched text of an evaluated event (`event` as received)."""
        key, now = event_key(event), _now_ms()
        size = len(body.encode("utf-8", "surrogatepass")) + ROW_OVERHEAD
        with self._transaction() as cur:
            cur.execute(
                self._sql(
                    "INSERT INTO lq_run_events (event_key, body, at_ms, row_bytes) VALUES "
                    "(?, ?, ?, ?) ON CONFLICT (event_key) DO UPDATE SET body = excluded.body, "
                    "at_ms = excluded.at_ms, row_bytes = excluded.row_bytes"
                ),
                (key, body, now, size),
            )
        self._maybe_expire()

    def _maybe_expire(self) -> None:
        self._kept += 1
        if self._kept < self.bounds.check_every:
            return
        self._kept = 0
        self.expire()

    def expire(self, now_ms: int | None = None) -> None:
        """Rows past the retention, then the oldest past `max_rows` / `max_bytes`, per table."""
        now = _now_ms() if now_ms is None else now_ms
        oldest = now - int(self.bounds.retention_days * DAY * 1000)
        with self._transaction() as cur:
            for table, keys in _KEYS.items():
                cur.execute(self._sql(f"DELETE FROM {table} WHERE at_ms < ?"), (oldest,))
                cur.execute(f"SELECT COUNT(*), COALESCE(SUM(row_bytes), 0) FROM {table}")
                count, size = (int(v) for v in cur.fetchone())
                over_rows = count - self.bounds.max_rows
                over_bytes = size - self.bounds.max_bytes
                if over_rows <= 0 and over_bytes <= 0:
                    continue
                cur.execute(
                    self._sql(
                        f"DELETE FROM {table} WHERE ({keys}) IN (SELECT {keys} FROM (SELECT "
                        f"{keys}, ROW_NUMBER() OVER (ORDER BY at_ms) AS n, SUM(row_bytes) OVER "
                        "(ORDER BY at_ms ROWS UNBOUNDED PRECEDING) - row_bytes AS bytes_before "
                        f"FROM {table}) AS oldest WHERE n <= ? OR bytes_before < ?)"
                    ),
                    (max(over_rows, 0), max(over_bytes, 0)),
                )

    # -- reading --------------------------------------------------------------------------------

    def evaluated(self, event: Mapping[str, Any]) -> tuple[str, str | None] | None:
        """(its enriched text, its verdict rows as JSON) if any producer kept `event`, else
        None."""
        key = event_key(event)
        with self._transaction() as cur:
            cur.execute(self._sql("SELECT body FROM lq_run_events WHERE event_key = ?"), (key,))
            row = cur.fetchone()
            if row is None:
                return None
            cur.execute(
                self._sql("SELECT rows FROM lq_run_verdicts WHERE event_key = ? LIMIT 1"), (key,)
            )
            rows = cur.fetchone()
        return str(row[0]), None if rows is None else str(rows[0])

    def verdicts(self, run_id: str) -> list[dict[str, Any]] | None:
        """Every verdict row kept under `run_id` (the oldest event's first); None: unknown."""
        with self._transaction() as cur:
            cur.execute(
                self._sql("SELECT rows FROM lq_run_verdicts WHERE run_id = ? ORDER BY at_ms"),
                (run_id,),
            )
            found = cur.fetchall()
        if not found:
            return None
        return [row for (text,) in found for row in json.loads(text)]

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._db.close()


def _now_ms() -> int:
    return int(time.time() * 1000)


def open_shared_runs(
    where: str | Path,
    bounds: SharedRunBounds | None = None,
    *,
    read_only: bool = False,
    password_file: str | Path | None = None,
) -> SharedRuns:
    """The run verdicts of the history store at a SQLite path or a `postgresql://` URL (the
    same database as the history, a connection of its own)."""
    what = "the run verdicts"
    opened = connect(where, read_only=read_only, password_file=password_file, what=what)
    return made(
        lambda: SharedRuns(
            opened.connection, bounds, placeholder=opened.placeholder, read_only=read_only
        ),
        opened,
        what,
    )


# -- what the producer's workers call (service.py); the store may be down: never stop an event --


def reuse(
    shared: SharedRuns | None,
    event: Mapping[str, Any],
    spool: Spool,
    event_id: int,
    run_ids: Sequence[str],
) -> str | None:
    """The enriched text of `event` if a producer evaluated it already (a redelivered COMPLETE),
    kept in the spool as event `event_id`'s, its verdicts recorded in the spool's run book (this
    producer's runs API answers as if it had evaluated it); None otherwise, or when the store
    cannot tell (it is evaluated then)."""
    if shared is None:
        return None
    try:
        found = shared.evaluated(event)
    except Exception as exc:
        log.warning("could not ask the shared store about a COMPLETE: %s", masked(str(exc)))
        return None
    if found is None:
        return None
    body, rows = found
    log.info(
        "event %s of run %s: evaluated already (shared store): not evaluated again",
        event_key(event)[:16], (event.get("run") or {}).get("runId"),
    )  # fmt: skip
    try:
        if rows is not None and run_ids:
            spool.add_verdicts(run_ids, rows)
        spool.replace(event_id, body)
    except sqlite3.Error as exc:  # only costs a look-up again after a crash
        log.warning("could not keep event %d's shared verdicts in the spool: %s", event_id, exc)
    return body


def verdicts_of(shared: SharedRuns | None, run_id: str) -> list[dict[str, Any]] | None:
    """The verdict rows every producer kept under `run_id`; None when none (or no store, or it
    cannot tell: the caller answers from what it knows itself)."""
    if shared is None:
        return None
    try:
        return shared.verdicts(run_id)
    except Exception as exc:
        log.warning("could not read run %s's verdicts from the shared store: %s", run_id,
                    masked(str(exc)))  # fmt: skip
        return None


def remember_verdicts(
    shared: SharedRuns | None, event: Mapping[str, Any], run_ids: Sequence[str], rows: str
) -> None:
    if shared is None:
        return
    try:
        shared.add_verdicts(event, run_ids, rows)
    except Exception as exc:
        log.warning("could not keep the verdicts of run %s in the shared store: %s",
                    run_ids[0] if run_ids else "?", masked(str(exc)))  # fmt: skip


def remember_event(shared: SharedRuns | None, event: Mapping[str, Any], body: str) -> None:
    if shared is None:
        return
    try:
        shared.keep_event(event, body)
    except Exception as exc:
        log.warning("could not keep an evaluated event in the shared store: %s", masked(str(exc)))
        return
    log.info("event %s of run %s: kept in the shared store", event_key(event)[:16],
             (event.get("run") or {}).get("runId"))  # fmt: skip


def run_status(spool: Spool, shared: SharedRuns | None, run_id: str) -> tuple[int, dict[str, Any]]:
    """What `GET /api/v1/runs/{runId}` answers: 404 unknown, 202 while a COMPLETE of the run
    (or of a child run) waits, else 200 with every verdict (every producer's, with a shared
    store) and the failed BLOCK rules."""
    report = spool.run_report(run_id)
    found = verdicts_of(shared, run_id)
    if report is None and found is None:
        return 404, {"runId": run_id, "status": "unknown"}
    pending, bodies = report or (0, [])
    rows = found or [row for body in bodies for row in json.loads(body)]
    if pending > 0:
        return 202, {"runId": run_id, "status": "pending", "pendingEvents": pending}
    evaluated = {"runId": run_id, "status": "evaluated", "verdicts": rows}
    return 200, {**evaluated, "blocking": blocking(rows)}
