"""Dataset health and lineage in the history store (SQLite beside the spool, or the PostgreSQL
shared by several producers): two tables beside `lq_history`, bounded by `LineageBounds`.

- `lq_lineage_writes`: one row per (dataset, run) write: its event time, table version,
  whether it was evaluated, its failed rules and upstream marks (JSON), and its catalog table
  identities (`symlinks`: `gate --dataset db.table`). A dataset's health
  is its latest write (by event time).
- `lq_lineage_edges`: one row per (run, role, dataset): what a run read (and the version) and
  wrote, the job, and the output's column lineage (JSON; past `MAX_COLUMNS_BYTES` left out and
  `truncated` said).

Schema (lineage/schema.py): `lq_lineage_schema` holds the version of these tables (2); a store
written before them gains them when a producer opens it (nothing else changes: `lq_history` and
its readers are untouched), one of version 1 gains `lq_lineage_totals` (each table's rows and
bytes, kept by triggers), and a store opened read-only is never changed (one without the tables
reads as one where nothing was written).
Bounds, as the history's: rows older than the retention by the wall clock expire, past
`max_rows` or `max_bytes` in a table the oldest go (the check reads the totals, not the table),
a name past its bound is cut and hashed (history.names.key) and a time more than a day ahead of
the clock is not kept.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from lineage_quality.bounds import MAX_FUTURE_SKEW_SECONDS, LineageBounds
from lineage_quality.errors import ConfigError
from lineage_quality.history.database import Grouped, Statements, connect, made
from lineage_quality.history.names import MAX_RUN_ID, key
from lineage_quality.lineage import schema
from lineage_quality.lineage.model import (
    Failure,
    Read,
    Reader,
    Write,
    as_json,
    failure_of,
    mark_of,
)
from lineage_quality.lineage.step import Observed

MAX_COLUMNS_BYTES = 256 * 1024  # an edge's column lineage kept at most (JSON bytes)
MAX_TABLES = 16  # catalog table identities kept per write
ROW_OVERHEAD = 64
_FUTURE_MS = MAX_FUTURE_SKEW_SECONDS * 1000
# what `json.dumps(..., ensure_ascii=False)` writes, its encoder made once (not per call)
_JSON = json.JSONEncoder(ensure_ascii=False)
_TRUNCATED = json.dumps({"truncated": True})

# A run's write kept again (the listener sends several COMPLETEs of one run): an evaluated write
# is never replaced by a not evaluated one (its verdicts and marks stay).
_NEWER = "excluded.evaluated = 1 OR lq_lineage_writes.evaluated = 0"
_WRITE_UPSERT = (
    "INSERT INTO lq_lineage_writes (dataset, run_id, event_ms, version, evaluated, state, "
    "tables, recorded_ms, row_bytes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (dataset, "
    "run_id) DO UPDATE SET event_ms = excluded.event_ms, version = excluded.version, "
    "tables = excluded.tables, "
    f"evaluated = CASE WHEN {_NEWER} THEN excluded.evaluated ELSE 1 END, "
    f"state = CASE WHEN {_NEWER} THEN excluded.state ELSE lq_lineage_writes.state END, "
    "recorded_ms = excluded.recorded_ms, "
    f"row_bytes = CASE WHEN {_NEWER} THEN excluded.row_bytes ELSE lq_lineage_writes.row_bytes END"
)
_EDGE_UPSERT = (
    "INSERT INTO lq_lineage_edges (run_id, role, dataset, job, version, event_ms, columns, "
    "recorded_ms, row_bytes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (run_id, role, "
    "dataset) DO UPDATE SET job = excluded.job, version = excluded.version, event_ms = "
    "excluded.event_ms, columns = excluded.columns, recorded_ms = excluded.recorded_ms, "
    "row_bytes = excluded.row_bytes"
)
_KEYS = {"lq_lineage_writes": "dataset, run_id", "lq_lineage_edges": "run_id, role, dataset"}
_WRITE_COLUMNS = "dataset, run_id, event_ms, version, evaluated, state, tables"


# The latest writes a health filter keeps, and its parameters (the state as `_write_row` writes
# it: no failure and no mark is exactly `_CLEAN`; the texts as parameters, no `%` in the SQL).
_CLEAN = '{"failures": [], "marks": []}'
HEALTH_FILTERS: dict[str, tuple[str, tuple[Any, ...]]] = {
    "healthy": (" AND evaluated = 1 AND state = ?", (_CLEAN,)),
    "unhealthy": (" AND state <> ?", (_CLEAN,)),
    "blocking": (
        " AND (state LIKE ? OR state LIKE ?)",
        ('%"action": "BLOCK"%', '%"blocking": true%'),
    ),
    "not-evaluated": (" AND evaluated = 0", ()),
}


@attrs.frozen
class Edge:
    """What a run read (`role` "inputs") or wrote ("outputs"): the dataset, the job, the
    version read or written, the run's event time."""

    role: str
    dataset: str
    job: str
    version: str | None
    event_ms: int


