"""The lineage tables' schema (lineage/store.py keeps and reads them), on SQLite and PostgreSQL.

Version 1: the tables. Version 2 adds `lq_lineage_totals`, each table's rows and bytes kept by
triggers on it, so the bound check reads a few rows instead of walking the table (its cost no
longer follows the table's size). Triggers, not this code: every producer writing the tables --
an older version of this code too -- is counted. On PostgreSQL the totals of a table are spread
over `SHARDS` rows (by the writing session) and summed when read: one row would make every
producer's lineage transaction wait on its lock. SQLite has one writer at a time: shard 0.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lineage_quality.errors import ConfigError

SCHEMA_VERSION = 2
SHARDS = 8  # PostgreSQL: rows per table's totals
TABLES = ("lq_lineage_writes", "lq_lineage_edges")  # those the totals count

_TABLES = (
    "CREATE TABLE IF NOT EXISTS lq_lineage_schema (version INTEGER NOT NULL)",
    """CREATE TABLE IF NOT EXISTS lq_lineage_writes (
    dataset TEXT NOT NULL,
    run_id TEXT NOT NULL,
    event_ms BIGINT NOT NULL,
    version TEXT,
    evaluated INTEGER NOT NULL,
    state TEXT NOT NULL,
    tables TEXT,
    recorded_ms BIGINT NOT NULL,
    row_bytes BIGINT NOT NULL,
    PRIMARY KEY (dataset, run_id)
)""",
    "CREATE INDEX IF NOT EXISTS lq_lineage_writes_latest ON lq_lineage_writes (dataset, event_ms)",
    "CREATE INDEX IF NOT EXISTS lq_lineage_writes_age ON lq_lineage_writes (event_ms, row_bytes)",
    # the in-driver upstream guard asks what changed since it last looked
    "CREATE INDEX IF NOT EXISTS lq_lineage_writes_recorded ON lq_lineage_writes (recorded_ms)",
    """CREATE TABLE IF NOT EXISTS lq_lineage_edges (
    run_id TEXT NOT NULL,
    role TEXT NOT NULL,
    dataset TEXT NOT NULL,
    job TEXT NOT NULL,
    version TEXT,
    event_ms BIGINT NOT NULL,
    columns TEXT,
    recorded_ms BIGINT NOT NULL,
    row_bytes BIGINT NOT NULL,
    PRIMARY KEY (run_id, role, dataset)
)""",
    "CREATE INDEX IF NOT EXISTS lq_lineage_edges_dataset ON lq_lineage_edges (dataset, event_ms)",
    "CREATE INDEX IF NOT EXISTS lq_lineage_edges_age ON lq_lineage_edges (event_ms, row_bytes)",
)
VERSION_1 = _TABLES  # what a store of version 1 has (with its version row)

_TOTALS = """CREATE TABLE IF NOT EXISTS lq_lineage_totals (
    tbl TEXT NOT NULL,
    shard INTEGER NOT NULL,
    row_count BIGINT NOT NULL,
    byte_count BIGINT NOT NULL,
    PRIMARY KEY (tbl, shard)
)"""

# SQLite: the one row of each table (made with the totals) moved by each change of a row.
_SQLITE_CHANGE = (
    "UPDATE lq_lineage_totals SET row_count = row_count + ({rows}), "
    "byte_count = byte_count + ({bytes}) WHERE tbl = '{table}' AND shard = 0"
)
_CHANGED = " WHEN NEW.row_bytes <> OLD.row_bytes"  # an upsert keeping the size moves nothing
_SQLITE_EVENTS = (
    ("insert", "INSERT", "", "1", "NEW.row_bytes"),
    ("update", "UPDATE", _CHANGED, "0", "NEW.row_bytes - OLD.row_bytes"),
    ("delete", "DELETE", "", "-1", "-OLD.row_bytes"),
)

# PostgreSQL: one function for both tables, its session's shard upserted (no row until needed).
_POSTGRES_FUNCTION = f"""CREATE OR REPLACE FUNCTION lq_lineage_count() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    d_rows BIGINT;
    d_bytes BIGINT;
