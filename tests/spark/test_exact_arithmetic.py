"""Regression tests for the engine's arithmetic on real Spark (issue 9, items 12-16) and for
patterns that do not compile or would backtrack catastrophically (items 13 and 3)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lineage_quality.cli import main
from lineage_quality.engine.run import evaluate_dataframe
from lineage_quality.kinds import RuleKind
from lineage_quality.results import Status
from lineage_quality.rules import Operator, Rule, Threshold

pytestmark = pytest.mark.spark

BIG = 9_000_000_000_000_000_000  # 9e18: two of them overflow a bigint (2^63 - 1 ~ 9.22e18)


def stat(name: str, column: str, op: Operator, value: int | float) -> Rule:
    return Rule(
        id=f"{name}_{column}_{op.value}",
        kind=RuleKind.STATISTIC,
        statistic=name,
        columns=[column],
        threshold=Threshold(op, value),
    )


def test_bigint_sum_does_not_wrap(spark: Any) -> None:
    df = spark.createDataFrame([(BIG,), (BIG,)], "v BIGINT")
    positive, below_zero, exact = evaluate_dataframe(
        df,
        [
            stat("sum", "v", Operator.GREATER_THAN, 0),
            stat("sum", "v", Operator.LESS_THAN, 0),
            stat("sum", "v", Operator.MUST_BE, 2 * BIG),
        ],
    )
    assert positive.status is Status.PASSED
    assert below_zero.status is Status.FAILED
    assert exact.status is Status.PASSED
    assert exact.actual_text() == "18000000000000000000"


def test_integer_thresholds_above_2_53_are_exact(spark: Any) -> None:
    value = 3_000_000_000_000_000_000
    df = spark.createDataFrame([(value,), (value + 5,)], "v BIGINT")
    below, not_below, equal = evaluate_dataframe(
        df,
        [
            stat("min", "v", Operator.LESS_THAN, value + 1),
            stat("min", "v", Operator.LESS_THAN, value),
            stat("max", "v", Operator.MUST_BE, value + 5),
        ],
    )
    assert below.expected == "< 3000000000000000001"
    assert below.status is Status.PASSED, below
    assert not_below.status is Status.FAILED
    assert equal.status is Status.PASSED and equal.actual_text() == "3000000000000000005"


def test_stddev_of_huge_finite_values_is_measured_not_nan(spark: Any) -> None:
    df = spark.createDataFrame([(1e300,), (-1e300,), (1e300,), (-1e300,)], "v DOUBLE")
    (result,) = evaluate_dataframe(df, [stat("stddev", "v", Operator.GREATER_THAN, 0)])
    assert result.status is Status.PASSED, result
    # sample stddev of +-1e300 (4 values) = sqrt(4e600 / 3) = 1.1547e300
    assert result.actual is not None and abs(result.actual / 1.1547005383792515e300 - 1) < 1e-9

    with_nan = spark.createDataFrame([(1e300,), (float("nan"),)], "v DOUBLE")
    (nan_result,) = evaluate_dataframe(with_nan, [stat("stddev", "v", Operator.GREATER_THAN, 0)])
    assert nan_result.status is Status.FAILED and nan_result.message == "the value is NaN"


ODCS = """\
apiVersion: v3.1.0
kind: DataContract
id: patterns
version: 1.0.0
status: active
schema:
  - name: p
    properties:
      - name: name
        quality:
          - metric: invalidValues
            arguments: {pattern: '(x'}
            name: does_not_compile
          - metric: invalidValues
            arguments: {pattern: '^(a+)+$'}
            name: catastrophic
          - metric: invalidValues
            arguments: {pattern: '^(a++)+$'}
            name: possessive_is_fine
          - metric: nullValues
            mustBe: 0
            name: name_not_null
"""


def test_bad_and_catastrophic_patterns_are_one_error_each(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "names"
    spark.createDataFrame([("a" * 40 + "b",), ("aaa",)], "name STRING").write.parquet(str(data))
    contract = tmp_path / "patterns.yaml"
    contract.write_text(ODCS)
    code = main(["check", "--contract", str(contract), "--dataset", str(data), "--output", "json"])
    out = json.loads(capsys.readouterr().out)
    by_name = {r["name"]: r for r in out["results"]}
    assert code == 1  # the run goes on: results, not a refused contract (exit 2)
    assert by_name["does_not_compile"]["status"] == "FAILED"
    assert by_name["does_not_compile"]["code"] == "EVALUATION_ERROR"
    assert "does not compile" in by_name["does_not_compile"]["message"]
    assert by_name["catastrophic"]["code"] == "EVALUATION_ERROR"
    assert "backtrack" in by_name["catastrophic"]["message"]
    assert by_name["possessive_is_fine"]["status"] == "FAILED"  # evaluated: 1 value offends
    assert by_name["possessive_is_fine"]["failing_rows"] == 1
    assert by_name["name_not_null"]["status"] == "PASSED"