def _expire_oldest(table: str) -> str:
    """The oldest rows of `table`, as many as `?` rows or until `?` bytes are gone."""
    keys = _KEYS[table]
    return (
        f"DELETE FROM {table} WHERE ({keys}) IN (SELECT {keys} FROM (SELECT {keys}, "
        "ROW_NUMBER() OVER (ORDER BY event_ms ROWS UNBOUNDED PRECEDING) AS n, "
        "SUM(row_bytes) OVER (ORDER BY event_ms ROWS UNBOUNDED PRECEDING) - row_bytes "
        "AS bytes_before "
        f"FROM {table}) AS oldest WHERE n <= ? OR bytes_before < ?)"
    )


class LineageStore(Statements):
    """The lineage tables over a DB-API connection (`?` placeholders; PostgreSQL's `%s`
    substituted). `read_only`: nothing is created, changed or expired."""

    def __init__(
        self,
        connection: Any,
        bounds: LineageBounds | None = None,
        *,
        read_only: bool = False,
        placeholder: str = "?",
    ) -> None:
        self._db = connection
        self.bounds = bounds or LineageBounds()
        self.read_only = read_only
        self.placeholder = placeholder
        self._lock = threading.Lock()
        self._grouped = Grouped(self)  # the workers' records: one commit for those queued
        self._kept = self.bounds.check_every - 1  # events kept since the bounds were checked
        if not read_only:
            self._migrate()
        self.present = read_only is False or self._has_tables()

    # -- schema ---------------------------------------------------------------------------------

    def _migrate(self) -> None:
        """Create the tables a store without them lacks, bring an older one to
        `SCHEMA_VERSION` (schema.py); a store of a newer version than this code knows is
        refused."""
        with self._transaction() as cur:
            if self.placeholder == "?" and not self._db.in_transaction:  # no writer meanwhile
                cur.execute("BEGIN IMMEDIATE")
            schema.migrate(cur, self.placeholder != "?", self._sql)

    def _has_tables(self) -> bool:
        try:
            with self._transaction() as cur:
                cur.execute("SELECT 1 FROM lq_lineage_writes LIMIT 0")
            return True
        except Exception:  # each DB-API module has its own classes: any is "not there"
            return False

    # -- writing --------------------------------------------------------------------------------

    def record(self, observed: Observed, now_ms: int | None = None) -> int:
        """Keep one event's writes and edges, in one transaction (with the records other threads
        queued meanwhile: `Grouped`), bounds applied in it; returns the rows kept (none when its
        time is past the retention or too far ahead)."""
        if self.read_only:
            raise ConfigError("this lineage store was opened read-only")
        now = int(time.time() * 1000) if now_ms is None else now_ms
        run = observed.run
        if not self._keepable(run.event_ms, now):
            return 0
        writes = [self._write_row(w, now) for w in observed.writes]
        edges = [
            self._edge_row(
                run.run, "inputs", r.dataset, run.job, r.version, run.event_ms, None, now
            )
            for r in run.reads
        ]
        for w in run.writes:
            columns = None
            if w.columns is not None:
                columns = _JSON.encode(
                    {
                        "columns": {
                            c: [[f.dataset, f.field, f.direct] for f in fields]
                            for c, fields in w.columns.items()
                        },
                        "sources": sorted(w.sources),
                    }
                )
                if _utf8_len(columns) > MAX_COLUMNS_BYTES:
                    columns = _TRUNCATED
            edges.append(
                self._edge_row(
                    run.run, "outputs", w.dataset, run.job, w.version, run.event_ms, columns, now
                )
            )

        def write(cur: Any) -> int:
            if writes:
                cur.executemany(self._sql(_WRITE_UPSERT), writes)
            if edges:
                cur.executemany(self._sql(_EDGE_UPSERT), edges)
            self._kept += 1
            if self._kept >= self.bounds.check_every:  # the first event, then every n-th
                self._expire(cur, now)
                self._kept = 0
            return len(writes) + len(edges)

        return self._grouped.run(write)

    def evaluated_late(
        self, dataset: str, run: str, failures: Sequence[Failure], evaluated: bool = True
    ) -> bool:
        """A write's verdicts that came after its event (an evaluation past its deadline): its
        failed rules and `evaluated` replace the kept ones, its marks stay. False: no such
        write is kept."""
        if self.read_only:
            raise ConfigError("this lineage store was opened read-only")
        with self._transaction() as cur:
            cur.execute(
                self._sql(
                    f"SELECT {_WRITE_COLUMNS} FROM lq_lineage_writes "
                    "WHERE dataset = ? AND run_id = ?"
                ),
                (key(dataset), key(run, MAX_RUN_ID)),
            )
            row = cur.fetchone()
            if row is None:
                return False
            kept = _write(row)
            write = attrs.evolve(kept, evaluated=evaluated, failures=tuple(failures))
            cur.execute(self._sql(_WRITE_UPSERT), self._write_row(write, int(time.time() * 1000)))
        return True

    def _keepable(self, event_ms: int, now: int) -> bool:
        oldest = now - int(self.bounds.retention_days * 86_400_000)
        return oldest <= event_ms <= now + _FUTURE_MS

    def _write_row(self, w: Write, now: int) -> tuple[Any, ...]:
        state = _CLEAN  # the usual write: nothing failed, nothing marked
        if w.failures or w.marks:
            state = _JSON.encode(
                {
                    "failures": [as_json(f) for f in w.failures],
                    "marks": [as_json(m) for m in w.marks],
                }
            )
        # each identity on a line of its own, the first and last too (found with LIKE)
        tables = "".join(f"\n{key(t)}" for t in w.tables[:MAX_TABLES]) + "\n" if w.tables else None
        texts = (key(w.dataset), key(w.run, MAX_RUN_ID), _cut(w.version), state, tables)
        size = ROW_OVERHEAD + sum(_utf8_len(t) for t in texts)
        return (
            texts[0],
            texts[1],
            w.event_ms,
            texts[2],
            int(w.evaluated),
            state,
            tables,
            now,
            size,
        )

    def _edge_row(
        self,
        run: str,
        role: str,
        dataset: str,
        job: str,
        version: str | None,
        event_ms: int,
        columns: str | None,
        now: int,
    ) -> tuple[Any, ...]:
        texts = (key(run, MAX_RUN_ID), role, key(dataset), key(job), _cut(version))
        size = ROW_OVERHEAD + sum(_utf8_len(t) for t in texts) + _utf8_len(columns)
        return (*texts[:4], texts[4], event_ms, columns, now, size)

    def _expire(self, cur: Any, now: int) -> None:
        oldest = now - int(self.bounds.retention_days * 86_400_000)
        for table in _KEYS:
            cur.execute(
                self._sql(f"DELETE FROM {table} WHERE event_ms < ? OR event_ms > ?"),
                (oldest, now + _FUTURE_MS),
            )
            rows, size = self.bounds.max_rows, self.bounds.max_bytes
            count, total = schema.TOTALS.size(cur, table, self._sql, rows, size)  # no walk
            excess_rows = count - rows + rows // 100 if count > rows else 0
            excess_bytes = total - size + size // 100 if total > size else 0
            if excess_rows or excess_bytes:
                cur.execute(self._sql(_expire_oldest(table)), (excess_rows, excess_bytes))

    # -- reading --------------------------------------------------------------------------------

    def latest(self, dataset: str) -> Write | None:
        """The dataset's latest kept write (its health), None when none is kept."""
        return self._one("dataset = ?", (key(dataset),))

    def written(self, read: Read, event_ms: int) -> Write | None:
        """The write a run completed at `event_ms` read: the one of the version the run names
        (when kept), else the latest one up to `event_ms`."""
        if read.version is not None:
            wanted = (key(read.dataset), _cut(read.version))
            found = self._one("dataset = ? AND version = ?", wanted)
            if found is not None:
                return found
        return self._one("dataset = ? AND event_ms <= ?", (key(read.dataset), event_ms))

    def _one(self, where: str, args: tuple[Any, ...]) -> Write | None:
        if not self.present:
            return None
        with self._reading() as cur:
            cur.execute(
                self._sql(
                    f"SELECT {_WRITE_COLUMNS} FROM lq_lineage_writes WHERE {where} "
                    "ORDER BY event_ms DESC, recorded_ms DESC LIMIT 1"
                ),
                args,
            )
            row = cur.fetchone()
        return None if row is None else _write(row)

    def latest_changed(self, since_ms: int) -> list[Write]:
        """The latest write of each dataset whose latest write was kept (or its verdicts came)
        at `since_ms` or after, by this store's clocks (`recorded_ms`)."""
        if not self.present:
            return []
        with self._reading() as cur:
            cur.execute(
                self._sql(
                    f"SELECT {_WRITE_COLUMNS} FROM lq_lineage_writes w WHERE recorded_ms >= ? "
                    "AND NOT EXISTS (SELECT 1 FROM lq_lineage_writes n WHERE n.dataset = "
                    "w.dataset AND (n.event_ms > w.event_ms OR (n.event_ms = w.event_ms AND "
                    "n.recorded_ms > w.recorded_ms)))"
                ),
                (since_ms,),
            )
            return [_write(row) for row in cur.fetchall()]

    def write_of(self, dataset: str, run: str) -> Write | None:
        """The write of `dataset` by `run`, if kept."""
        return self._one("dataset = ? AND run_id = ?", (key(dataset), key(run, MAX_RUN_ID)))

    def writes(self, dataset: str, limit: int = 200) -> list[Write]:
        """The dataset's kept writes, latest first (at most `limit`)."""
        return self._many("dataset = ?", (key(dataset),), limit)

    def writes_of_run(self, run: str, limit: int = 1000) -> list[Write]:
        """The writes `run` made (its outputs' health)."""
        return self._many("run_id = ?", (key(run, MAX_RUN_ID),), limit)

    def readers(self, dataset: str, since_ms: int, limit: int = 1000) -> list[Reader]:
        """The runs that read `dataset` and completed at or after `since_ms`, oldest first."""
        if not self.present:
            return []
        with self._reading() as cur:
            cur.execute(
                self._sql(
                    "SELECT run_id, job, version, event_ms FROM lq_lineage_edges WHERE role = "
                    "'inputs' AND dataset = ? AND event_ms >= ? ORDER BY event_ms LIMIT ?"
                ),
                (key(dataset), since_ms, limit),
            )
            rows = cur.fetchall()
        return [Reader(str(r[0]), str(r[1]), None if r[2] is None else str(r[2]), int(r[3]))
                for r in rows]  # fmt: skip

    def _many(self, where: str, args: tuple[Any, ...], limit: int) -> list[Write]:
        if not self.present:
            return []
        with self._reading() as cur:
            cur.execute(
                self._sql(
                    f"SELECT {_WRITE_COLUMNS} FROM lq_lineage_writes WHERE {where} "
                    "ORDER BY event_ms DESC, recorded_ms DESC LIMIT ?"
                ),
                (*args, limit),
            )
            rows = cur.fetchall()
        return [_write(r) for r in rows]

    def latest_page(
        self, search: str = "", health: str = "", limit: int = 50, offset: int = 0
    ) -> tuple[list[Write], int]:
        """Each dataset's latest write (its health), by name, one page of them and how many in
        all: `search` a part of the name, `health` one of `HEALTH_FILTERS` (else every one).
        The view's datasets list (view/): the names from the `latest` index, each one's latest
        write found by a probe of it (no scan of every write); without a health filter only the
        page's names are probed."""
        if not self.present:
            return [], 0
        where, args = "", list[Any]()
        if search:
            where = "WHERE dataset LIKE ? ESCAPE '!'"
            args.append("%" + _like(key(search.strip())) + "%")
        every = f"SELECT DISTINCT dataset FROM lq_lineage_writes {where}"
        filtered = health in HEALTH_FILTERS
        names = every if filtered else every + " ORDER BY dataset LIMIT ? OFFSET ?"
        latest = (
            f"SELECT {_WRITE_COLUMNS} FROM lq_lineage_writes WHERE (dataset, run_id) IN "
            "(SELECT d.dataset, (SELECT n.run_id FROM lq_lineage_writes n WHERE n.dataset = "
            "d.dataset ORDER BY n.event_ms DESC, n.recorded_ms DESC LIMIT 1) FROM "
            f"({names}) AS d)" + HEALTH_FILTERS.get(health, ("", ()))[0]
        )
        args += HEALTH_FILTERS.get(health, ("", ()))[1]
        with self._reading() as cur:
            if filtered:
                cur.execute(self._sql(f"SELECT COUNT(*) FROM ({latest}) AS c"), args)
                total = int(cur.fetchone()[0])
                cur.execute(
                    self._sql(f"{latest} ORDER BY dataset LIMIT ? OFFSET ?"),
                    (*args, limit, offset),
                )
            else:
                cur.execute(self._sql(f"SELECT COUNT(*) FROM ({every}) AS c"), args)
                total = int(cur.fetchone()[0])
                cur.execute(self._sql(f"{latest} ORDER BY dataset"), (*args, limit, offset))
            rows = cur.fetchall()
        return [_write(r) for r in rows], total

    def edges_of_run(self, run: str, limit: int = 1000) -> list[Edge]:
        """What `run` read and wrote (role `inputs` or `outputs`), by role and dataset."""
        if not self.present:
            return []
        with self._reading() as cur:
            cur.execute(
                self._sql(
                    "SELECT role, dataset, job, version, event_ms FROM lq_lineage_edges WHERE "
                    "run_id = ? ORDER BY role, dataset LIMIT ?"
                ),
                (key(run, MAX_RUN_ID), limit),
            )
            rows = cur.fetchall()
        return [Edge(str(r[0]), str(r[1]), str(r[2]), None if r[3] is None else str(r[3]),
                     int(r[4])) for r in rows]  # fmt: skip

    def find(self, name: str) -> list[str]:
        """The kept datasets `name` may mean: `namespace:name` as the facets write it, a path
        (`/lake/raw`: `file:/lake/raw`), a URL (`s3://bucket/raw`: `s3://bucket:raw`), a catalog
        table identity of it (`db.table`, from its `symlinks` facet), or a bare name matching a
        dataset's name part."""
        if not self.present:
            return []
        wanted = [key(c) for c in candidates(name)]
        marks = ", ".join("?" for _ in wanted)
        with self._transaction() as cur:
            cur.execute(
                self._sql(
                    f"SELECT DISTINCT dataset FROM lq_lineage_writes WHERE dataset IN "
                    f"({marks}) ORDER BY dataset"
                ),
                wanted,
            )
            found = [str(r[0]) for r in cur.fetchall()]
            if found:
                return found
            cur.execute(  # a catalog table identity of it (db.table)
                self._sql(
                    "SELECT DISTINCT dataset FROM lq_lineage_writes WHERE tables LIKE ? "
                    "ESCAPE '!' ORDER BY dataset LIMIT 10"
                ),
                ("%\n" + _like(key(name.strip())) + "\n%",),
            )
            found = [str(r[0]) for r in cur.fetchall()]
            if found:
                return found
            cur.execute(
                self._sql(
                    "SELECT DISTINCT dataset FROM lq_lineage_writes WHERE dataset LIKE ? "
                    "ESCAPE '!' ORDER BY dataset LIMIT 10"
                ),
                ("%:" + _like(name.strip()),),
            )
            return [str(r[0]) for r in cur.fetchall()]

    def counts(self) -> tuple[int, int]:
        """(writes, edges) kept."""
        if not self.present:
            return 0, 0
        with self._transaction() as cur:
            cur.execute("SELECT COUNT(*) FROM lq_lineage_writes")
            writes = int(cur.fetchone()[0])
            cur.execute("SELECT COUNT(*) FROM lq_lineage_edges")
            return writes, int(cur.fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()


def candidates(name: str) -> list[str]:
    """The dataset keys `name` may be written as (see `LineageStore.find`)."""
    name = name.strip()
    found = [name]
    if name.startswith("/"):
        found.append(f"file:{name}")
    scheme, sep, rest = name.partition("://")
    if sep and "/" in rest:
        host, _, path = rest.partition("/")
        found.append(f"{scheme}://{host}:{path}")
        found.append(f"{scheme}://{host}:/{path}")
    if name.startswith("file:") and not name.startswith("file://"):
        found.append(name)
    elif name.startswith("file://"):
        found.append("file:" + name[len("file://") :])
    return list(dict.fromkeys(found))


def _like(text: str) -> str:
    return text.replace("!", "!!").replace("%", "!%").replace("_", "!_")


def _utf8_len(text: str | None) -> int:
    """`text`'s length in UTF-8 bytes (0: None); ASCII (nearly every name) without encoding."""
    if not text:
        return 0
    return len(text) if text.isascii() else len(text.encode("utf-8"))


def _cut(text: str | None, limit: int = 256) -> str | None:
    return None if text is None else key(text, 2**62)[:limit]


def _write(row: Sequence[Any]) -> Write:
    state = json.loads(row[5]) if row[5] else {}
    return Write(
        str(row[0]),
        str(row[1]),
        int(row[2]),
        None if row[3] is None else str(row[3]),
        bool(row[4]),
        tuple(failure_of(f) for f in state.get("failures", ())),
        tuple(mark_of(m) for m in state.get("marks", ())),
        tuple(t for t in str(row[6] or "").split("\n") if t),
    )


def open_lineage(
    where: str | Path,
    bounds: LineageBounds | None = None,
    *,
    read_only: bool = False,
    password_file: str | Path | None = None,
) -> LineageStore:
    """The lineage tables of the history store at a SQLite path or a `postgresql://` URL (as
    `history.open_history`: the same database, a connection of its own)."""
    what = "the lineage store"
    opened = connect(where, read_only=read_only, password_file=password_file, what=what)
    return made(
        lambda: LineageStore(
            opened.connection, bounds, read_only=read_only, placeholder=opened.placeholder
        ),
        opened,
        what,
    )
