"""Where every evaluation's measured values are kept: SQLite beside the spool by default,
PostgreSQL to share one history between several `serve` processes and in-driver jobs.

One row per (dataset, rule, run): the value, the verdict, the run's event time and its table
version. An evaluation's rows are written in one transaction. Bounded by `HistoryBounds` in rows
and in bytes, whatever names and times events bring: rows older than the retention (by the wall
clock: an event time cannot move it) expire, past `max_points` rows or `max_bytes` the oldest go
(a batch at a time), a name past its length bound is cut and ends in a hash of the whole (two long
names never share a series), and a time more than a day ahead of the clock is never kept.

What users said about a rule's history (accept, undo, rebaseline: feedback.py) is kept in
`lq_history_feedback`, one row per record with who, when and why; bounded by the same retention
and by `MAX_FEEDBACK` rows (the oldest go).

A measured value that is not a finite number (NaN, an infinity) is kept as no number: `value`
NULL and its name in `nonfinite`. It is shown by the viewer and the chart, never read into a
baseline (`series(finite_only=True)`).

A masked column's order statistic (masked_values.py) is kept raw for the baselines, with `shown`:
the masked text its readers (view, `history`, chart) show instead of the value and its band.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from lineage_quality.bounds import MAX_FUTURE_SKEW_SECONDS
from lineage_quality.errors import ConfigError, HistoryUnreadable
from lineage_quality.history import samples as history_samples
from lineage_quality.history.database import Grouped, connect, first_line, made
from lineage_quality.history.feedback_records import (
    FEEDBACK_INDEX,
    FEEDBACK_NEEDED,
    FEEDBACK_TABLE,
    FeedbackRecords,
)
from lineage_quality.history.names import MAX_RUN_ID, cut, key
from lineage_quality.history.points import Point
from lineage_quality.history.rows import Row, unreadable
from lineage_quality.history.totals import Totals
from lineage_quality.results import NON_FINITE
from lineage_quality.samples import Samples

_TABLE = """CREATE TABLE IF NOT EXISTS {name} (
    dataset TEXT NOT NULL,
    rule_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    metric TEXT NOT NULL,
    value DOUBLE PRECISION,
    nonfinite TEXT,
    status TEXT NOT NULL,
    event_ms BIGINT NOT NULL,
    version TEXT,
    lower_bound DOUBLE PRECISION,
    upper_bound DOUBLE PRECISION,
    recorded_ms BIGINT NOT NULL,
    row_bytes BIGINT NOT NULL DEFAULT 0,
    shown TEXT,
    PRIMARY KEY (dataset, rule_id, run_id)
)"""
_INDEXES = (
    "CREATE INDEX IF NOT EXISTS lq_history_series ON lq_history (dataset, rule_id, event_ms)",
    # the oldest first, and the bytes counted, from the index alone
    "CREATE INDEX IF NOT EXISTS lq_history_age_bytes ON lq_history (event_ms, row_bytes)",
)
_COLUMNS = (
    "dataset, rule_id, run_id, metric, value, nonfinite, status, event_ms, version, "
    "lower_bound, upper_bound, recorded_ms, row_bytes, shown"
)
_UPSERT = (
    f"INSERT INTO lq_history ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (dataset, rule_id, run_id) DO UPDATE SET metric = excluded.metric, "
    "value = excluded.value, nonfinite = excluded.nonfinite, status = excluded.status, "
    "event_ms = excluded.event_ms, version = excluded.version, "
    "lower_bound = excluded.lower_bound, upper_bound = excluded.upper_bound, "
    "recorded_ms = excluded.recorded_ms, row_bytes = excluded.row_bytes, shown = excluded.shown"
)
# The oldest rows, as many as `?` rows or until `?` bytes are gone (whichever is more).
_EXPIRE_OLDEST = (
    "DELETE FROM lq_history WHERE (dataset, rule_id, run_id) IN (SELECT dataset, rule_id, run_id "
    "FROM (SELECT dataset, rule_id, run_id, "
    "ROW_NUMBER() OVER (ORDER BY event_ms ROWS UNBOUNDED PRECEDING) AS n, "
    "SUM(row_bytes) OVER (ORDER BY event_ms ROWS UNBOUNDED PRECEDING) - row_bytes AS bytes_before "
    "FROM lq_history) AS oldest WHERE n <= ? OR bytes_before < ?)"
)
# The columns the readers select (the viewer reads a store of any version: `nonfinite`,
# `row_bytes` and `shown` came later); a writer needs every one of its table's columns.
_READ = {"dataset", "rule_id", "run_id", "metric", "value", "status", "event_ms"}
_READ |= {"lower_bound", "upper_bound"}
_WRITTEN = {c.strip() for c in _COLUMNS.split(",")}
_SERIES_COLUMNS = (
    "run_id", "event_ms", "value", "nonfinite", "status", "lower_bound", "upper_bound", "shown",
)  # fmt: skip

ROW_OVERHEAD = 64  # bytes a row counts beyond its texts: its numbers, and some
# The table's rows and bytes, kept by triggers: the bound check reads them, not the table
TOTALS = Totals("lq_history_totals", "lq_history_count", ("lq_history",))
MAX_FUTURE_MS = MAX_FUTURE_SKEW_SECONDS * 1000  # as the receiver's bound on event times
_FROM_NAME = {name: float(name) for name in NON_FINITE.values()}
MIB = 1024 * 1024


@attrs.frozen
class HistoryBounds:
    """How much history is kept: rows whose event time is within `retention_days` of now (the
    wall clock), at most `max_points` rows and `max_bytes` bytes (a row counts its texts' UTF-8
    bytes plus `ROW_OVERHEAD`); past a bound the oldest expire, 1 % of the bound more at a time."""

    max_points: int = attrs.field(default=1_000_000, validator=attrs.validators.gt(0))
    retention_days: float = attrs.field(default=400.0, validator=attrs.validators.gt(0))
    max_bytes: int = attrs.field(default=256 * MIB, validator=attrs.validators.gt(0))


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
    shown: str | None = None  # a masked column's value as its readers show it (masked_values.py)


class SqlHistory(FeedbackRecords):
    """The store over a DB-API connection (SQLite here); `?` placeholders, PostgreSQL's `%s`
    substituted. `read_only`: the store is only read (the `history` viewer): nothing is created,
    migrated or expired, and a database without the history's table is refused."""

    placeholder = "?"
    octets = "LENGTH(CAST({} AS BLOB))"  # a text's UTF-8 bytes, in SQL

    def __init__(
        self,
        connection: Any,
        bounds: HistoryBounds,
        read_only: bool = False,
        where: str = "the history store",
    ) -> None:
        self._db = connection
        self.bounds = bounds
        self.read_only = read_only
        self.where = where  # named in every error a read raises (a URL's password masked)
        self._lock = threading.Lock()
        # appends: grouped commits on SQLite; on PostgreSQL run again when rolled back for a
        # deadlock (two producers expiring the same oldest rows)
        self._grouped = Grouped(self)
        if not read_only:
            with self._transaction() as cur:
                cur.execute(_TABLE.format(name="lq_history"))
            if "shown" not in self._columns():
                self._add_shown()
            if not {"nonfinite", "row_bytes"} <= self._columns():
                self._upgrade()
            with self._transaction() as cur:
                for statement in _INDEXES:
                    cur.execute(statement)
                cur.execute(FEEDBACK_TABLE)
                cur.execute(FEEDBACK_INDEX)
        try:
            columns = self._columns()
        except Exception as exc:  # each DB-API module has its own classes: any is "cannot"
            raise ConfigError(f"not a history store: {first_line(exc)}") from exc
        missing = (_READ if read_only else _WRITTEN) - columns
        if missing:
            raise ConfigError(
                "not a history store: its lq_history table is another table (no column "
                + ", ".join(sorted(missing))
                + ")"
            )
        if self._has_feedback_table():
            missing = FEEDBACK_NEEDED - self._columns("lq_history_feedback")
            if missing:
                raise ConfigError(
                    "not a history store: its lq_history_feedback table is another table (no "
                    "column " + ", ".join(sorted(missing)) + ")"
                )
        if not read_only:  # a table found to be the history's: made once for a store before them
            TOTALS.keep(self)
        self._marker = "nonfinite" if "nonfinite" in columns else "NULL"
        self._shown = "shown" if "shown" in columns else "NULL"  # an older store: none masked

    def _columns(self, table: str = "lq_history") -> set[str]:
        with self._transaction() as cur:
            cur.execute(f"SELECT * FROM {table} LIMIT 0")
            return {str(d[0]).lower() for d in cur.description}

    def _read(self, table: str, query: str, args: Sequence[Any] = ()) -> list[Any]:
        """The rows of one SELECT on `table`; the database refusing it (a column gone, a file
        that is no database) is a HistoryUnreadable naming the store."""
        try:
            with self._transaction() as cur:
                cur.execute(self._sql(query), args)
                return list(cur.fetchall())
        except Exception as exc:  # each DB-API module has its own classes
            raise unreadable(self.where, table, exc) from exc

    def _row_bytes_sql(self) -> str:
        texts = ["dataset", "rule_id", "run_id", "metric", "status"]
        parts = [self.octets.format(t) for t in texts]
        optional = ("version", "nonfinite", "shown")
        parts += [f"COALESCE({self.octets.format(t)}, 0)" for t in optional]
        return f"{ROW_OVERHEAD} + " + " + ".join(parts)

    def _add_shown(self) -> None:
        """A store written before masked values were kept (no `shown`): the column added, by
        this process or, meanwhile, by another one."""
        try:
            with self._transaction() as cur:
                cur.execute("ALTER TABLE lq_history ADD COLUMN shown TEXT")
        except Exception:  # each DB-API module has its own classes
            if "shown" not in self._columns():
                raise

    def _upgrade(self) -> None:
        """A store written before non-finite values and bytes were kept apart (value NOT NULL, no
        `nonfinite`, no `row_bytes`): SQLite cannot drop a NOT NULL, so the table is copied, in
        one transaction that waits for any other writer; infinities become markers."""
        big = "1.7976931348623157e308"

        def finite(column: str) -> str:
            return f"CASE WHEN {column} > {big} OR {column} < -{big} THEN NULL ELSE {column} END"

        with self._transaction() as cur:
            cur.execute("BEGIN IMMEDIATE")
            cur.execute("SELECT * FROM lq_history LIMIT 0")
            if {"nonfinite", "row_bytes"} <= {str(d[0]).lower() for d in cur.description}:
                return  # another process upgraded it while this one waited
            cur.execute("DROP TABLE IF EXISTS lq_history_upgrade")
            cur.execute(_TABLE.format(name="lq_history_upgrade"))
            cur.execute(
                f"INSERT INTO lq_history_upgrade ({_COLUMNS}) SELECT dataset, rule_id, run_id, "
                f"metric, {finite('value')}, CASE WHEN value IS NULL THEN 'NaN' "
                f"WHEN value > {big} THEN 'Infinity' WHEN value < -{big} THEN '-Infinity' END, "
                f"status, event_ms, version, {finite('lower_bound')}, {finite('upper_bound')}, "
                "recorded_ms, 0, shown FROM lq_history"
            )
            cur.execute("DROP TABLE lq_history")
            cur.execute("ALTER TABLE lq_history_upgrade RENAME TO lq_history")
            cur.execute(f"UPDATE lq_history SET row_bytes = {self._row_bytes_sql()}")

    def why_not_kept(self, event_ms: int, now_ms: int | None = None) -> str | None:
        """Why rows of this event time would not be kept (None: they would): a time more than
        a day ahead of this clock, or one already past the retention."""
        now = int(time.time() * 1000) if now_ms is None else now_ms
        if event_ms > now + MAX_FUTURE_MS:
            return f"its event time is more than {MAX_FUTURE_SKEW_SECONDS // 3600} h ahead"
        if event_ms < now - int(self.bounds.retention_days * 86_400_000):
            return f"its event time is older than the {self.bounds.retention_days:g}-day retention"
        return None

    def append(self, rows: Sequence[Measured]) -> int:
        """Keep one evaluation's values: one transaction, bounds applied in it. Rows whose time
        `why_not_kept` refuses are left out; returns how many were kept."""
        if self.read_only:
            raise ConfigError("this history store was opened read-only")
        now = int(time.time() * 1000)
        params = [_params(r, now) for r in rows if self.why_not_kept(r.event_ms, now) is None]
        if not params:
            return 0

        def work(cur: Any) -> None:
            cur.executemany(self._sql(_UPSERT), params)
            self._expire(cur, now)

        self._grouped.run(work)
        return len(params)

    def _expire(self, cur: Any, now: int) -> None:
        oldest_kept = now - int(self.bounds.retention_days * 86_400_000)
        cur.execute(
            self._sql("DELETE FROM lq_history WHERE event_ms < ? OR event_ms > ?"),
            (oldest_kept, now + MAX_FUTURE_MS),  # the latter: written before times were bounded
        )
        rows, size = self.bounds.max_points, self.bounds.max_bytes
        count, total = TOTALS.size(cur, "lq_history", self._sql, rows, size)  # no walk
        excess_rows = count - rows + rows // 100 if count > rows else 0
        excess_bytes = total - size + size // 100 if total > size else 0
        if excess_rows or excess_bytes:
            cur.execute(self._sql(_EXPIRE_OLDEST), (excess_rows, excess_bytes))

    def series(
        self,
        dataset: str,
        rule_id: str,
        before_ms: int | None = None,
        limit: int | None = None,
        since_ms: int | None = None,
        finite_only: bool = False,
    ) -> list[Point]:
        """The rule's points on the dataset, oldest first: before `before_ms`, from `since_ms`,
        the latest `limit` of them; `finite_only`: without the non-finite ones (a baseline)."""
        where = ["dataset = ?", "rule_id = ?"]
        args: list[Any] = [key(dataset), key(rule_id)]
        if before_ms is not None:
            where.append("event_ms < ?")
            args.append(before_ms)
        if since_ms is not None:
            where.append("event_ms >= ?")
            args.append(since_ms)
        if finite_only:
            where.append("value IS NOT NULL")
        query = (
            f"SELECT run_id, event_ms, value, {self._marker}, status, lower_bound, upper_bound, "
            f"{self._shown} FROM lq_history WHERE {' AND '.join(where)} ORDER BY event_ms DESC"
        )
        if limit is not None:
            query += " LIMIT ?"
            args.append(limit)
        found = [self._point(dataset, rule_id, r) for r in self._read("lq_history", query, args)]
        if finite_only:  # a store upgraded from one holding infinities as numbers
            found = [p for p in found if math.isfinite(p.value)]
        return found[::-1]

    def _point(self, dataset: str, rule_id: str, values: Sequence[Any]) -> Point:
        row = Row.of(
            self.where,
            "lq_history",
            ("dataset", "rule_id", *_SERIES_COLUMNS),
            (key(dataset), key(rule_id), *values),
            key=("dataset", "rule_id", "run_id"),
        )
        value = row.optional_real("value")
        return Point(
            row.text("run_id"),
            row.whole("event_ms"),
            _value(value, row.optional_text("nonfinite")),
            row.text("status"),
            row.optional_real("lower_bound"),
            row.optional_real("upper_bound"),
            row.optional_text("shown"),
        )

    def rules(self, dataset: str) -> list[tuple[str, str, int]]:
        """(rule id, metric, points) of every rule kept for the dataset."""
        query = (
            "SELECT rule_id, MIN(metric), COUNT(*) FROM lq_history WHERE dataset = ? "
            "GROUP BY rule_id ORDER BY rule_id"
        )
        found = []
        for values in self._read("lq_history", query, (key(dataset),)):
            row = Row.of(self.where, "lq_history", ("rule_id", "metric", "n"), values, ("rule_id",))
            found.append((row.text("rule_id"), row.text("metric"), row.whole("n")))
        return found

    def datasets(self) -> list[tuple[str, int]]:
        query = "SELECT dataset, COUNT(*) FROM lq_history GROUP BY dataset ORDER BY dataset"
        found = []
        for values in self._read("lq_history", query):
            row = Row.of(self.where, "lq_history", ("dataset", "n"), values)
            found.append((row.text("dataset"), row.whole("n")))
        return found

    def of_run(self, dataset: str, run_id: str, limit: int = 1000) -> list[tuple[str, str, Point]]:
        """(rule id, metric, point) of every value `run_id` kept for the dataset, by rule."""
        query = (
            f"SELECT rule_id, metric, run_id, event_ms, value, {self._marker}, status, "
            f"lower_bound, upper_bound, {self._shown} FROM lq_history WHERE dataset = ? "
            "AND run_id = ? "
            "ORDER BY rule_id LIMIT ?"
        )
        rows = self._read("lq_history", query, (key(dataset), key(run_id, MAX_RUN_ID), limit))
        return [(str(r[0]), str(r[1]), self._point(dataset, str(r[0]), r[2:])) for r in rows]

    def keep_samples(
        self, dataset: str, run_id: str, event_ms: int, found: Sequence[tuple[str, Samples]]
    ) -> None:
        """Keep the failing-row samples of one evaluation, (rule id, samples), beside its values:
        bounded and expiring with them (history/samples.py)."""
        if self.read_only:
            raise ConfigError("this history store was opened read-only")
        rows = [
            (key(dataset), key(rule_id), key(run_id, MAX_RUN_ID), event_ms, samples)
            for rule_id, samples in found
        ]
        oldest = int(time.time() * 1000) - int(self.bounds.retention_days * 86_400_000)
        with self._transaction() as cur:
            cur.execute(history_samples.TABLE)
            history_samples.keep(cur, self._sql, rows, oldest)

    def samples_of_run(self, dataset: str, run_id: str) -> dict[str, Samples]:
        """Rule id -> the samples `run_id` kept for the dataset (none in a store without them)."""
        args = (key(dataset), key(run_id, MAX_RUN_ID))
        try:
            return history_samples.parsed(self._read("lq_samples", history_samples.OF_RUN, args))
        except HistoryUnreadable:  # a store written before samples were kept
            return {}

    def close(self) -> None:
        with self._lock:
            self._db.close()


