"""The dataset's numbers (issue 28.1) on real Spark: what the fused scan measured, and the opt-in
profile, against plain Spark aggregations of the same data; footer-served null counts too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import functions as F

from lineage_quality.engine.run import evaluate_dataframe
from lineage_quality.kinds import RuleKind
from lineage_quality.measures import ColumnMeasures, DatasetMeasures
from lineage_quality.results import RuleResult
from lineage_quality.rules import Operator, Rule, Threshold

pytestmark = pytest.mark.spark

ZERO = Threshold(Operator.MUST_BE, 0)
ANY = Threshold(Operator.GREATER_THAN, -(10**30))
ROWS = [
    (1, "a", 2.5, 2**62),
    (2, None, None, 2**62),  # two longs near 2^63: their sum is only exact in decimal
    (2, "c", -1.0, None),
    (None, "d", 4.0, 7),
]
SCHEMA = "id INT, name STRING, amount DOUBLE, big BIGINT"


@pytest.fixture(scope="module")
def df(spark: Any) -> Any:
    return spark.createDataFrame(ROWS, SCHEMA)


def _stat(column: str, statistic: str) -> Rule:
    return Rule(
        id=f"{statistic}_{column}",
        kind=RuleKind.STATISTIC,
        columns=[column],
        statistic=statistic,
        threshold=ANY,
    )


def _measures(results: list[RuleResult]) -> DatasetMeasures:
    found = {id(r.measures) for r in results}
    assert len(found) == 1, "every result of one evaluation carries the same numbers"
    measures = results[0].measures
    assert measures is not None
    return measures


def test_the_scan_reports_what_its_rules_measured_per_column(df: Any) -> None:
    rules = [
        Rule(id="rows", kind=RuleKind.ROW_COUNT, threshold=Threshold(Operator.GREATER_THAN, 0)),
        Rule(id="nn_name", kind=RuleKind.NULL_VALUES, columns=["name"], threshold=ZERO),
        Rule(id="uniq_id", kind=RuleKind.DUPLICATE_VALUES, columns=["id"], threshold=ZERO),
        *(_stat("amount", s) for s in ("avg", "median", "min", "max", "sum", "stddev")),
        _stat("big", "sum"),
        Rule(
            id="valid",
            kind=RuleKind.INVALID_VALUES,
            columns=["name"],
            valid_values=["a"],
            threshold=ZERO,
        ),
    ]
    measures = _measures(evaluate_dataframe(df, rules))
    expected = df.agg(
        F.avg("amount"), F.median("amount"), F.stddev_samp("amount"), F.countDistinct("id")
    ).first()
    assert measures == DatasetMeasures(
        rows=4,
        columns=(
            ("id", ColumnMeasures(nulls=1, distinct=int(expected[3]))),
            ("name", ColumnMeasures(nulls=1)),
            (
                "amount",
                ColumnMeasures(
                    sum=5.5,
                    min=-1.0,
                    max=4.0,
                    mean=expected[0],
                    median=expected[1],
                    stddev=expected[2],
                ),
            ),
            ("big", ColumnMeasures(sum=2**63 + 7)),  # exact, past a long
        ),
    )


def test_the_profile_adds_every_columns_cheap_metrics(df: Any) -> None:
    rules = [Rule(id="rows", kind=RuleKind.ROW_COUNT, threshold=Threshold(Operator.MUST_BE, 4))]
    assert _measures(evaluate_dataframe(df, rules)).columns == ()  # nothing else was computed
    results = evaluate_dataframe(df, rules, profile=True)
    assert [(r.rule.id, r.status.value, r.actual) for r in results] == [("rows", "PASSED", 4)]
    measures = _measures(results)
    assert measures.profiled
    assert dict(measures.columns) == {
        "id": ColumnMeasures(nulls=1, sum=5, min=1, max=2),
        "name": ColumnMeasures(nulls=1),  # text: nulls only
        "amount": ColumnMeasures(nulls=1, sum=5.5, min=-1.0, max=4.0),
        "big": ColumnMeasures(nulls=1, sum=2**63 + 7, min=7, max=2**62),
    }


def test_null_counts_served_by_parquet_footers_are_reported_alike(
    spark: Any, df: Any, tmp_path: Path
) -> None:
    df.repartition(2).write.parquet(str(tmp_path / "p"))
    read = spark.read.parquet(str(tmp_path / "p"))
    rules = [
        Rule(id=f"nn_{c}", kind=RuleKind.NULL_VALUES, columns=[c], threshold=ZERO)
        for c in ("id", "name")
    ]
    measures = _measures(evaluate_dataframe(read, rules))
    one_null = ColumnMeasures(nulls=1)
    assert dict(measures.columns) == {"id": one_null, "name": one_null}


def test_results_decided_from_the_schema_alone_claim_no_measures(df: Any) -> None:
    exists = Rule(id="t", kind=RuleKind.COLUMN_TYPE, columns=["id"], threshold=ZERO)
    (result,) = evaluate_dataframe(df, [exists])
    assert result.success and result.measures is None  # nothing was scanned, no row count made up
