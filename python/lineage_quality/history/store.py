"""Where every evaluation's measured values are kept: SQLite beside the spool by default,
PostgreSQL to share one history between several `serve` processes and in-driver jobs.

One row per (dataset, rule, run): the value, the verdict, the run's event time and its table
version. An evaluation's rows are written in one transaction. Bounded by `HistoryBounds`: rows
older than the retention expire, and past `max_points` the oldest go (a batch at a time), so the
store never grows past its limits whatever names events bring.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import attrs

from lineage_quality.errors import ConfigError
from lineage_quality.history.verdicts import Point

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS lq_history (
        dataset TEXT NOT NULL,
        rule_id TEXT NOT NULL,
        run_id TEXT NOT NULL,
        metric TEXT NOT NULL,
        value DOUBLE PRECISION NOT NULL,
        status TEXT NOT NULL,
        event_ms BIGINT NOT NULL,
        version TEXT,
        lower_bound DOUBLE PRECISION,
        upper_bound DOUBLE PRECISION,
        recorded_ms BIGINT NOT NULL,
        PRIMARY KEY (dataset, rule_id, run_id)
    )""",
    "CREATE INDEX IF NOT EXISTS lq_history_series ON lq_history (dataset, rule_id, event_ms)",
    "CREATE INDEX IF NOT EXISTS lq_history_age ON lq_history (event_ms)",
)
_UPSERT = (
    "INSERT INTO lq_history (dataset, rule_id, run_id, metric, value, status, event_ms, version, "
    "lower_bound, upper_bound, recorded_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (dataset, rule_id, run_id) DO UPDATE SET metric = excluded.metric, "
    "value = excluded.value, status = excluded.status, event_ms = excluded.event_ms, "
    "version = excluded.version, lower_bound = excluded.lower_bound, "
    "upper_bound = excluded.upper_bound, recorded_ms = excluded.recorded_ms"
)
MAX_TEXT = 2048  # a dataset name or rule id longer than this is cut (never a key of its own)


@attrs.frozen
class HistoryBounds:
    """How much history is kept: rows within `retention_days` of the newest event, and at most
    `max_points` rows (past it the oldest expire, `max_points // 100` more at a time)."""

    max_points: int = 1_000_000
    retention_days: float = 400.0  # a year of weekly seasons, and some


@attrs.frozen
class Measured:
    """One evaluation's value of one rule, to be kept."""

    dataset: str
    rule_id: str
    run_id: str
    metric: str
    value: float
    status: str
    event_ms: int
    version: str | None = None
    lower: float | None = None  # the band the verdict used, in the value's terms
    upper: float | None = None


