"""The lineage tables' totals (schema version 2, lineage/schema.py): kept by triggers, they equal
a count of each table (rows and bytes) after any mix of writes -- new writes, a run's write kept
again bigger or smaller, late verdicts, retention and bound expiry, and writes by code that knows
nothing of them (an older version); a store of version 1 gains them, exact, when a producer opens
it, and is left as it was by a read-only open. The same scenarios run on PostgreSQL in
tests/deploy/test_lineage_store_postgres.py (each `scenario_*` takes a store location)."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from lineage_totals import exact, totals, version
from test_lineage_store import CLEAN_COLUMNS, MINUTE, NOT_NULL, NOW, _event

from lineage_quality.bounds import LineageBounds
from lineage_quality.engine import verdict
from lineage_quality.history.database import Opened, connect
from lineage_quality.lineage import Failure, Upstream, decide, observe, open_lineage, schema
from lineage_quality.lineage.store import LineageStore
from lineage_quality.results import error_result
from lineage_quality.values.event import datasets_of

FAILURES = [Failure(f"rule_{i}", "BLOCK", "FAILED", f"column_{i}") for i in range(4)]


def _record(store: LineageStore, event: dict[str, Any], rng: random.Random, now: int) -> None:
    """The event kept as `serve` keeps it: evaluated (failing or not), or pending its verdicts."""
    out = next(r for r in datasets_of(event) if r.role == "outputs")
    if rng.random() < 0.2:
        pending = {out: [error_result(NOT_NULL, "evaluation timed out after 1s")]}
        observed = observe(event, pending, store.written, provisional=[out])
    else:
        failing = rng.choice([None, 0, 1, 5])
        results = {} if failing is None else {out: [verdict(NOT_NULL, failing, 10)]}
        observed = observe(event, results, store.written, Upstream.BLOCK)
    store.record(observed, now_ms=now)


def run_mix(store: LineageStore, seed: int, steps: int, prefix: str = "") -> None:
    """`steps` random events (and late verdicts) kept by `store`, the clock moving on."""
    rng = random.Random(seed)
    clock = NOW
    for _ in range(steps):
        clock += rng.randrange(0, 20 * MINUTE)  # past a day in all: rows expire by age too
        run = f"{prefix}run-{rng.randrange(40)}"  # a run's write kept again, bigger or smaller
        out = f"/out-{rng.randrange(6)}"
        pool = [f"/in-{i}" for i in range(4)] + [f"/out-{i}" for i in range(6)]
        inputs = rng.sample(pool, rng.randrange(3))
        columns = CLEAN_COLUMNS if rng.random() < 0.3 else None
        _record(store, _event(run, clock - rng.randrange(60 * MINUTE), inputs, out, columns),
                rng, clock)  # fmt: skip
        if rng.random() < 0.2:
            failed = FAILURES[: rng.randrange(len(FAILURES) + 1)]
            store.evaluated_late(f"file:{out}", run, failed, evaluated=rng.random() < 0.8)


def scenario_the_totals_follow_every_write(where: str) -> None:
    fresh = open_lineage(where)
    assert version(fresh) == schema.SCHEMA_VERSION
    assert totals(fresh) == exact(fresh) == {t: (0, 0) for t in schema.TABLES}  # zero
    fresh.close()
    # past the rows' bound, then past the bytes' (the same tables): each reached and held
    for rows, size in ((30, 10**9), (10**6, 3_000)):
        bounds = LineageBounds(max_rows=rows, max_bytes=size, retention_days=1, check_every=4)
        store = open_lineage(where, bounds)
        seen = []
        for seed in range(8):
            run_mix(store, seed, 25)
            assert totals(store) == exact(store), seed
            seen.extend(exact(store).values())
        if rows < 10**6:
            assert max(r for r, _ in seen) >= rows and all(r <= rows + 3 * 4 for r, _ in seen)
        else:
            assert max(b for _, b in seen) >= size * 0.9
            assert all(b <= size + 4 * 2_000 for _, b in seen)
        store.close()


def _raw(where: str) -> Opened:
    return connect(where, read_only=False, password_file=None, what="the test's store")


def _sql(opened: Opened, text: str) -> str:
    return text if opened.placeholder == "?" else text.replace("?", opened.placeholder)


def _version_1(where: str, rows: int) -> None:
    """A store as version 1 of the code left it: the tables, its version, `rows` rows in each."""
    opened = _raw(where)
    cur = opened.connection.cursor()
    for statement in schema.VERSION_1:
        cur.execute(statement)
    cur.execute("INSERT INTO lq_lineage_schema (version) VALUES (1)")
    cur.executemany(
        _sql(opened, "INSERT INTO lq_lineage_writes VALUES (?, ?, ?, NULL, 1, ?, NULL, ?, ?)"),
        [(f"file:/d-{i % 7}", f"run-{i}", NOW - i * 1000, '{"failures": [], "marks": []}',
          NOW, 100 + i) for i in range(rows)],
    )  # fmt: skip
    cur.executemany(
        _sql(opened, "INSERT INTO lq_lineage_edges VALUES (?, 'inputs', ?, 'job', NULL, ?, "
             "NULL, ?, ?)"),
        [(f"run-{i}", f"file:/d-{i % 5}", NOW - i * 1000, NOW, 90 + 2 * i) for i in range(rows)],
    )  # fmt: skip
    opened.connection.commit()
    opened.connection.close()


def _has_totals(where: str) -> bool:
    opened = _raw(where)
    try:
        cur = opened.connection.cursor()
        cur.execute("SELECT 1 FROM lq_lineage_totals LIMIT 0")
        return True
    except Exception:  # either module's "no such table"
        return False
    finally:
        opened.connection.close()


def scenario_a_version_1_store_gains_exact_totals(where: str) -> None:
    _version_1(where, 300)
    wanted = {
        "lq_lineage_writes": (300, sum(100 + i for i in range(300))),
        "lq_lineage_edges": (300, sum(90 + 2 * i for i in range(300))),
    }
    viewer = open_lineage(where, read_only=True)  # read-only: reads it, changes nothing
    assert viewer.present and viewer.counts() == (300, 300)
    assert decide("/d-1", viewer.latest("file:/d-1")).code == 0
    assert version(viewer) == 1 and exact(viewer) == wanted
    viewer.close()
    assert not _has_totals(where)
    store = open_lineage(where, LineageBounds(max_rows=250, retention_days=1, check_every=1))
    assert version(store) == 2 and _has_totals(where)
    assert totals(store) == exact(store) == wanted  # counted once, when the triggers came
    run_mix(store, 7, 40)  # the first kept event checks the bounds: the oldest 50+ go
    assert totals(store) == exact(store)
    assert max(rows for rows, _ in exact(store).values()) <= 250
    # a producer of version 1, still running, writes as it always did: counted too
    opened = _raw(where)
    cur = opened.connection.cursor()
    cur.execute(_sql(opened, "UPDATE lq_lineage_writes SET row_bytes = row_bytes + ?"), (3,))
    cur.execute("DELETE FROM lq_lineage_edges WHERE role = 'inputs'")
    cur.execute(
        _sql(opened, "INSERT INTO lq_lineage_edges VALUES ('old', 'outputs', 'file:/o', 'job', "
             "NULL, ?, NULL, ?, 77)"),
        (NOW, NOW),
    )  # fmt: skip
    opened.connection.commit()
    opened.connection.close()
    assert totals(store) == exact(store)
    store.close()
    again = open_lineage(where)  # version 2 already: nothing counted again
    assert version(again) == 2 and totals(again) == exact(again)
    again.close()


SCENARIOS: list[Callable[[str], None]] = [
    scenario_the_totals_follow_every_write,
    scenario_a_version_1_store_gains_exact_totals,
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.__name__[len("scenario_") :])
def test_on_sqlite(scenario: Callable[[str], None], tmp_path: Path) -> None:
    scenario(str(tmp_path / "history.db"))


def test_a_read_only_open_of_a_version_1_file_changes_none_of_its_bytes(tmp_path: Path) -> None:
    where = tmp_path / "history.db"
    _version_1(str(where), 50)
    import sqlite3

    with sqlite3.connect(where) as db:  # its log folded in: the file is all there is
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    before = where.read_bytes()
    viewer = open_lineage(where, read_only=True)
    assert viewer.counts() == (50, 50) and viewer.latest("file:/d-3") is not None
    viewer.close()
    assert where.read_bytes() == before
