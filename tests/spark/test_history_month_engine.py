"""Issue 42's acceptance on measurements the engine made: a month and a half of daily writes
(tests/history_month.py: a weekly rhythm, a spike, a null-rate jump, a lasting new level), each
day's rows evaluated in one SparkSession and judged against a SQLite history as serve and
in-driver mode do (judge_and_record), with relativeChange, absoluteChange, stddev on a count, a
percentage and a mean, and seasonal rules: every planted anomaly FAILs, at most 2 false alarms
per rule, the new level fails no more runs than docs/history.md says, and `history accept` makes
the next run pass. Then `check --history` keeps and judges history like serve."""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from history_month import (
    DATASET,
    DAYS,
    SHIFT,
    check_month,
    failed_days,
    history_rules,
    measured,
    replay,
    rows_sql,
    run_id,
)
from lineage_quality.cli import main
from lineage_quality.cli.check import run_check
from lineage_quality.contracts.shacl import ShaclOptions
from lineage_quality.history import open_history
from lineage_quality.results import RuleResult, Status

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def engine_results(spark: Any) -> dict[int, list[RuleResult]]:
    """Each day's history rules as the engine measured them (one scan per day)."""
    from lineage_quality.engine.run import evaluate_dataframe

    # one partition, built in the JVM: each day's evaluation is one small task
    table = spark.sql(rows_sql()).repartition(1).cache()
    rules = history_rules()
    out = {}
    for day in range(DAYS):
        out[day] = evaluate_dataframe(table.where(f"day = {day}").drop("day"), rules)
    table.unpersist()
    return out


def test_the_engine_measures_the_series_the_unit_test_judges(
    engine_results: dict[int, list[RuleResult]],
) -> None:
    for day, results in engine_results.items():
        expected = measured(day)
        for r in results:
            assert r.status in (Status.PASSED, Status.FAILED), r
            assert r.actual == pytest.approx(expected[str(r.rule.name)]), (day, r)


def test_a_month_of_daily_writes_under_the_history_rules(
    engine_results: dict[int, list[RuleResult]], tmp_path: Path
) -> None:
    store = open_history(tmp_path / "history.db")
    verdicts = replay(store, lambda day: engine_results[day])
    found = check_month(verdicts)
    assert found["null_rate_usual"] == [23] and found["rows_ratio"] == [30, SHIFT], found
    store.close()


def test_history_accept_makes_the_next_run_pass(
    engine_results: dict[int, list[RuleResult]], tmp_path: Path
) -> None:
    db = tmp_path / "history.db"
    store = open_history(db)
    ids = {str(r.rule.name): r.rule.id for r in engine_results[0]}

    def accept(day: int, today: Mapping[str, RuleResult]) -> None:
        if day == SHIFT:
            assert today["rows_usual"].status is Status.FAILED
            assert main(
                ["history", "accept", "--history", str(db), "--dataset", DATASET,
                 "--rule", ids["rows_usual"], "--run", run_id(SHIFT), "--why", "new region"]
            ) == 0  # fmt: skip

    verdicts = replay(store, lambda day: engine_results[day], accept)
    assert failed_days(verdicts["rows_usual"]) & set(range(SHIFT, DAYS)) == {SHIFT}
    assert verdicts["rows_usual"][SHIFT + 1].status is Status.PASSED
    store.close()


def test_check_keeps_and_judges_history(spark: Any, tmp_path: Path) -> None:
    contract = tmp_path / "orders.json"
    contract.write_text(
        json.dumps(
            {"rules": [{"field": "id", "type": "integer"}],
             "history": [{"name": "rows_ratio", "metric": "rowCount",
                          "compare": "relativeChange", "min": 0.8, "max": 1.25}]}
        )
    )  # fmt: skip
    data = tmp_path / "orders"
    db = tmp_path / "history.db"
    statuses = []
    for n in (100, 104, 50):
        spark.range(n).selectExpr("CAST(id AS INT) AS id").write.mode("overwrite").parquet(
            str(data)
        )
        out = io.StringIO()
        code = run_check(
            contract, str(data), "parquet", "json", None, ShaclOptions(), None,
            out=out, err=io.StringIO(), history=str(db),
        )  # fmt: skip
        report = json.loads(out.getvalue())
        (ratio,) = [r for r in report["results"] if r.get("name") == "rows_ratio"]
        statuses.append((code, ratio["status"]))
    assert statuses == [(0, "SKIPPED"), (0, "PASSED"), (1, "FAILED")], statuses
    store = open_history(db, read_only=True)
    points = store.series(f"file:{data.resolve()}", "rows_ratio")
    assert [p.value for p in points] == [100, 104, 50]
    assert len({p.run_id for p in points}) == 3  # each check is a run of its own
    store.close()
