"""In the manner of Deequ's "join jobs into one for combinable analyzers": count Spark jobs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lineage_quality.engine.run import evaluate_dataframe
from lineage_quality.kinds import RuleKind
from lineage_quality.rules import Operator, Rule, Threshold, Unit

pytestmark = pytest.mark.spark


def ten_rules() -> list[Rule]:
    z = Threshold(Operator.MUST_BE, 0)
    return [
        Rule(id="1", kind=RuleKind.ROW_COUNT, threshold=Threshold(Operator.GREATER_THAN, 0)),
        Rule(id="2", kind=RuleKind.NULL_VALUES, columns=["id"], threshold=z),
        Rule(id="3", kind=RuleKind.NULL_VALUES, columns=["name"], threshold=z),
        Rule(
            id="4",
            kind=RuleKind.NULL_VALUES,
            columns=["name"],
            threshold=Threshold(Operator.LESS_THAN, 5),
            unit=Unit.PERCENT,
        ),
        Rule(id="5", kind=RuleKind.NULL_VALUES, columns=["score"], threshold=z),
        Rule(
            id="6",
            kind=RuleKind.INVALID_VALUES,
            columns=["kind"],
            valid_values=["a", "b"],
            threshold=z,
        ),
        Rule(
            id="7", kind=RuleKind.INVALID_VALUES, columns=["name"], pattern="^n[0-9]+$", threshold=z
        ),
        Rule(
            id="8",
            kind=RuleKind.MISSING_VALUES,
            columns=["name"],
            missing_values=["", "N/A"],
            threshold=z,
        ),
        Rule(
            id="9",
            kind=RuleKind.INVALID_VALUES,
            columns=["kind"],
            valid_values=["a"],
            threshold=Threshold(Operator.LESS_THAN, 60),
            unit=Unit.PERCENT,
        ),
        Rule(id="10", kind=RuleKind.ROW_COUNT, threshold=Threshold(Operator.BETWEEN, 1, 10_000)),
    ]


@pytest.fixture(scope="module")
def dataset(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    path = Path(tmp_path_factory.mktemp("jobs")) / "data"
    rows = [(i, f"n{i}", "a" if i % 2 else "b", float(i)) for i in range(1000)]
    spark.createDataFrame(rows, "id INT, name STRING, kind STRING, score DOUBLE").repartition(
        4
    ).write.parquet(str(path))
    return spark.read.parquet(str(path))


def _jobs(spark: Any, group: str, fn: Any) -> int:
    sc = spark.sparkContext
    sc.setJobGroup(group, group)
    try:
        fn()
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
    return len(sc.statusTracker().getJobIdsForGroup(group))


def _stages(spark: Any) -> Any:
    sc = spark.sparkContext
    jvm = sc._jvm
    # the status store is fed by the listener bus, asynchronously: wait until it has caught up
    sc._jsc.sc().listenerBus().waitUntilEmpty()
    empty = jvm.java.util.ArrayList()
    no_quantiles = sc._gateway.new_array(jvm.double, 0)
    # AppStatusStore.stageList(statuses, details, withSummaries, unsortedQuantiles, taskStatus)
    stages = sc._jsc.sc().statusStore().stageList(empty, False, False, no_quantiles, empty)
    return [stages.apply(i) for i in range(stages.size())]


def _stage_mark(spark: Any) -> int:
    """The latest stage id so far (stage ids only grow)."""
    return max((s.stageId() for s in _stages(spark)), default=-1)


def _input_records(spark: Any, since: int) -> int:
    """Rows read by the stages after `since` (`_stage_mark`). Only those: the store keeps a
    bounded number of stages (spark.ui.retainedStages), so a sum over all of them drops the
    oldest ones as new ones come, and a difference of two sums comes out short."""
    return sum(s.inputRecords() for s in _stages(spark) if s.stageId() > since)


def test_ten_fusable_rules_run_as_one_job(spark: Any, dataset: Any) -> None:
    spark.conf.set("spark.sql.adaptive.enabled", "false")
    try:
        results: list[Any] = []
        jobs = _jobs(
            spark, "lq-ten-rules", lambda: results.extend(evaluate_dataframe(dataset, ten_rules()))
        )
    finally:
        spark.conf.unset("spark.sql.adaptive.enabled")
    assert jobs == 1
    assert len(results) == 10 and all(r.success for r in results), [
        (r.rule.id, r.status, r.actual) for r in results
    ]


def test_with_adaptive_execution_the_data_is_still_read_once(spark: Any, dataset: Any) -> None:
    # AQE materializes each shuffle stage as its own job; what matters is one pass over the data.
    before = _stage_mark(spark)
    evaluate_dataframe(dataset, ten_rules())
    assert _input_records(spark, before) == 1000


def test_metrics_and_the_profile_ride_the_same_single_job(spark: Any, dataset: Any) -> None:
    # dataQualityMetrics come from the scan the rules need: no job of their own, profile or not.
    spark.conf.set("spark.sql.adaptive.enabled", "false")
    try:
        for profile in (False, True):
            results: list[Any] = []

            def evaluate(out: list[Any] = results, p: bool = profile) -> None:
                out.extend(evaluate_dataframe(dataset, ten_rules(), p))

            jobs = _jobs(spark, f"lq-profile-{profile}", evaluate)
            assert jobs == 1, profile
            measures = results[0].measures
            assert measures is not None and measures.rows == 1000
            assert all(r.measures is measures for r in results)
            columns = dict(measures.columns)
            assert columns["id"].nulls == 0 and columns["name"].nulls == 0
            if profile:
                assert (columns["score"].min, columns["score"].max) == (0.0, 999.0)
                assert columns["id"].sum == sum(range(1000)) and columns["kind"].nulls == 0
    finally:
        spark.conf.unset("spark.sql.adaptive.enabled")
    before = _stage_mark(spark)
    evaluate_dataframe(dataset, ten_rules(), profile=True)
    assert _input_records(spark, before) == 1000  # and the data is read once


def test_uniqueness_adds_one_pass_per_key_set(spark: Any, dataset: Any) -> None:
    z = Threshold(Operator.MUST_BE, 0)
    rules = [
        *ten_rules(),
        Rule(id="u1", kind=RuleKind.DUPLICATE_VALUES, columns=["id"], threshold=z),
        Rule(
            id="u2", kind=RuleKind.DUPLICATE_VALUES, columns=["id"], unit=Unit.PERCENT, threshold=z
        ),
        Rule(id="u3", kind=RuleKind.DUPLICATE_VALUES, columns=["kind", "id"], threshold=z),
    ]
    before = _stage_mark(spark)
    results = evaluate_dataframe(dataset, rules)
    assert _input_records(spark, before) == 3 * 1000  # fused pass + 2 key sets
    assert all(r.success for r in results)


def fifty_mixed_rules() -> list[Rule]:
    """50 rules of every fused kind, plus two uniqueness key sets and schema rules."""
    z = Threshold(Operator.MUST_BE, 0)
    lt = Threshold(Operator.LESS_THAN, 1e9)
    rules: list[Rule] = []
    for i in range(5):
        rules += [
            Rule(
                id=f"rows{i}",
                kind=RuleKind.ROW_COUNT,
                threshold=Threshold(Operator.GREATER_THAN, i),
            ),
            Rule(
                id=f"null{i}",
                kind=RuleKind.NULL_VALUES,
                columns=["id"],
                threshold=Threshold(Operator.LESS_OR_EQUAL, i),
            ),
            Rule(
                id=f"miss{i}",
                kind=RuleKind.MISSING_VALUES,
                columns=["name"],
                missing_values=["", f"N/A{i}"],
                threshold=z,
            ),
            Rule(
                id=f"enum{i}",
                kind=RuleKind.INVALID_VALUES,
                columns=["kind"],
                valid_values=["a", "b", f"c{i}"],
                threshold=z,
            ),
            Rule(
                id=f"range{i}",
                kind=RuleKind.VALUE_RANGE,
                columns=["score"],
                min_value=0,
                max_value=1000 + i,
                threshold=z,
            ),
            Rule(
                id=f"len{i}",
                kind=RuleKind.LENGTH_RANGE,
                columns=["name"],
                min_value=1,
                max_value=10 + i,
                threshold=z,
            ),
            Rule(
                id=f"stat{i}",
                kind=RuleKind.STATISTIC,
                columns=["score"],
                statistic=("avg", "sum", "min", "max", "stddev")[i],
                threshold=lt,
            ),
            Rule(
                id=f"re{i}",
                kind=RuleKind.INVALID_VALUES,
                columns=["name"],
                pattern=f"^n[0-9]{{1,{i + 3}}}$",
                threshold=z,
            ),
        ]
    rules += [
        Rule(
            id="type_id",
            kind=RuleKind.COLUMN_TYPE,
            columns=["id"],
            expected_type="integer",
            threshold=z,
        ),
        Rule(
            id="type_name",
            kind=RuleKind.COLUMN_TYPE,
            columns=["name"],
            expected_type="string",
            threshold=z,
        ),
        Rule(
            id="median",
            kind=RuleKind.STATISTIC,
            columns=["score"],
            statistic="median",
            threshold=lt,
        ),
        Rule(
            id="card",
            kind=RuleKind.CARDINALITY,
            columns=["name"],
            min_value=1,
            max_value=1,
            threshold=z,
        ),
        Rule(
            id="extra",
            kind=RuleKind.EXTRA_COLUMNS,
            valid_values=["id", "name", "kind", "score"],
            threshold=z,
        ),
        Rule(
            id="pct",
            kind=RuleKind.NULL_VALUES,
            columns=["score"],
            unit=Unit.PERCENT,
            threshold=Threshold(Operator.LESS_THAN, 1),
        ),
        Rule(id="u1", kind=RuleKind.DUPLICATE_VALUES, columns=["id"], threshold=z),
        Rule(
            id="u2", kind=RuleKind.DUPLICATE_VALUES, columns=["id"], unit=Unit.PERCENT, threshold=z
        ),
        Rule(id="u3", kind=RuleKind.DUPLICATE_VALUES, columns=["kind", "id"], threshold=z),
        Rule(id="u4", kind=RuleKind.DUPLICATE_VALUES, columns=["id", "kind"], threshold=z),
    ]
    assert len(rules) == 50
    return rules


def test_fifty_mixed_rules_scan_once_plus_one_pass_per_key_set(spark: Any, dataset: Any) -> None:
    rules = fifty_mixed_rules()
    spark.conf.set("spark.sql.adaptive.enabled", "false")
    try:
        results: list[Any] = []
        before = _stage_mark(spark)
        jobs = _jobs(spark, "lq-fifty", lambda: results.extend(evaluate_dataframe(dataset, rules)))
        read = _input_records(spark, before)
    finally:
        spark.conf.unset("spark.sql.adaptive.enabled")
    # 2 distinct key sets: (id) and {kind, id} (in either order): one fused job + one per set.
    assert jobs == 1 + 2
    assert read == 3 * 1000
    failed = [(r.rule.id, r.status, r.actual, r.message) for r in results if not r.success]
    assert failed == [], failed