class PostgresHistory(SqlHistory):
    placeholder = "%s"
    octets = "octet_length({})"

    def _upgrade(self) -> None:
        """PostgreSQL changes the table in place; several producers may upgrade at once (the
        ALTERs wait for each other, and each step is a no-op the second time)."""
        non_finite = "('NaN'::float8, 'Infinity'::float8, '-Infinity'::float8)"
        with self._transaction() as cur:
            cur.execute("ALTER TABLE lq_history ADD COLUMN IF NOT EXISTS nonfinite TEXT")
            cur.execute(
                "ALTER TABLE lq_history ADD COLUMN IF NOT EXISTS row_bytes BIGINT NOT NULL "
                "DEFAULT 0"
            )
            cur.execute("ALTER TABLE lq_history ALTER COLUMN value DROP NOT NULL")
            cur.execute(
                "UPDATE lq_history SET nonfinite = CASE WHEN value = 'NaN'::float8 THEN 'NaN' "
                "WHEN value > 0 THEN 'Infinity' ELSE '-Infinity' END, value = NULL "
                f"WHERE value IN {non_finite}"
            )
            for column in ("lower_bound", "upper_bound"):
                cur.execute(f"UPDATE lq_history SET {column} = NULL WHERE {column} IN {non_finite}")
            cur.execute(
                f"UPDATE lq_history SET row_bytes = {self._row_bytes_sql()} WHERE row_bytes = 0"
            )
            cur.execute("DROP INDEX IF EXISTS lq_history_age")