BEGIN
    IF TG_OP = 'INSERT' THEN
        d_rows := 1; d_bytes := NEW.row_bytes;
    ELSIF TG_OP = 'DELETE' THEN
        d_rows := -1; d_bytes := -OLD.row_bytes;
    ELSE
        d_rows := 0; d_bytes := NEW.row_bytes - OLD.row_bytes;
    END IF;
    IF d_rows <> 0 OR d_bytes <> 0 THEN
        INSERT INTO lq_lineage_totals AS t (tbl, shard, row_count, byte_count)
        VALUES (TG_TABLE_NAME, pg_backend_pid() % {SHARDS}, d_rows, d_bytes)
        ON CONFLICT (tbl, shard) DO UPDATE SET row_count = t.row_count + excluded.row_count,
            byte_count = t.byte_count + excluded.byte_count;
    END IF;
    RETURN NULL;
END
$$"""

READ = (
    "SELECT COALESCE(SUM(row_count), 0), COALESCE(SUM(byte_count), 0) FROM lq_lineage_totals "
    "WHERE tbl = ?"
)


def _totals_ddl(postgres: bool) -> list[str]:
    """The totals table and the triggers keeping it (they replace any left before)."""
    ddl = [_TOTALS]
    if postgres:
        ddl.append(_POSTGRES_FUNCTION)
        for table in TABLES:
            ddl.append(f"DROP TRIGGER IF EXISTS {table}_count ON {table}")
            ddl.append(
                f"CREATE TRIGGER {table}_count AFTER INSERT OR UPDATE OR DELETE ON {table} "
                "FOR EACH ROW EXECUTE FUNCTION lq_lineage_count()"
            )
        return ddl
    for table in TABLES:
        for name, event, when, rows, size in _SQLITE_EVENTS:
            change = _SQLITE_CHANGE.format(rows=rows, bytes=size, table=table)
            ddl.append(f"DROP TRIGGER IF EXISTS {table}_{name}")
            ddl.append(
                f"CREATE TRIGGER {table}_{name} AFTER {event} ON {table} FOR EACH ROW{when} "
                f"BEGIN {change}; END"
            )
    return ddl


def migrate(cur: Any, postgres: bool, sql: Callable[[str], str]) -> None:
    """Bring the tables to `SCHEMA_VERSION` in the caller's transaction (SQLite: one begun
    IMMEDIATE, so no other writer runs meanwhile). From version 1 (or none) the totals start
    from one count of each table taken with every other writer kept out (PostgreSQL: the two
    tables locked; SQLite: the write transaction) and the triggers made in the same
    transaction: no write is counted twice or missed. A store of a newer version is refused
    (its tables may mean other things)."""
    for statement in _TABLES:
        cur.execute(statement)
    found = _version(cur)
    if found is not None and found >= SCHEMA_VERSION:
        _refuse_newer(found)
        return
    if postgres:  # writers wait; a second producer migrating waits too, then finds version 2
        cur.execute(f"LOCK TABLE {', '.join(TABLES)} IN SHARE ROW EXCLUSIVE MODE")
        found = _version(cur)
        if found is not None and found >= SCHEMA_VERSION:
            _refuse_newer(found)
            return
    for statement in _totals_ddl(postgres):
        cur.execute(statement)
    cur.execute("DELETE FROM lq_lineage_totals")  # any left by tables dropped and made again
    for table in TABLES:
        cur.execute(
            "INSERT INTO lq_lineage_totals (tbl, shard, row_count, byte_count) "
            f"SELECT '{table}', 0, COUNT(*), COALESCE(SUM(row_bytes), 0) FROM {table}"
        )
    if found is None:
        cur.execute(sql("INSERT INTO lq_lineage_schema (version) VALUES (?)"), (SCHEMA_VERSION,))
    else:
        cur.execute(sql("UPDATE lq_lineage_schema SET version = ?"), (SCHEMA_VERSION,))


def _version(cur: Any) -> int | None:
    cur.execute("SELECT MAX(version) FROM lq_lineage_schema")
    found = cur.fetchone()[0]
    return None if found is None else int(found)


def _refuse_newer(found: int) -> None:
    if found > SCHEMA_VERSION:
        raise ConfigError(
            f"the lineage tables are of schema {found}, newer than this version knows "
            f"({SCHEMA_VERSION}): upgrade lineage-quality"
        )
