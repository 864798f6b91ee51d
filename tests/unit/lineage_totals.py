"""Helpers of the lineage totals' tests (tests/unit/test_lineage_totals.py, the scenarios of
tests/unit/test_lineage_store.py, tests/deploy/test_lineage_store_postgres.py): what the
triggers' totals say and what the tables hold, on either backend."""

from __future__ import annotations

from lineage_quality.lineage import schema
from lineage_quality.lineage.store import LineageStore


def totals(store: LineageStore) -> dict[str, tuple[int, int]]:
    """Each table's (rows, bytes) as the totals keep them."""
    found = {}
    with store._reading() as cur:
        for table in schema.TABLES:
            cur.execute(store._sql(schema.READ), (table,))
            rows, size = cur.fetchone()
            found[table] = (int(rows), int(size))
    return found


def exact(store: LineageStore) -> dict[str, tuple[int, int]]:
    """Each table's (rows, bytes) counted: a walk over it."""
    found = {}
    with store._reading() as cur:
        for table in schema.TABLES:
            cur.execute(f"SELECT COUNT(*), COALESCE(SUM(row_bytes), 0) FROM {table}")
            rows, size = cur.fetchone()
            found[table] = (int(rows), int(size))
    return found


def version(store: LineageStore) -> int:
    with store._reading() as cur:
        cur.execute("SELECT MAX(version) FROM lq_lineage_schema")
        return int(cur.fetchone()[0])
