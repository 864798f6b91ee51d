"""The history store on PostgreSQL behaves as on SQLite (issue 44, cases 4 and 10): an older table
is upgraded in place (its NaN and infinities become markers), non-finite values stay out of
baselines, the byte bound and the name hash hold, far-future times are never kept, and a
read-only open creates nothing. One PostgreSQL (the Debian package, the Marquez tests' fixture)."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from lineage_quality.errors import ConfigError
from lineage_quality.history import HistoryBounds, Measured, open_history

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
from marquez_server import start_postgres  # beside the e2e tests (the path above)

DAY = 86_400_000
RECENT = (int(time.time() * 1000) // DAY - 10) * DAY
YEAR_9999 = 253_402_214_400_000
OLD_SCHEMA = """CREATE TABLE lq_history (
    dataset TEXT NOT NULL, rule_id TEXT NOT NULL, run_id TEXT NOT NULL, metric TEXT NOT NULL,
    value DOUBLE PRECISION NOT NULL, status TEXT NOT NULL, event_ms BIGINT NOT NULL,
    version TEXT, lower_bound DOUBLE PRECISION, upper_bound DOUBLE PRECISION,
    recorded_ms BIGINT NOT NULL, PRIMARY KEY (dataset, rule_id, run_id))"""


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with start_postgres(tmp_path_factory.mktemp("history-store-pg")) as pg:
        yield f"postgresql://{pg.user}:{pg.password}@{pg.host}:{pg.port}/{pg.database}"


def _tables(url: str) -> int:
    with psycopg.connect(url) as db:
        found = db.execute(
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_name = 'lq_history'"
        ).fetchone()
    return int(found[0]) if found else 0


def test_the_postgresql_store_upgrades_and_keeps_its_bounds(url: str) -> None:
    with pytest.raises(ConfigError, match="not a history store"):
        open_history(url, read_only=True)
    assert _tables(url) == 0  # the viewer created nothing
    with psycopg.connect(url) as db:
        db.execute(OLD_SCHEMA)
        for i, value in enumerate(["5", "NaN", "Infinity", "-Infinity"]):
            db.execute(
                "INSERT INTO lq_history VALUES ('file:/a', 'r', %s, 'rowCount', %s::float8, "
                "'PASSED', %s, NULL, NULL, NULL, 0)",
                (f"run{i}", value, RECENT + i * DAY),
            )
    viewer = open_history(url, read_only=True)  # an older table, read as it is
    assert [repr(p.value) for p in viewer.series("file:/a", "r")] == ["5.0", "nan", "inf", "-inf"]
    viewer.close()

    store = open_history(url, HistoryBounds(max_bytes=20_000))
    with psycopg.connect(url) as db:
        rows = db.execute(
            "SELECT value, nonfinite, row_bytes > 0 FROM lq_history ORDER BY event_ms"
        ).fetchall()
    assert rows == [
        (5.0, None, True), (None, "NaN", True), (None, "Infinity", True), (None, "-Infinity", True)
    ]  # fmt: skip
    store.append([Measured("file:/a", "r", "run4", "rowCount", 3, "PASSED", RECENT + 4 * DAY)])
    assert [p.value for p in store.series("file:/a", "r", finite_only=True)] == [5.0, 3.0]
    # a masked column's value: kept raw, with the text its readers show (the column added)
    masked = Measured("file:/m", "r", "m1", "statistic", 987653, "PASSED", RECENT, shown="***")
    store.append([masked])
    assert [(p.value, p.shown) for p in store.series("file:/m", "r")] == [(987653.0, "***")]

    assert store.append([Measured("file:/z", "r", "z", "rowCount", 1, "PASSED", YEAR_9999)]) == 0
    long_name, long_rule = "file:/b" + "x" * 600, "r" * 600
    for i in range(100):
        store.append([Measured(long_name, long_rule, f"q{i}", "rowCount", i, "PASSED", RECENT + i)])
    with psycopg.connect(url) as db:
        size, longest = db.execute(
            "SELECT SUM(row_bytes), MAX(LENGTH(dataset)) FROM lq_history"
        ).fetchone() or (0, 0)
    assert size <= 20_000 and longest == 512
    assert store.series(long_name, long_rule)[-1].run_id == "q99"
    store.close()


def test_the_version_verdicts_are_shared_through_postgresql(url: str) -> None:
    """Issue 51.1: two producers on one PostgreSQL: what one evaluated, the other reuses (the
    first kept stays), within the bounds."""
    from lineage_quality.history.versions import VersionBounds, open_version_verdicts

    now = int(time.time() * 1000)
    one = open_version_verdicts(url, VersionBounds(max_rows=2, days=1.0))
    other = open_version_verdicts(url, VersionBounds(max_rows=2, days=1.0))
    assert other.find("file:/a", "v1", "r") is None
    assert one.keep("file:/a", "v1", "r", "run-1", '{"shape":1}', now_ms=now - 1000)
    assert other.keep("file:/a", "v1", "r", "run-2", "late", now_ms=now)  # a race: first stays
    kept = other.find("file:/a", "v1", "r")
    assert kept is not None and (kept.run_id, kept.results) == ("run-1", '{"shape":1}')
    assert isinstance(kept.evaluated_ms, int) and kept.evaluated_ms == now - 1000
    assert other.find("file:/a", "v1", "r", now_ms=now + DAY) is None  # past `days`
    for i in range(3):
        one.keep("file:/b", f"v{i}", "r", f"run-b{i}", "[]", now_ms=now + i)
    one.expire(now + 10)
    assert one.count() == 2 and other.find("file:/b", "v2", "r") is not None
    one.close()
    other.close()


def test_metric_states_are_shared_through_postgresql(url: str) -> None:
    """Issue 51.2: the states one producer kept for a version, another merges into; the newest
    versions of a dataset are kept, exact numbers stay exact."""
    from decimal import Decimal

    from lineage_quality.engine.states import States
    from lineage_quality.history import open_history
    from lineage_quality.history import states as state_store
    from lineage_quality.history.states import StateStore

    one, other = open_history(url), open_history(url)
    first, second = StateStore(one), StateStore(other)
    kept = States(rows=3, metrics={"sum": Decimal(2**70), "avg": [1.5, 2]}, key_sets={"k": (3, 2)})
    assert first.put("file:/orders", "files:1:abc", kept, "run-1")
    found = second.get("file:/orders", "files:1:abc")
    assert found is not None and found[1] == "run-1"
    assert found[0].metrics["sum"] == Decimal(2**70) and found[0].key_sets["k"] == (3, 2)
    for i in range(state_store.PER_DATASET + 2):
        assert second.put("file:/orders", f"v{i}", States(rows=i), "run-2")
    assert first.get("file:/orders", "v0") is None
    assert first.get("file:/orders", "files:1:abc") is None
    assert first.get("file:/orders", f"v{state_store.PER_DATASET + 1}") is not None
    one.close()
    other.close()


def _totals_and_exact(url: str) -> tuple[tuple[int, int], tuple[int, int]]:
    with psycopg.connect(url) as db:
        kept = db.execute(
            "SELECT COALESCE(SUM(row_count), 0), COALESCE(SUM(byte_count), 0) "
            "FROM lq_history_totals WHERE tbl = 'lq_history'"
        ).fetchone()
        counted = db.execute(
            "SELECT COUNT(*), COALESCE(SUM(row_bytes), 0) FROM lq_history"
        ).fetchone()
    assert kept is not None and counted is not None
    return (int(kept[0]), int(kept[1])), (int(counted[0]), int(counted[1]))


def test_the_totals_stay_exact_with_two_producers_expiring_at_once(url: str) -> None:
    """The bound check reads totals kept by triggers (history/totals.py): counted once for a
    store written before them, then exact while two producers append and expire the same oldest
    rows at once (a transaction PostgreSQL rolls back for a deadlock is run again)."""
    import threading

    open_history(url).close()
    with psycopg.connect(url) as db:  # as a version before the totals left the store
        db.execute("DROP TRIGGER lq_history_count ON lq_history")
        db.execute("DROP TABLE lq_history_totals")
    stores = [open_history(url, HistoryBounds(max_points=200)) for _ in range(2)]
    kept, counted = _totals_and_exact(url)
    assert kept == counted and counted[0] > 0  # the earlier tests' rows, counted on open
    failed: list[BaseException] = []

    def write(k: int) -> None:
        try:
            for i in range(60):
                stores[k].append(
                    [
                        Measured(f"file:/t{k}", f"r{j}", f"t{k}-{i}", "rowCount", i, "PASSED",
                                 RECENT + i * 1000 + j)
                        for j in range(5)
                    ]
                )  # fmt: skip
        except BaseException as exc:  # reported by the test
            failed.append(exc)

    threads = [threading.Thread(target=write, args=(k,)) for k in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failed, failed
    kept, counted = _totals_and_exact(url)
    assert kept == counted and counted[0] <= 200
    with psycopg.connect(url) as db:  # fires no row trigger: the totals stay as they were
        db.execute("TRUNCATE lq_history")
    more = 201 - counted[0]  # the stale totals pass the bound of 200 with these
    stores[0].append(
        [
            Measured("file:/t", f"r{i}", "after", "rowCount", 1, "PASSED", RECENT)
            for i in range(more)
        ]
    )
    kept, counted = _totals_and_exact(url)
    assert counted[0] == more and kept == counted  # none expired, the totals set right
    for store in stores:
        store.close()
