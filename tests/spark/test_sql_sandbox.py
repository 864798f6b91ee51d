"""`type: sql` is checked on Spark's analyzed plan (issue 9.1, 9.2): no JVM calls however they are
spelled, no other data than the bound dataset, nothing that explodes, and no JVM error text (which
could quote secrets or file contents) in a result."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from lineage_quality.engine.run import evaluate_dataframe
from lineage_quality.kinds import RuleKind
from lineage_quality.results import RuleResult, Status
from lineage_quality.rules import Operator, Rule, Threshold

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def df(spark: Any) -> Any:
    return spark.createDataFrame(
        [(1, "a", 10.0), (2, None, -1.0), (3, "c", 5.5)], "id INT, name STRING, amount DOUBLE"
    )


def sql(df: Any, query: str, column: str | None = None) -> RuleResult:
    rule = Rule(
        id="q",
        kind=RuleKind.SQL,
        query=query,
        threshold=Threshold(Operator.GREATER_OR_EQUAL, 0),
        columns=(column,) if column else (),
    )
    (result,) = evaluate_dataframe(df, [rule])
    return result


@pytest.mark.parametrize(
    "query",
    [
        "SELECT java_method('java.lang.System', 'getenv', 'HOME') IS NOT NULL",
        "SELECT count(*) FROM {object} WHERE java_method/**/('java.lang.System', 'getenv', 'X') "
        "IS NULL",
        "SELECT `reflect`('java.lang.System', 'getenv', 'HOME') IS NOT NULL",
        "SELECT length(reflect--comment\n('java.lang.System', 'getProperty', 'user.home'))",
        "SELECT length(REFLECT ( 'java.lang.System', 'getenv', 'PATH'))",
        "SELECT length(java_method\n/* a */ ('java.lang.System', 'getenv', 'PATH'))",
    ],
)
def test_jvm_calls_are_refused_whatever_the_spelling(df: Any, query: str) -> None:
    result = sql(df, query)
    assert result.status is Status.ERROR
    assert "CallMethodViaReflection" in (result.message or "")
    assert "is not allowed" in (result.message or "")


def test_only_the_bound_dataset_is_read(df: Any, spark: Any, tmp_path: Path) -> None:
    secret = tmp_path / "secret.csv"
    secret.write_text("token\nhunter2\n")
    spark.read.csv(str(secret), header=True).createOrReplaceTempView("other_view")
    try:
        other = sql(df, "SELECT count(*) FROM other_view")
        assert other.status is Status.ERROR and "only its dataset" in (other.message or "")
    finally:
        spark.catalog.dropTempView("other_view")
    files = sql(df, f"SELECT count(*) FROM csv.`{secret}`")
    assert files.status is Status.ERROR and "hunter2" not in (files.message or "")
    joined = sql(df, "SELECT count(*) FROM {object} a JOIN {object} b ON a.id = b.id")
    assert joined.status is Status.ERROR and "Join" in (joined.message or "")


@pytest.mark.parametrize(
    ("query", "refused"),
    [
        ("SELECT count(*) FROM range(1000000000000)", "Range"),
        ("SELECT size(sequence(1, 2000000000)) FROM {object}", "Sequence"),
        (
            "SELECT count(*) FROM {object} LATERAL VIEW explode(sequence(1, 100000000)) t",
            "Generate",
        ),
        ("SELECT length(repeat('x', 2000000000)) FROM {object}", "StringRepeat"),
        ("SELECT size(array_repeat(1, 2000000000)) FROM {object}", "ArrayRepeat"),
        ("SELECT size(collect_list(name)) FROM {object}", "CollectList"),
        ("SELECT count(*) FROM {object} a CROSS JOIN {object} b", "Join"),
    ],
)
def test_what_could_exhaust_memory_is_refused_before_it_runs(
    df: Any, query: str, refused: str
) -> None:
    result = sql(df, query)
    assert result.status is Status.ERROR
    assert refused in (result.message or ""), result.message


def test_errors_carry_the_error_class_not_the_jvms_text(df: Any) -> None:
    os.environ["LQ_SANDBOX_PROBE"] = "s3cr3t-value"
    try:
        missing = sql(df, "SELECT count(*) FROM {object} WHERE s3cr3t_value_column > 0")
    finally:
        del os.environ["LQ_SANDBOX_PROBE"]
    assert missing.status is Status.ERROR
    assert missing.message == "query failed: UNRESOLVED_COLUMN.WITH_SUGGESTION"
    assert "s3cr3t" not in (missing.message or "")


def test_ordinary_quality_queries_still_run(df: Any) -> None:
    cases = {
        "SELECT count(*) FROM {object} WHERE amount < 0": 1,
        "SELECT count(DISTINCT {property}) FROM ${object}": 2,
        "SELECT count(*) FROM (SELECT id FROM {object} GROUP BY id HAVING count(*) > 1)": 0,
        "SELECT max(id) - min(id) FROM {object} WHERE id IN (SELECT id FROM {object})": 2,
        "SELECT sum(CASE WHEN name IS NULL THEN 1 ELSE 0 END) FROM {object}": 1,
        "SELECT count(*) FROM (SELECT id, row_number() OVER (ORDER BY amount) r FROM {object}) "
        "WHERE r = 1": 1,
        "SELECT round(avg(amount), 2) FROM {object} WHERE lower(name) RLIKE '^[a-z]$'": 7.75,
        "SELECT datediff(current_date(), to_date('2020-01-01')) > 0": 1,
    }
    for query, expected in cases.items():
        result = sql(df, query, column="name")
        assert result.status is Status.PASSED, (query, result.message)
        assert result.actual == expected, query
