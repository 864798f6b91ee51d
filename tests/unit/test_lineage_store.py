"""The lineage tables of the history store (issue 39) on SQLite: what `observe` keeps comes back
as it was (failures, marks, versions), a run finds the write it read, `gate --dataset` names
resolve, the bounds hold, late verdicts replace the provisional ones, and a store written before
the lineage tables gains them with its history untouched (a read-only open of one without them
reads as "nothing written"). The same scenarios run on PostgreSQL in
tests/deploy/test_lineage_store_postgres.py (each `scenario_*` takes a store location)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from lineage_totals import exact, totals

from lineage_quality.bounds import LineageBounds
from lineage_quality.engine import verdict
from lineage_quality.errors import ConfigError
from lineage_quality.history import Measured, open_history
from lineage_quality.kinds import RuleKind
from lineage_quality.lineage import Failure, Read, Upstream, decide, observe, open_lineage
from lineage_quality.lineage.step import Observed
from lineage_quality.lineage.store import LineageStore, candidates
from lineage_quality.rules import Operator, Rule, Threshold
from lineage_quality.values.event import datasets_of

NOT_NULL = Rule(
    id="raw.customer_id.not_null",
    kind=RuleKind.NULL_VALUES,
    columns=["customer_id"],
    threshold=Threshold(Operator.MUST_BE, 0),
    name="customer_id_not_null",
)
NOW = int(time.time() * 1000)
MINUTE = 60_000


def _iso(ms: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms / 1000)) + ".000Z"


def _event(
    run: str,
    at: int,
    inputs: list[str],
    output: str,
    columns: dict[str, Any] | None = None,
    version: str | None = None,
) -> dict[str, Any]:
    facets: dict[str, Any] = {}
    if columns is not None:
        facets["columnLineage"] = {"fields": columns}
    if version is not None:
        facets["version"] = {"datasetVersion": version}
    return {
        "eventType": "COMPLETE",
        "eventTime": _iso(at),
        "run": {"runId": run},
        "job": {"namespace": "spark", "name": run},
        "inputs": [{"namespace": "file", "name": n} for n in inputs],
        "outputs": [{"namespace": "file", "name": output, "facets": facets}],
    }


def _keep(store: LineageStore, event: dict[str, Any], failing: int | None = None) -> Observed:
    out = next(r for r in datasets_of(event) if r.role == "outputs")
    results = {} if failing is None else {out: [verdict(NOT_NULL, failing, 10)]}
    observed = observe(event, results, store.written, Upstream.BLOCK, store.bounds.max_marks)
    store.record(observed)
    return observed


CLEAN_COLUMNS = {
    "customer_id": {"inputFields": [{"namespace": "file", "name": "/raw", "field": "customer_id"}]},
    "amount": {"inputFields": [{"namespace": "file", "name": "/raw", "field": "amount"}]},
}


def scenario_health_and_lineage_come_back_as_kept(where: str) -> None:
    store = open_lineage(where)
    _keep(store, _event("raw-1", NOW - 3 * MINUTE, [], "/raw", version="7"), failing=2)
    clean = _keep(store, _event("clean-1", NOW - 2 * MINUTE, ["/raw"], "/clean", CLEAN_COLUMNS))
    assert [m.column for m in clean.marks["file:/clean"]] == ["customer_id"]
    raw = store.latest("file:/raw")
    assert raw is not None and (raw.run, raw.version, raw.evaluated) == ("raw-1", "7", True)
    assert raw.failures == (Failure("customer_id_not_null", "ALERT", "FAILED", "customer_id"),)
    kept = store.latest("file:/clean")
    assert kept is not None and kept.marks == clean.marks["file:/clean"]
    assert kept.marks[0].origin.version == "7" and kept.marks[0].blocking
    assert decide("file:/clean", kept).code == 1  # marked under the block policy
    assert store.counts() == (2, 3)  # two writes; raw-1's output, clean-1's input and output
    # the write a run read: of the version it names, else the latest before it
    _keep(store, _event("raw-2", NOW - MINUTE, [], "/raw", version="8"), failing=0)
    assert store.written(Read("file:/raw", "7"), NOW).run == "raw-1"  # type: ignore[union-attr]
    assert store.written(Read("file:/raw"), NOW - 2 * MINUTE).run == "raw-1"  # type: ignore[union-attr]
    assert store.written(Read("file:/raw"), NOW).run == "raw-2"  # type: ignore[union-attr]
    assert store.written(Read("file:/nowhere"), NOW) is None
    # names as users write them; a catalog table by its identity (the `symlinks` facet)
    table = _event("t-1", NOW - MINUTE, [], "/warehouse/sales.db/orders")
    table["outputs"][0]["facets"]["symlinks"] = {
        "identifiers": [
            {"namespace": "hive://metastore:9083", "name": "sales.orders", "type": "TABLE"}
        ]
    }
    _keep(store, table)
    assert store.find("sales.orders") == ["file:/warehouse/sales.db/orders"]
    assert store.latest("file:/warehouse/sales.db/orders").tables == (  # type: ignore[union-attr]
        "sales.orders",
    )
    assert store.find("sales.order") == [] and store.find("orders") == []  # whole names
    assert store.find("/raw") == ["file:/raw"]
    assert store.find("file:/clean") == ["file:/clean"]
    assert store.find("clean") == []
    assert store.find("/nowhere") == []
    # the run's COMPLETE again, without its verdicts (the listener sends several): kept as it was
    _keep(store, _event("raw-2", NOW - MINUTE, [], "/raw", version="8"))
    again = store.latest("file:/raw")
    assert again is not None and again.evaluated and again.run == "raw-2"
    _keep(store, _event("raw-2", NOW - MINUTE, [], "/raw", version="8"), failing=1)
    assert store.latest("file:/raw").failures != ()  # type: ignore[union-attr]
    store.close()


def scenario_late_verdicts_replace_the_provisional_ones(where: str) -> None:
    store = open_lineage(where)
    event = _event("raw-1", NOW - MINUTE, [], "/raw")
    out = next(r for r in datasets_of(event) if r.role == "outputs")
    from lineage_quality.results import error_result

    timed_out = {out: [error_result(NOT_NULL, "evaluation timed out after 1s")]}
    store.record(observe(event, timed_out, store.written, provisional=[out]))
    pending = store.latest("file:/raw")
    assert pending is not None and not pending.evaluated and pending.failures == ()
    assert decide("/raw", pending).code == 2  # not evaluated yet
    failed = (Failure("customer_id_not_null", "BLOCK", "FAILED", "customer_id"),)
    assert store.evaluated_late("file:/raw", "raw-1", failed)
    assert not store.evaluated_late("file:/raw", "raw-9", failed)
    late = store.latest("file:/raw")
    assert late is not None and late.evaluated and late.failures == failed
    assert decide("/raw", late).code == 1
    store.close()


def scenario_the_bounds_hold(where: str) -> None:
    bounds = LineageBounds(max_rows=20, retention_days=1, max_marks=3, check_every=1)
    store = open_lineage(where, bounds)
    for i in range(60):
        _keep(store, _event(f"run-{i}", NOW - (60 - i) * 1000, [f"/in-{i}"], f"/out-{i}"))
    writes, edges = store.counts()
    assert writes <= 20 and edges <= 20
    assert store.latest("file:/out-59") is not None  # the newest stay
    assert store.latest("file:/out-0") is None  # the oldest went: unknown again, never healthy
    assert decide("/out-0", store.latest("file:/out-0")).code == 2
    old = _event("old", NOW - 2 * 86_400_000, [], "/old")  # past the retention: not kept
    assert store.record(observe(old, {}, store.written)) == 0
    ahead = _event("ahead", NOW + 3 * 86_400_000, [], "/ahead")  # too far ahead: not kept
    assert store.record(observe(ahead, {}, store.written)) == 0
    # a wide output with every column derived from a failing one: its marks collapse
    _keep(store, _event("wide-src", NOW - 500, [], "/wide-src"), failing=1)
    source = {"namespace": "file", "name": "/wide-src", "field": "customer_id"}
    wide = {f"c{i}": {"inputFields": [source]} for i in range(10)}
    wrote = _keep(store, _event("wide", NOW - 400, ["/wide-src"], "/wide", wide))
    assert [m.column for m in wrote.marks["file:/wide"]] == [None]  # 10 > 3: one whole mark
    store.close()
    # checked every 10th event: past the bound by at most 10 events' rows
    store = open_lineage(where, LineageBounds(max_rows=20, retention_days=1, check_every=10))
    for i in range(60, 100):
        _keep(store, _event(f"run-{i}", NOW - (100 - i) * 10, [f"/in-{i}"], f"/out-{i}"))
        writes, edges = store.counts()
        assert writes <= 20 + 10 and edges <= 20 + 2 * 10
    assert totals(store) == exact(store)  # the check reads the totals the triggers keep
    store.close()
    # past `max_bytes` the oldest go as well, checked every event: never past it
    store = open_lineage(where, LineageBounds(max_bytes=4_000, retention_days=1, check_every=1))
    for i in range(100, 160):
        _keep(store, _event(f"run-{i}", NOW - (160 - i) * 1000, [f"/in-{i}"], f"/out-{i}"))
        sizes = exact(store)
        assert totals(store) == sizes and all(b <= 4_000 for _, b in sizes.values())
    assert all(b >= 3_500 for _, b in sizes.values())  # the bound reached: the oldest went
    assert store.latest("file:/out-159") is not None and store.latest("file:/out-100") is None
    store.close()


def scenario_an_older_store_gains_the_tables_and_keeps_its_history(where: str) -> None:
    history = open_history(where)
    history.append([Measured("file:/raw", "r", "run-0", "rowCount", 5.0, "PASSED", NOW - MINUTE)])
    history.close()
    viewer = open_lineage(where, read_only=True)  # read-only: nothing created, nothing known
    assert not viewer.present and viewer.latest("file:/raw") is None and viewer.find("/raw") == []
    viewer.close()
    store = open_lineage(where)
    _keep(store, _event("raw-1", NOW - MINUTE, [], "/raw"), failing=0)
    store.close()
    again = open_history(where, read_only=True)
    assert [p.run_id for p in again.series("file:/raw", "r")] == ["run-0"]
    again.close()
    reader = open_lineage(where, read_only=True)
    assert reader.present and decide("/raw", reader.latest("file:/raw")).code == 0
    with pytest.raises(ConfigError, match="read-only"):
        reader.record(observe(_event("x", NOW, [], "/x"), {}, reader.written))
    reader.close()


def scenario_the_view_pages_through_the_latest_writes(where: str) -> None:
    """The quality view's reads (issue 53): each dataset's latest write a page at a time, by
    search and health; a run's edges and values; the gate from them."""
    from lineage_quality.view import data
    from lineage_quality.view.open import open_stores
    from view_store import EMPTY, HOSTILE, OK, ORDERS, fill

    fill(where, runs=3)
    stores = open_stores(where)
    store = stores.lineage
    every, total = store.latest_page(limit=100)
    names = {"file:" + n for n in (ORDERS, "/lake/clean", "/lake/agg", OK, EMPTY, *HOSTILE)}
    assert total == 9 and {w.dataset for w in every} == names
    assert all(w == store.latest(w.dataset) for w in every)  # the latest write of each
    pages = [store.latest_page(limit=4, offset=o)[0] for o in (0, 4, 8)]
    assert [w for page in pages for w in page] == every  # in the store's order of names
    assert store.latest_page(limit=4, offset=12) == ([], 9)
    for health in ("healthy", "unhealthy", "blocking", "not-evaluated"):
        found, count = store.latest_page(health=health, limit=100)
        wanted = [w for w in every if data.health(w) == health
                  or (health == "blocking" and data.health(w) == "blocked")
                  or (health == "unhealthy" and not w.healthy)]  # fmt: skip
        assert (found, count) == (wanted, len(wanted)), health
    assert [w.dataset for w in store.latest_page(search="lake/o", limit=100)[0]] in (
        [f"file:{OK}", f"file:{ORDERS}"], [f"file:{ORDERS}", f"file:{OK}"]
    )  # fmt: skip
    assert store.latest_page(search="%", limit=100)[1] == 0  # LIKE's wildcards are text
    edges = store.edges_of_run("clean-2")
    assert [(e.role, e.dataset, e.job) for e in edges] == [
        ("inputs", f"file:{ORDERS}", "spark/clean"), ("outputs", "file:/lake/clean", "spark/clean")
    ]  # fmt: skip
    assert stores.history is not None
    values = stores.history.of_run(f"file:{ORDERS}", "orders-2")
    assert [(r, p.status, p.value) for r, _, p in values] == [
        ("orders.customer_id.not_null", "FAILED", 3.0), ("orders.rows", "PASSED", 12.0)
    ]  # fmt: skip
    assert data.gate(stores, EMPTY).code == 1 and data.gate(stores, OK).code == 0
    store.close()
    stores.history.close()


