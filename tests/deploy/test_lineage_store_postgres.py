"""The lineage tables on PostgreSQL behave as on SQLite (issue 39): the scenarios of
tests/unit/test_lineage_store.py, each on an empty database (its tables dropped first), on one
PostgreSQL (the Debian package, the Marquez tests' fixture); and two stores (two `serve`
processes) sharing it see each other's writes: the upstream kept by one, read by the other. The
tables' totals (schema 2: the scenarios of tests/unit/test_lineage_totals.py) stay exact when two
producers write at once, and when a store of version 1 is migrated while an older producer
writes to it."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest

from lineage_quality.bounds import LineageBounds
from lineage_quality.lineage import Read, Upstream, decide, observe, open_lineage

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))
import test_lineage_store as scenarios  # the scenarios, not their SQLite tests
import test_lineage_totals as totals_scenarios
from lineage_totals import exact, totals, version
from marquez_server import start_postgres  # beside the e2e tests (the path above)

TABLES = (
    "lq_lineage_writes", "lq_lineage_edges", "lq_lineage_schema", "lq_lineage_totals",
    "lq_history", "lq_history_feedback",
)  # fmt: skip


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with start_postgres(tmp_path_factory.mktemp("lineage-store-pg")) as pg:
        yield f"postgresql://{pg.user}:{pg.password}@{pg.host}:{pg.port}/{pg.database}"


def _empty(url: str) -> str:
    with psycopg.connect(url) as db:
        for table in TABLES:
            db.execute(f"DROP TABLE IF EXISTS {table}")
    return url


@pytest.mark.parametrize(
    "scenario",
    scenarios.SCENARIOS + totals_scenarios.SCENARIOS,
    ids=lambda s: s.__name__[len("scenario_") :],
)
def test_on_postgresql(scenario: Callable[[str], None], url: str) -> None:
    scenario(_empty(url))


def test_two_producers_share_the_health_of_datasets(url: str) -> None:
    _empty(url)
    upstream_side, downstream_side = open_lineage(url), open_lineage(url)
    now = int(time.time() * 1000)
    raw = scenarios._event("raw-1", now - 60_000, [], "/raw")
    scenarios._keep(upstream_side, raw, failing=3)  # evaluated by the first
    clean = scenarios._event("clean-1", now - 1000, ["/raw"], "/clean", scenarios.CLEAN_COLUMNS)
    observed = observe(clean, {}, downstream_side.written, Upstream.BLOCK)
    downstream_side.record(observed)  # the second reads the first's verdict
    assert [m.column for m in observed.marks["file:/clean"]] == ["customer_id"]
    assert decide("/clean", upstream_side.latest("file:/clean")).code == 1
    assert downstream_side.written(Read("file:/raw"), now) is not None
    upstream_side.close()
    downstream_side.close()


def _together(*works: Callable[[], None]) -> None:
    """Each work in a thread of its own, all at once; the first error raised."""
    errors: list[BaseException] = []

    def run(work: Callable[[], None]) -> None:
        try:
            work()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(w,)) for w in works]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def test_two_producers_writing_at_once_keep_the_totals_exact(url: str) -> None:
    _empty(url)
    # Both expire (past the bound and by age) while both write: two producers expiring the
    # same oldest rows at once deadlock on them now and then (the rows' locks, not the
    # totals'), and the transaction PostgreSQL rolls back is run again (history/database.py)
    bounds = LineageBounds(max_rows=120, retention_days=1, check_every=5)
    first, second = open_lineage(url, bounds), open_lineage(url, bounds)
    _together(
        lambda: totals_scenarios.run_mix(first, 1, 200, "first-"),
        lambda: totals_scenarios.run_mix(second, 2, 200, "second-"),
    )
    assert totals(first) == exact(first) == totals(second)
    assert min(rows for rows, _ in exact(first).values()) > 0
    with psycopg.connect(url) as db:  # each producer's session moved rows of its own
        shards = db.execute("SELECT COUNT(*) FROM lq_lineage_totals").fetchone()
    assert shards is not None and shards[0] >= 2
    first.close()
    second.close()


def test_a_store_migrated_while_an_older_producer_writes_counts_each_write_once(url: str) -> None:
    _empty(url)
    totals_scenarios._version_1(url, 100)
    written = threading.Event()
    stop = threading.Event()

    def older_producer() -> None:  # version 1: plain writes, one transaction each
        with psycopg.connect(url) as db:
            i, after = 0, 0
            while after < 20:  # until 20 writes after the migration
                after += stop.is_set()
                db.execute(
                    "INSERT INTO lq_lineage_writes VALUES (%s, %s, %s, NULL, 1, '{}', NULL, "
                    "%s, %s)",
                    ("file:/older", f"older-{i}", scenarios.NOW, scenarios.NOW, 10 + i % 7),
                )
                db.execute("DELETE FROM lq_lineage_edges WHERE run_id = %s", (f"run-{i}",))
                db.commit()
                i += 1
                if i == 20:
                    written.set()

    def migrate() -> None:
        written.wait(30)
        store = open_lineage(url)
        assert version(store) == 2
        store.close()
        stop.set()

    _together(older_producer, migrate)
    store = open_lineage(url)
    assert totals(store) == exact(store)
    assert exact(store)["lq_lineage_writes"][0] >= 100 + 20 + 20  # it wrote before and after
    store.close()
