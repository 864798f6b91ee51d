"""Run bookkeeping for `GET /api/v1/runs/{runId}` and `lineage-quality gate`, in the spool's
database, bounded by `RunBookBounds`.

Three tables, written on the spool's writer connection under its lock (inside the spool's
transactions: a put records its run in its own transaction):
- `runs`: per run id (a run, its parent's, its root's), how many COMPLETE events of it wait in the
  spool, `lost` when its earlier state expired, and `at`, when it was last recorded;
- `run_verdicts`: the verdict rows (JSON) kept under each run id, with their size;
- `failed_runs`: runs whose FAIL event was seen (their outputs are not evaluated).

Every run id, verdict byte and failed run counts against the bounds; the counts are kept in memory
(counted once at open, again after a rolled-back transaction: `resync`), so a write costs no scan.
Past a bound, or past the retention, the least recently recorded runs expire whole, their row and
all their verdicts: an expired run is unknown (404, `gate` exits 2). A run seen again after its
state expired -- a COMPLETE counted down that was never counted up here, verdicts that cannot be
kept -- is marked `lost` and stays unknown: never "evaluated" with some of its verdicts missing,
which would read as a pass.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable, Iterable, Sequence

from lineage_quality.bounds import MAX_RUN_ID_CHARS, RunBookBounds

log = logging.getLogger(__name__)

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS runs ("
    " run_id TEXT PRIMARY KEY, pending INTEGER NOT NULL DEFAULT 0, at REAL NOT NULL)",
    "CREATE TABLE IF NOT EXISTS run_verdicts"
    " (run_id TEXT NOT NULL, body TEXT NOT NULL, at REAL NOT NULL)",
    "CREATE TABLE IF NOT EXISTS failed_runs (run_id TEXT PRIMARY KEY, at REAL NOT NULL)",
)
# Columns added after the first release; older spools get them on open.
_COLUMNS = {
    "runs": {"lost": "INTEGER NOT NULL DEFAULT 0"},
    "run_verdicts": {"size": "INTEGER NOT NULL DEFAULT 0"},
}
_INDEXES = (
    "CREATE INDEX IF NOT EXISTS run_verdicts_run ON run_verdicts (run_id)",
    # the least recently recorded runs first, without a scan (expiry)
    "CREATE INDEX IF NOT EXISTS runs_at ON runs (at)",
    "CREATE INDEX IF NOT EXISTS failed_runs_at ON failed_runs (at)",
)
PRUNE_EVERY = 60.0  # seconds between looks for runs past their retention
WARN_EVERY = 600.0  # seconds between warnings that runs expire before their retention
_CHUNK = 500  # run ids per `IN (...)`
RECENT_RUNS = 100_000  # runs remembered as recorded by this process (RecentRuns)

Write = Callable[[str, tuple[object, ...]], sqlite3.Cursor]


def _chunks(ids: Sequence[str]) -> Iterable[Sequence[str]]:
    for start in range(0, len(ids), _CHUNK):
        yield ids[start : start + _CHUNK]


class RunBook:
    """The run tables of one spool. `write` runs a statement on the spool's writer connection
    (the store's `write`, which handles a full disk); the caller holds the spool's writer lock,
    and, for the methods that write more than one statement, a transaction."""

    def __init__(self, db: sqlite3.Connection, write: Write, bounds: RunBookBounds) -> None:
        self._db = db
        self._write = write
        self.bounds = bounds
        for statement in _SCHEMA:
            db.execute(statement)
        for table, columns in _COLUMNS.items():
            present = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
            for name, decl in columns.items():
                if name not in present:
                    db.execute(f"ALTER TABLE {table} ADD COLUMN {name} {decl}")
        for statement in _INDEXES:
            db.execute(statement)
        # Verdicts of older versions: sized once; those under no run (pruned apart from their
        # run before) could never be read.
        db.execute("UPDATE run_verdicts SET size = length(CAST(body AS BLOB)) WHERE size = 0")
        db.execute("DELETE FROM run_verdicts WHERE run_id NOT IN (SELECT run_id FROM runs)")
        self._runs = self._failed = self._verdict_bytes = 0
        self._pruned = 0.0
        self._warned = -WARN_EVERY
        self.resync()

    def resync(self) -> None:
        """Count again what the tables hold (after a transaction was rolled back)."""
        one = self._db.execute
        self._runs = int(one("SELECT count(*) FROM runs").fetchone()[0])
        self._failed = int(one("SELECT count(*) FROM failed_runs").fetchone()[0])
        self._verdict_bytes = int(
            one("SELECT coalesce(sum(size), 0) FROM run_verdicts").fetchone()[0]
        )

    @property
    def usage(self) -> tuple[int, int, int]:
        """(run ids, verdict bytes, failed runs) held now."""
        return self._runs, self._verdict_bytes, self._failed

    # -- runs -----------------------------------------------------------------------------------

    def record(self, run_ids: Sequence[str], pending: int) -> None:
        """Record runs (a run and its parent's and root's) and add `pending` to the COMPLETE
        events of each that wait (+1 when one is stored, -1 when it left the spool)."""
        now = time.time()
        for run_id in run_ids:
            if len(run_id) > MAX_RUN_ID_CHARS:
                continue  # the receiver refuses these: never a key here
            cur = self._write(
                "UPDATE runs SET pending = max(0, pending + ?), at = ? WHERE run_id = ?",
                (pending, now, run_id),
            )
            if cur.rowcount:
                continue
            # New, or its state expired: a COMPLETE counted down that was never counted up
            # here means what the run had is gone (lost: unknown from now on).
            self._write(
                "INSERT INTO runs (run_id, pending, lost, at) VALUES (?, ?, ?, ?)",
                (run_id, max(pending, 0), int(pending < 0), now),
            )
            self._runs += 1
        self._bound(now)

    def report(self, run_id: str) -> tuple[int, list[str]] | None:
        """(COMPLETE events still waiting, verdict bodies) of a run; None when unknown or lost."""
        row = self._db.execute("SELECT pending, lost FROM runs WHERE run_id = ?", (run_id,))
        found = row.fetchone()
        if found is None or found[1]:
            return None
        bodies = self._db.execute(
            "SELECT body FROM run_verdicts WHERE run_id = ? ORDER BY rowid", (run_id,)
        )
        return int(found[0]), [str(r[0]) for r in bodies]

    def add_verdicts(self, run_ids: Sequence[str], body: str) -> None:
        """Keep `body` (a JSON list of verdict rows) under each of `run_ids` that is known. Room is
        made by expiring the runs whose verdicts are oldest; a run whose verdicts cannot all be
        kept is marked lost (unknown), never left with some of them."""
        now = time.time()
        size = len(body.encode())
        for run_id in dict.fromkeys(run_ids):
            row = self._db.execute("SELECT lost FROM runs WHERE run_id = ?", (run_id,)).fetchone()
            if row is None or row[0]:
                continue  # unknown (never recorded, or expired) or lost: stays so
            if not self._make_room(size, keep=run_id):
                self._lose(
                    run_id, now, f"its verdicts would pass {self.bounds.max_verdict_bytes} bytes"
                )
                continue
            self._write(
                "INSERT INTO run_verdicts (run_id, body, size, at) VALUES (?, ?, ?, ?)",
                (run_id, body, size, now),
            )
            self._verdict_bytes += size
            self._write("UPDATE runs SET at = ? WHERE run_id = ?", (now, run_id))
        self._bound(now)

    def _make_room(self, size: int, keep: str) -> bool:
        """Expire the runs with the oldest verdicts, `keep` aside, until `size` more bytes fit;
        False when they cannot (`keep`'s own verdicts and `size` are over the bound)."""
        limit = self.bounds.max_verdict_bytes
        own = self._db.execute(
            "SELECT coalesce(sum(size), 0) FROM run_verdicts WHERE run_id = ?", (keep,)
        ).fetchone()[0]
        if int(own) + size > limit:  # would not fit with every other run's verdicts gone
            return False
        while self._verdict_bytes + size > limit:
            oldest = self._db.execute(
                "SELECT run_id FROM run_verdicts WHERE run_id != ? ORDER BY rowid LIMIT 1", (keep,)
            ).fetchone()
            if oldest is None:
                return False
            self._expire([str(oldest[0])])
            self._warn(f"verdicts reached their bound of {limit} bytes")
        return True

    def _lose(self, run_id: str, now: float, why: str) -> None:
        self._drop_verdicts([run_id])
        self._write("UPDATE runs SET lost = 1, pending = 0, at = ? WHERE run_id = ?", (now, run_id))
        log.warning("run %s is unknown from now on (GET /api/v1/runs answers 404): %s", run_id, why)

    # -- failed runs ----------------------------------------------------------------------------

    def mark_failed(self, run_id: str) -> None:
        if len(run_id) > MAX_RUN_ID_CHARS:
            return
        now = time.time()
        cur = self._write("UPDATE failed_runs SET at = ? WHERE run_id = ?", (now, run_id))
        if not cur.rowcount:
            self._write("INSERT INTO failed_runs (run_id, at) VALUES (?, ?)", (run_id, now))
            self._failed += 1
        self._bound(now)

    def failed(self, run_id: str) -> bool:
        row = self._db.execute("SELECT 1 FROM failed_runs WHERE run_id = ?", (run_id,))
        return row.fetchone() is not None

    # -- bounds ---------------------------------------------------------------------------------

    def _bound(self, now: float) -> None:
        """Expire past the retention (at most every PRUNE_EVERY seconds) and past the bounds."""
        if now - self._pruned >= PRUNE_EVERY:
            self._pruned = now
            cutoff = now - self.bounds.retention
            while old := self._oldest("runs", 1_000, cutoff):
                self._expire(old)
            cur = self._write("DELETE FROM failed_runs WHERE at < ?", (cutoff,))
            self._failed -= cur.rowcount
        excess = self._runs - self.bounds.max_runs
        if excess > 0:
            # 1 % more than needed: at the bound, a flood of new runs pays for one batch of
            # deletes per 1 % of the bound, not for one per run (~30 us each)
            self._expire(self._oldest("runs", excess + self.bounds.max_runs // 100))
            self._warn(f"{self.bounds.max_runs} runs are recorded (the bound)")
        excess = self._failed - self.bounds.max_runs
        if excess > 0:
            for chunk in _chunks(self._oldest("failed_runs", excess)):
                marks = ",".join("?" * len(chunk))
                cur = self._write(
                    f"DELETE FROM failed_runs WHERE run_id IN ({marks})", tuple(chunk)
                )
                self._failed -= cur.rowcount

    def _oldest(self, table: str, n: int, before: float | None = None) -> list[str]:
        where = "" if before is None else "WHERE at < ?"
        params: tuple[object, ...] = (n,) if before is None else (before, n)
        rows = self._db.execute(f"SELECT run_id FROM {table} {where} ORDER BY at LIMIT ?", params)
        return [str(r[0]) for r in rows]

    def _expire(self, run_ids: Sequence[str]) -> None:
        """Forget runs whole: their rows and every verdict kept under them."""
        self._drop_verdicts(run_ids)
        for chunk in _chunks(run_ids):
            marks = ",".join("?" * len(chunk))
            cur = self._write(f"DELETE FROM runs WHERE run_id IN ({marks})", tuple(chunk))
            self._runs -= cur.rowcount

    def _drop_verdicts(self, run_ids: Sequence[str]) -> None:
        for chunk in _chunks(run_ids):
            marks = ",".join("?" * len(chunk))
            size = self._db.execute(
                f"SELECT coalesce(sum(size), 0) FROM run_verdicts WHERE run_id IN ({marks})",
                tuple(chunk),
            ).fetchone()[0]
            self._write(f"DELETE FROM run_verdicts WHERE run_id IN ({marks})", tuple(chunk))
            self._verdict_bytes -= int(size)

    def _warn(self, what: str) -> None:
        """Runs expire before their retention: say so, at most every WARN_EVERY seconds."""
        now = time.monotonic()
        if now - self._warned >= WARN_EVERY:
            self._warned = now
            log.warning(
                "run bookkeeping: %s; the least recently recorded runs expire (GET /api/v1/runs "
                "and gate answer 'unknown run' for them). See RunBookBounds in docs/reliability.md",
                what,
            )


class RecentRuns:
    """Runs this process recorded: a START, RUNNING or FAIL of a run recorded already only makes
    it known, so its run need not be written again (a write saved on nearly every event). Guarded
    by the store's `db_lock`; forgotten whole past RECENT_RUNS (they are written again once)."""

    def __init__(self) -> None:
        self._runs: set[str] = set()

    def unseen(self, run_ids: Sequence[str], pending: int) -> list[str]:
        """Runs to write: all of them when their pending count changes, else those not recorded
        yet by this process."""
        if pending:
            return list(run_ids)
        if len(self._runs) > RECENT_RUNS:
            self._runs.clear()
        return [r for r in run_ids if r not in self._runs]

    def update(self, run_ids: Iterable[str]) -> None:
        self._runs.update(run_ids)
