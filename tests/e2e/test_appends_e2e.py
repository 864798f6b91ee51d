"""Appends judged on their own rows under the real listener (issue 51): each append's verdicts
come from the kept states of the version before it merged with the run's own files, say so in
`params.scope`, and give exactly the numbers a whole scan of the table as of the run's completion
gives; a compaction (an overwrite, Delta's OPTIMIZE) is read whole and the states start again
from it. Plain Parquet files and a Delta table, side by side."""

from __future__ import annotations

from typing import Any

import pytest
from pipeline import HERE, REPO_ROOT, run_with_producer

from lineage_quality.contracts import load_contracts
from lineage_quality.evaluation.session import table_format_jars
from lineage_quality.history import open_history
from lineage_quality.producer import Evaluator
from lineage_quality.sparksubmit import listener_jar

pytestmark = pytest.mark.e2e

CONTRACTS = HERE / "appends_contracts"
# per COMPLETE on the table, in order: the rows, and whether the verdict came from merged states
EXPECTED = [(3000, False), (3500, True), (4000, True), (4000, False), (4500, True)]
TABLES = {"orders": "", "orders_delta": "delta_"}  # the table's name under `appends`: rule prefix


@pytest.fixture(scope="module")
def series(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    workdir = tmp_path_factory.mktemp("appends")
    path = workdir / "appends" / "orders"
    history = open_history(workdir / "history.db")
    jars = ",".join(str(j) for j in [listener_jar(REPO_ROOT), *table_format_jars()])
    events: list[dict[str, Any]] = []
    merged = 0
    scanned: dict[str, list[Any]] = {}
    # two applications, two producers sharing one history store: the second merges into the
    # states the first kept
    for phase in ("grow", "compact"):
        found, evaluator = run_with_producer(
            spark,
            CONTRACTS,
            "append_series_job.py",
            [str(path), phase],
            workdir / phase,
            {
                "spark.openlineage.namespace": "e2e-appends",
                "spark.jars": jars,
                "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
                "spark.sql.catalog.spark_catalog": (
                    "org.apache.spark.sql.delta.catalog.DeltaCatalog"
                ),
            },
            history=history,
        )
        events += found
        merged += evaluator.increments.merged
        # each version read whole by a producer without states, before the next phase
        # rewrites the files
        whole = Evaluator(load_contracts([CONTRACTS]), spark=spark)
        for table in TABLES:
            at = path.parent / table
            for event in _on_table(found, at):
                (results,) = [v for k, v in whole.evaluate(event).items() if k.name == str(at)]
                scanned[(table, event["eventTime"])] = results
        assert whole.increments.merged == 0
    return {"base": path.parent, "events": events, "merged": merged, "whole": scanned}


def _on_table(events: list[dict[str, Any]], path: Any) -> list[dict[str, Any]]:
    """The COMPLETEs of writes to the table, with our facet, in order."""
    return sorted(
        (
            e
            for e in events
            if e["eventType"] == "COMPLETE"
            and any(
                o["name"] == str(path) and "dataQualityAssertions" in o.get("facets", {})
                for o in e["outputs"]
            )
        ),
        key=lambda e: e["eventTime"],
    )


def _assertions(event: dict[str, Any], path: Any) -> dict[str, dict[str, Any]]:
    (out,) = [o for o in event["outputs"] if o["name"] == str(path)]
    return {a["name"]: a for a in out["facets"]["dataQualityAssertions"]["assertions"]}


def _expected(series: dict[str, Any], table: str) -> list[tuple[int, bool]]:
    if table == "orders":
        return EXPECTED
    # Delta: whether the listener sends OPTIMIZE's COMPLETE decides whether the last append
    # finds the states of the version before it
    optimized = len(_on_table(series["events"], series["base"] / table)) == 5
    return [*EXPECTED[:3], *([(4000, False)] if optimized else []), (4500, optimized)]


@pytest.mark.parametrize("table", sorted(TABLES))
def test_appends_are_merged_and_say_so(series: dict[str, Any], table: str) -> None:
    path, prefix = series["base"] / table, TABLES[table]
    completes = _on_table(series["events"], path)
    expected = _expected(series, table)
    assert len(completes) == len(expected), [e["job"]["name"] for e in completes]
    for event, (rows, merged) in zip(completes, expected, strict=True):
        found = _assertions(event, path)[f"{prefix}orders_rows"]
        assert found.get("actual") == str(rows), str(found["params"])
        scope = found["params"].get("scope", "")
        assert ("kept state(s)" in scope) is merged, scope
    assert series["merged"] == sum(m for t in TABLES for _, m in _expected(series, t))


@pytest.mark.parametrize("table", sorted(TABLES))
def test_merged_verdicts_equal_a_whole_scan(series: dict[str, Any], table: str) -> None:
    """A producer without a history store reads each version whole (files as of each run's
    completion, a Delta version by time travel): the same statuses and numbers."""
    path, prefix = series["base"] / table, TABLES[table]
    completes = _on_table(series["events"], path)
    for event in completes:
        forwarded = _assertions(event, path)
        for r in series["whole"][(table, event["eventTime"])]:
            a = forwarded[r.rule.name or r.rule.id]
            assert a["success"] is r.success, (r.rule.id, a)
            if r.observed is not None:  # a column's type
                assert a["actual"] == r.observed
                continue
            assert a["actual"] is not None, (r.rule.id, a)
            shown = float(str(a["actual"]).rstrip("%"))  # a percent is shown with its sign
            assert shown == pytest.approx(float(r.actual or 0), rel=1e-3), (r.rule.id, a)
            assert a["params"].get("failures") == r.failing_rows, (r.rule.id, a)
    failing = {n for n, a in _assertions(completes[-1], path).items() if not a["success"]}
    assert {f"{prefix}order_id_unique", f"{prefix}email_pattern"} <= failing
