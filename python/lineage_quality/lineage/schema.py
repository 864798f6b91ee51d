"""The lineage tables' schema (lineage/store.py keeps and reads them), on SQLite and PostgreSQL.

Version 1: the tables. Version 2 adds `lq_lineage_totals`, each table's rows and bytes kept by
triggers on it (history/totals.py), so the bound check reads a few rows instead of walking the
table (its cost no longer follows the table's size).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lineage_quality.errors import ConfigError
from lineage_quality.history.totals import Totals

SCHEMA_VERSION = 2
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

TOTALS = Totals("lq_lineage_totals", "lq_lineage_count", TABLES)
READ = TOTALS.read


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
    for statement in TOTALS.ddl(postgres):
        cur.execute(statement)
    TOTALS.recount(cur)
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
