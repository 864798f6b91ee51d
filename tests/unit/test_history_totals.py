"""The history's bound check reads its rows and bytes from totals kept by triggers
(history/totals.py), not from a walk over `lq_history` on every evaluation's append: the totals
stay exact through inserts, upserts, expiry by age and by bound, and are counted once for a store
written before them or whose table was dropped and made again."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from lineage_quality.history import HistoryBounds, Measured, open_history
from lineage_quality.history.store import TOTALS, SqlHistory

DAY = 86_400_000
NOW = int(time.time() * 1000)


def _row(run: str, event_ms: int = NOW - DAY, shown: str | None = None) -> Measured:
    return Measured(
        "file:/lake/orders", "rows", run, "rowCount", 5.0, "PASSED", event_ms, shown=shown
    )


def totals(store: SqlHistory) -> tuple[int, int]:
    with store._transaction() as cur:
        cur.execute(TOTALS.read, ("lq_history",))
        rows, size = cur.fetchone()
    return int(rows), int(size)


def exact(store: SqlHistory) -> tuple[int, int]:
    with store._transaction() as cur:
        cur.execute("SELECT COUNT(*), COALESCE(SUM(row_bytes), 0) FROM lq_history")
        rows, size = cur.fetchone()
    return int(rows), int(size)


def _written(where: Path, runs: int) -> None:
    """A store at `where` holding `runs` points, closed."""
    store = open_history(where)
    store.append([_row(f"run-{i}") for i in range(runs)])
    store.close()


def test_the_totals_follow_inserts_upserts_and_expiry(tmp_path: Path) -> None:
    store = open_history(tmp_path / "h.db", HistoryBounds(max_points=50, retention_days=30))
    assert totals(store) == exact(store) == (0, 0)
    store.append([_row(f"run-{i}") for i in range(40)])
    assert totals(store) == exact(store) and exact(store)[0] == 40
    store.append([_row("run-3", shown="a longer text than before")])  # an upsert, bigger
    assert totals(store) == exact(store) and exact(store)[0] == 40
    store.append([_row(f"late-{i}") for i in range(30)])  # past max_points: the oldest go
    rows, _ = exact(store)
    assert rows <= 50 and totals(store) == exact(store)
    with sqlite3.connect(tmp_path / "h.db") as raw:  # rows aged past the retention meanwhile
        raw.execute(
            "UPDATE lq_history SET event_ms = ? WHERE run_id LIKE 'late-%'", (NOW - 40 * DAY,)
        )
    raw.close()
    store.append([_row("fresh")])
    assert totals(store) == exact(store)
    assert not [p for p in store.series("file:/lake/orders", "rows") if p.run_id.startswith("late")]
    store.close()


def test_the_bound_check_reads_the_totals_and_counts_only_past_a_bound(tmp_path: Path) -> None:
    store = open_history(tmp_path / "h.db", HistoryBounds(max_points=1000))
    store.append([_row(f"run-{i}", NOW - DAY + i) for i in range(10)])
    with store._transaction() as cur:  # totals gone stale, as a TRUNCATE leaves them
        cur.execute(f"UPDATE {TOTALS.name} SET row_count = 5000")
    store.append([_row("one-more")])
    # past the bound by the totals: the table counted, nothing expired, the totals set right
    assert totals(store) == exact(store) and exact(store)[0] == 11
    with store._transaction() as cur:  # below the bound, the totals are what the check reads
        cur.execute(f"UPDATE {TOTALS.name} SET row_count = 500")
    store.append([_row("and-one-more")])
    assert totals(store) == (501, exact(store)[1])
    store.close()


def test_a_store_written_before_the_totals_is_counted_once_on_open(tmp_path: Path) -> None:
    where = tmp_path / "h.db"
    _written(where, 7)
    with sqlite3.connect(where) as raw:  # as an older version left it: no totals, no triggers
        for (name,) in raw.execute(
            "SELECT name FROM sqlite_master WHERE type = 'trigger'"
        ).fetchall():
            raw.execute(f"DROP TRIGGER {name}")
        raw.execute(f"DROP TABLE {TOTALS.name}")
        raw.execute(
            "INSERT INTO lq_history SELECT dataset, rule_id, 'raw', metric, value, nonfinite, "
            "status, event_ms, version, lower_bound, upper_bound, recorded_ms, 99, shown "
            "FROM lq_history LIMIT 1"
        )
    raw.close()
    store = open_history(where)
    assert totals(store) == exact(store) == (8, exact(store)[1])
    store.append([_row("after")])
    assert totals(store) == exact(store) and exact(store)[0] == 9
    store.close()


def test_a_table_dropped_and_made_again_is_counted_again(tmp_path: Path) -> None:
    where = tmp_path / "h.db"
    _written(where, 5)
    with sqlite3.connect(where) as raw:  # its triggers go with it; the totals stay behind
        raw.execute("DROP TABLE lq_history")
    raw.close()
    store = open_history(where)
    assert totals(store) == exact(store) == (0, 0)
    store.append([_row("again")])
    assert totals(store) == exact(store) and exact(store)[0] == 1
    store.close()


def test_a_read_only_open_makes_no_totals(tmp_path: Path) -> None:
    where = tmp_path / "h.db"
    store = open_history(where)
    store.close()
    with sqlite3.connect(where) as raw:
        raw.execute(f"DROP TABLE {TOTALS.name}")
    raw.close()
    open_history(where, read_only=True).close()
    with sqlite3.connect(where) as raw:
        found = raw.execute(
            "SELECT COUNT(*) FROM sqlite_master WHERE name = ?", (TOTALS.name,)
        ).fetchone()
    raw.close()
    assert found == (0,)