SCENARIOS: list[Callable[[str], None]] = [
    scenario_health_and_lineage_come_back_as_kept,
    scenario_late_verdicts_replace_the_provisional_ones,
    scenario_the_bounds_hold,
    scenario_an_older_store_gains_the_tables_and_keeps_its_history,
    scenario_the_view_pages_through_the_latest_writes,
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.__name__[len("scenario_") :])
def test_on_sqlite(scenario: Callable[[str], None], tmp_path: Path) -> None:
    scenario(str(tmp_path / "history.db"))


def test_a_store_of_a_newer_schema_is_refused(tmp_path: Path) -> None:
    import sqlite3

    where = tmp_path / "history.db"
    open_lineage(where).close()
    with sqlite3.connect(where) as db:
        db.execute("UPDATE lq_lineage_schema SET version = 99")
    with pytest.raises(ConfigError, match="schema 99, newer than this version knows"):
        open_lineage(where)


def test_names_as_users_write_them() -> None:
    assert candidates("/lake/raw") == ["/lake/raw", "file:/lake/raw"]
    assert candidates("s3://bucket/lake/raw") == [
        "s3://bucket/lake/raw",
        "s3://bucket:lake/raw",
        "s3://bucket:/lake/raw",
    ]
    assert candidates("file:///lake/raw")[-1] == "file:/lake/raw"