class SqlHistory:
    """The store over a DB-API connection; `?` placeholders (PostgreSQL's `%s` substituted)."""

    placeholder = "?"

    def __init__(self, connection: Any, bounds: HistoryBounds) -> None:
        self._db = connection
        self.bounds = bounds
        self._lock = threading.Lock()
        with self._transaction() as cur:
            for statement in _SCHEMA:
                cur.execute(statement)

    def _sql(self, text: str) -> str:
        return text if self.placeholder == "?" else text.replace("?", self.placeholder)

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[Any]:
        with self._lock:
            cur = self._db.cursor()
            try:
                yield cur
                self._db.commit()
            except BaseException:
                self._db.rollback()
                raise
            finally:
                cur.close()

    def append(self, rows: Sequence[Measured]) -> None:
        """Keep one evaluation's values: one transaction, bounds applied in it."""
        if not rows:
            return
        now = int(time.time() * 1000)
        params = [
            (
                r.dataset[:MAX_TEXT],
                r.rule_id[:MAX_TEXT],
                r.run_id[:MAX_TEXT],
                r.metric[:64],
                float(r.value),
                r.status[:16],
                r.event_ms,
                None if r.version is None else r.version[:256],
                r.lower,
                r.upper,
                now,
            )
            for r in rows
        ]
        with self._transaction() as cur:
            cur.executemany(self._sql(_UPSERT), params)
            newest = max(r.event_ms for r in rows)
            oldest_kept = newest - int(self.bounds.retention_days * 86_400_000)
            cur.execute(self._sql("DELETE FROM lq_history WHERE event_ms < ?"), (oldest_kept,))
            cur.execute("SELECT COUNT(*) FROM lq_history")
            (count,) = cur.fetchone()
            excess = int(count) - self.bounds.max_points
            if excess > 0:
                excess += self.bounds.max_points // 100
                cur.execute(
                    self._sql(
                        "DELETE FROM lq_history WHERE (dataset, rule_id, run_id) IN (SELECT "
                        "dataset, rule_id, run_id FROM lq_history ORDER BY event_ms LIMIT ?)"
                    ),
                    (excess,),
                )

    def series(
        self,
        dataset: str,
        rule_id: str,
        before_ms: int | None = None,
        limit: int | None = None,
        since_ms: int | None = None,
    ) -> list[Point]:
        """The rule's points on the dataset, oldest first: before `before_ms`, from `since_ms`,
        the latest `limit` of them."""
        where = ["dataset = ?", "rule_id = ?"]
        args: list[Any] = [dataset[:MAX_TEXT], rule_id[:MAX_TEXT]]
        if before_ms is not None:
            where.append("event_ms < ?")
            args.append(before_ms)
        if since_ms is not None:
            where.append("event_ms >= ?")
            args.append(since_ms)
        query = (
            "SELECT run_id, event_ms, value, status, lower_bound, upper_bound "
            "FROM lq_history WHERE " + " AND ".join(where) + " ORDER BY event_ms DESC"
        )
        if limit is not None:
            query += " LIMIT ?"
            args.append(limit)
        with self._transaction() as cur:
            cur.execute(self._sql(query), args)
            found = [
                Point(str(r[0]), int(r[1]), float(r[2]), str(r[3]), _float(r[4]), _float(r[5]))
                for r in cur.fetchall()
            ]
        return found[::-1]

    def rules(self, dataset: str) -> list[tuple[str, str, int]]:
        """(rule id, metric, points) of every rule kept for the dataset."""
        with self._transaction() as cur:
            cur.execute(
                self._sql(
                    "SELECT rule_id, MIN(metric), COUNT(*) FROM lq_history WHERE dataset = ? "
                    "GROUP BY rule_id ORDER BY rule_id"
                ),
                (dataset[:MAX_TEXT],),
            )
            return [(str(r[0]), str(r[1]), int(r[2])) for r in cur.fetchall()]

    def datasets(self) -> list[tuple[str, int]]:
        with self._transaction() as cur:
            cur.execute(
                "SELECT dataset, COUNT(*) FROM lq_history GROUP BY dataset ORDER BY dataset"
            )
            return [(str(r[0]), int(r[1])) for r in cur.fetchall()]

    def close(self) -> None:
        with self._lock:
            self._db.close()


class PostgresHistory(SqlHistory):
    placeholder = "%s"


# What the evaluator holds: the one store implementation, over SQLite or PostgreSQL.
HistoryStore = SqlHistory


def open_history(where: str | Path, bounds: HistoryBounds | None = None) -> SqlHistory:
    """A store at a SQLite path, or a `postgresql://` URL (needs `pip install psycopg[binary]`,
    the `postgres` extra)."""
    bounds = bounds or HistoryBounds()
    text = str(where)
    if text.startswith(("postgresql://", "postgres://")):
        try:
            import psycopg
        except ImportError as exc:
            raise ConfigError(
                "a PostgreSQL history needs psycopg: pip install 'lineage-quality[postgres]'"
            ) from exc
        try:
            shared = psycopg.connect(text, connect_timeout=10)
        except psycopg.Error as exc:
            raise ConfigError(f"cannot open the history at {_redacted(text)}: {exc}") from exc
        return PostgresHistory(shared, bounds)
    path = Path(text[len("sqlite://") :] if text.startswith("sqlite://") else text)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(str(path), timeout=30, check_same_thread=False)
        connection.execute("PRAGMA journal_mode=WAL")
    except (OSError, sqlite3.Error) as exc:
        raise ConfigError(f"cannot open the history at {path}: {exc}") from exc
    return SqlHistory(connection, bounds)


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


def _redacted(url: str) -> str:
    """A URL without its password, for messages."""
    scheme, sep, rest = url.partition("://")
    if "@" in rest:
        who, _, host = rest.rpartition("@")
        user = who.split(":", 1)[0]
        return f"{scheme}{sep}{user}:***@{host}"
    return url
