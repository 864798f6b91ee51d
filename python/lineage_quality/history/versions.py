"""`VersionVerdicts`: the verdicts of each evaluated dataset version, in the history store
(SQLite beside the spool, or the PostgreSQL several producers and in-driver jobs share), so
that a version already evaluated with the same rules is not scanned again by a later reader,
a re-report, or another producer (evaluation/reuse.py says what a version and a rule set are).

One row per (dataset, version, rule set): the results as JSON (verdict_json.py), the run that
evaluated them and when. Bounded by `VersionBounds`: rows evaluated more than `days` ago are
never reused and expire; past `max_rows` rows (or `max_bytes`) the oldest go; a row larger
than `MAX_ROW_BYTES` is not kept (that version is evaluated again).
"""

from __future__ import annotations

import contextlib
import threading
import time
from pathlib import Path
from typing import Any

import attrs

from lineage_quality.history.database import Statements, connect, made

ROW_OVERHEAD = 64
MAX_ROW_BYTES = 4 * 1024 * 1024  # one evaluation's results, at most (else not kept)
_TABLE = """CREATE TABLE IF NOT EXISTS lq_version_verdicts (
    dataset TEXT NOT NULL,
    version_key TEXT NOT NULL,
    rules_key TEXT NOT NULL,
    run_id TEXT NOT NULL,
    evaluated_ms BIGINT NOT NULL,
    results TEXT NOT NULL,
    row_bytes BIGINT NOT NULL,
    PRIMARY KEY (dataset, version_key, rules_key)
)"""
_INDEX = (
    "CREATE INDEX IF NOT EXISTS lq_version_verdicts_age ON lq_version_verdicts (evaluated_ms)"
)
_KEYS = "dataset, version_key, rules_key"


@attrs.frozen
class VersionBounds:
    """How long and how many versions' verdicts are kept for reuse (settings: `--reuse-days`,
    `--reuse-max-versions`)."""

    max_rows: int = attrs.field(default=100_000, validator=attrs.validators.gt(0))
    days: float = attrs.field(default=30.0, validator=attrs.validators.gt(0))
    max_bytes: int = attrs.field(default=256 * 1024 * 1024, validator=attrs.validators.gt(0))
    check_every: int = attrs.field(default=64, validator=attrs.validators.gt(0))


@attrs.frozen
class Kept:
    """The verdicts of one version: the run that evaluated them, when (epoch ms), as JSON."""

    run_id: str
    evaluated_ms: int
    results: str


class VersionVerdicts(Statements):
    """The table over a DB-API connection (`?` placeholders; PostgreSQL's `%s` substituted),
    one statement at a time under a lock (the workers share it)."""

    def __init__(
        self, connection: Any, bounds: VersionBounds | None = None, *, placeholder: str = "?"
    ) -> None:
        self._db = connection
        self.bounds = bounds or VersionBounds()
        self.placeholder = placeholder
        self._lock = threading.Lock()
        self._kept = 0  # rows kept since the bounds were checked
        with self._transaction() as cur:
            cur.execute(_TABLE)
            cur.execute(_INDEX)

    def find(
        self, dataset: str, version_key: str, rules_key: str, now_ms: int | None = None
    ) -> Kept | None:
        """The verdicts kept for this version and rule set within `days`, else None."""
        now = _now_ms() if now_ms is None else now_ms
        oldest = now - int(self.bounds.days * 86_400_000)
        with self._reading() as cur:
            cur.execute(
                self._sql(
                    "SELECT run_id, evaluated_ms, results FROM lq_version_verdicts WHERE "
                    "dataset = ? AND version_key = ? AND rules_key = ? AND evaluated_ms >= ?"
                ),
                (dataset, version_key, rules_key, oldest),
            )
            row = cur.fetchone()
        if row is None:
            return None
        run_id, evaluated, results = row
        if not isinstance(run_id, str) or not isinstance(results, str):
            return None  # a row someone else wrote otherwise: evaluated again
        if not isinstance(evaluated, int):
            return None
        return Kept(run_id, evaluated, results)

    def keep(
        self,
        dataset: str,
        version_key: str,
        rules_key: str,
        run_id: str,
        results: str,
        now_ms: int | None = None,
    ) -> bool:
        """Keep one version's verdicts (the first evaluation's stay: another producer may have
        kept the same version meanwhile); False when too large to keep."""
        now = _now_ms() if now_ms is None else now_ms
        size = len(results.encode("utf-8", "surrogatepass")) + len(dataset) + ROW_OVERHEAD
        if size > MAX_ROW_BYTES:
            return False
        with self._transaction() as cur:
            cur.execute(
                self._sql(
                    f"INSERT INTO lq_version_verdicts ({_KEYS}, run_id, evaluated_ms, results, "
                    "row_bytes) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT "
                    f"({_KEYS}) DO NOTHING"
                ),
                (dataset, version_key, rules_key, run_id[:128], now, results, size),
            )
        self._kept += 1
        if self._kept >= self.bounds.check_every:
            self._kept = 0
            self.expire(now)
        return True

    def expire(self, now_ms: int | None = None) -> None:
        """Rows past `days`, then the oldest past `max_rows` / `max_bytes`."""
        now = _now_ms() if now_ms is None else now_ms
        oldest = now - int(self.bounds.days * 86_400_000)
        with self._transaction() as cur:
            cur.execute(
                self._sql("DELETE FROM lq_version_verdicts WHERE evaluated_ms < ?"), (oldest,)
            )
            cur.execute("SELECT COUNT(*), COALESCE(SUM(row_bytes), 0) FROM lq_version_verdicts")
            count, size = (int(v) for v in cur.fetchone())
            over_rows = count - self.bounds.max_rows
            over_bytes = size - self.bounds.max_bytes
            if over_rows <= 0 and over_bytes <= 0:
                return
            cur.execute(
                self._sql(
                    f"DELETE FROM lq_version_verdicts WHERE ({_KEYS}) IN (SELECT {_KEYS} FROM "
                    f"(SELECT {_KEYS}, ROW_NUMBER() OVER (ORDER BY evaluated_ms) AS n, "
                    "SUM(row_bytes) OVER (ORDER BY evaluated_ms ROWS UNBOUNDED PRECEDING) - "
                    "row_bytes AS bytes_before FROM lq_version_verdicts) AS oldest "
                    "WHERE n <= ? OR bytes_before < ?)"
                ),
                (max(over_rows, 0), max(over_bytes, 0)),
            )

    def count(self) -> int:
        with self._reading() as cur:
            cur.execute("SELECT COUNT(*) FROM lq_version_verdicts")
            return int(cur.fetchone()[0])

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._db.close()


def _now_ms() -> int:
    return int(time.time() * 1000)


def open_version_verdicts(
    where: str | Path,
    bounds: VersionBounds | None = None,
    *,
    password_file: str | Path | None = None,
) -> VersionVerdicts:
    """The version verdicts of the history store at a SQLite path or a `postgresql://` URL
    (the same database as the history, a connection of its own)."""
    what = "the version verdicts"
    opened = connect(where, read_only=False, password_file=password_file, what=what)
    return made(
        lambda: VersionVerdicts(opened.connection, bounds, placeholder=opened.placeholder),
        opened,
        what,
    )