# What the evaluator holds: the one store implementation, over SQLite or PostgreSQL.
HistoryStore = SqlHistory


def open_history(
    where: str | Path,
    bounds: HistoryBounds | None = None,
    *,
    read_only: bool = False,
    password_file: str | Path | None = None,
) -> SqlHistory:
    """A store at a SQLite path, or a `postgresql://` URL (needs `pip install psycopg[binary]`,
    the `postgres` extra). `read_only`: open an existing store without changing anything (a
    SQLite file is opened `mode=ro`: not even its journal mode is set). `password_file`: the
    PostgreSQL password's file, for a URL without one (history/postgres.py)."""
    bounds = bounds or HistoryBounds()
    what = "the history"
    opened = connect(where, read_only=read_only, password_file=password_file, what=what)
    kind = SqlHistory if opened.placeholder == "?" else PostgresHistory
    return made(lambda: kind(opened.connection, bounds, read_only, opened.shown), opened, what)


def _params(r: Measured, now: int) -> tuple[Any, ...]:
    """A row's values: texts as the store keeps them, a non-finite value as its name."""
    value = float(r.value)
    finite = math.isfinite(value)
    marker = None if finite else NON_FINITE[repr(value)]
    texts = (
        key(r.dataset),
        key(r.rule_id),
        key(r.run_id, MAX_RUN_ID),
        cut(r.metric, 64) or "",
        cut(r.status, 16) or "",
    )
    version = cut(r.version, 256)
    shown = cut(r.shown, 64)
    optional = (version or "", marker or "", shown or "")
    size = ROW_OVERHEAD + sum(len(t.encode("utf-8")) for t in (*texts, *optional))
    return (
        *texts[:4],
        value if finite else None,
        marker,
        texts[4],
        r.event_ms,
        version,
        _finite_or_none(r.lower),
        _finite_or_none(r.upper),
        now,
        size,
        shown,
    )


def _value(value: float | None, marker: str | None) -> float:
    if value is not None:
        return value
    return _FROM_NAME.get(str(marker), math.nan)


def _finite_or_none(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)
