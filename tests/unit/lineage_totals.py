"""Helpers of the lineage totals' tests (tests/unit/test_lineage_totals.py, the scenarios of
tests/unit/test_lineage_store.py, tests/deploy/test_lineage_store_postgres.py): what the
triggers' totals say and what the tables hold, on either backend."""

from __future__ import annotations

from collections.abc import Callable

from lineage_quality.lineage import schema
from lineage_quality.lineage.store import LineageStore


def _per_table(store: LineageStore, query: Callable[[str], str]) -> dict[str, tuple[int, int]]:
    """Each table's (rows, bytes) as `query(table)` answers them (one row of two numbers)."""
    found = {}
    with store._reading() as cur:
        for table in schema.TABLES:
            cur.execute(query(table))
            rows, size = cur.fetchone()
            found[table] = (int(rows), int(size))
    return found


def totals(store: LineageStore) -> dict[str, tuple[int, int]]:
    """Each table's (rows, bytes) as the totals keep them."""
    return _per_table(store, lambda table: schema.READ.replace("?", f"'{table}'"))


def exact(store: LineageStore) -> dict[str, tuple[int, int]]:
    """Each table's (rows, bytes) counted: a walk over it."""
    return _per_table(store, lambda t: f"SELECT COUNT(*), COALESCE(SUM(row_bytes), 0) FROM {t}")


def version(store: LineageStore) -> int:
    with store._reading() as cur:
        cur.execute("SELECT MAX(version) FROM lq_lineage_schema")
        return int(cur.fetchone()[0])
