"""The rule kinds beyond the first slice, on real Spark: pass, fail and edges for each."""

from __future__ import annotations

import datetime as dt
import time
from typing import Any

import pytest

from lineage_quality.engine.run import evaluate_dataframe
from lineage_quality.kinds import RuleKind
from lineage_quality.results import RuleResult, Status
from lineage_quality.rules import Operator, Rule, Threshold, Unit

pytestmark = pytest.mark.spark

Z = Threshold(Operator.MUST_BE, 0)
NAN = float("nan")
NOW = dt.datetime.now()
ROWS = [
    # id, name, amount, tags, day (string), ts
    (1, "alpha", 10.0, ["a"], "2024-01-31", NOW - dt.timedelta(days=400)),
    (2, "", 50.0, ["a", "b", "c"], "2024-02-30", NOW - dt.timedelta(days=10)),
    (3, None, NAN, [], None, None),
    (4, "delta-long-name", None, None, "31/01/2024", NOW - dt.timedelta(hours=1)),
]
SCHEMA = "id INT, name STRING, amount DOUBLE, tags ARRAY<STRING>, day STRING, ts TIMESTAMP"


@pytest.fixture(scope="module")
def df(spark: Any) -> Any:
    return spark.createDataFrame(ROWS, SCHEMA)


@pytest.fixture(scope="module")
def empty(spark: Any) -> Any:
    return spark.createDataFrame([], SCHEMA)


def one(df: Any, rule: Rule) -> RuleResult:
    (result,) = evaluate_dataframe(df, [rule])
    return result


def rule(kind: RuleKind, *cols: str, threshold: Threshold = Z, **kw: Any) -> Rule:
    return Rule(id=kind.value, kind=kind, columns=cols, threshold=threshold, **kw)


def test_value_range_counts_non_null_values_outside_inclusive_bounds(df: Any) -> None:
    inside = one(df, rule(RuleKind.VALUE_RANGE, "id", min_value=1, max_value=4))
    assert inside.success and inside.failing_rows == 0  # bounds are inclusive
    outside = one(df, rule(RuleKind.VALUE_RANGE, "id", min_value=2))
    assert outside.status is Status.FAILED and outside.failing_rows == 1
    # NaN is outside any range with a maximum; null is never counted.
    assert one(df, rule(RuleKind.VALUE_RANGE, "amount", max_value=100)).failing_rows == 1
    assert one(df, rule(RuleKind.VALUE_RANGE, "amount", min_value=0)).failing_rows == 0
    zero = one(df, rule(RuleKind.VALUE_RANGE, "amount", min_value=0, max_value=0))
    assert zero.failing_rows == 3  # 0 is a real bound, not "no bound"
    on_text = one(df, rule(RuleKind.VALUE_RANGE, "name", min_value=0))
    assert on_text.status is Status.ERROR and "numeric" in (on_text.message or "")


def test_length_range_on_strings_and_arrays(df: Any, empty: Any) -> None:
    short = one(df, rule(RuleKind.LENGTH_RANGE, "name", min_value=1, max_value=10))
    assert short.failing_rows == 2  # "" and the 15-character name; null not counted
    arrays = one(df, rule(RuleKind.LENGTH_RANGE, "tags", min_value=1, max_value=2))
    assert arrays.failing_rows == 2  # 3 elements, 0 elements
    assert one(empty, rule(RuleKind.LENGTH_RANGE, "name", max_value=1)).success


def test_cardinality_counts_values_per_row(df: Any) -> None:
    at_least_one = one(df, rule(RuleKind.CARDINALITY, "tags", min_value=1))
    assert at_least_one.failing_rows == 2  # [] and null
    scalar = one(df, rule(RuleKind.CARDINALITY, "name", min_value=1, max_value=1))
    assert scalar.failing_rows == 1  # only the null; "" is a value


def test_date_format_counts_unparseable_strings(df: Any, spark: Any) -> None:
    iso = one(df, rule(RuleKind.DATE_FORMAT, "day", date_format="%Y-%m-%d"))
    assert iso.failing_rows == 2  # 2024-02-30 is no date; 31/01/2024 is another format
    java = one(df, rule(RuleKind.DATE_FORMAT, "day", date_format="dd/MM/yyyy"))
    assert java.failing_rows == 2
    typed = one(df, rule(RuleKind.DATE_FORMAT, "ts", date_format="%Y"))
    assert typed.success  # a timestamp column cannot hold a malformed date
    bad = one(df, rule(RuleKind.DATE_FORMAT, "day", date_format="%Q"))
    assert bad.status is Status.ERROR and "%Q" in (bad.message or "")


@pytest.mark.parametrize(
    ("statistic", "expected"),
    [("min", 1.0), ("max", 4.0), ("sum", 10.0), ("avg", 2.5), ("median", 2.5)],
)
def test_statistics(df: Any, statistic: str, expected: float) -> None:
    result = one(
        df,
        rule(
            RuleKind.STATISTIC,
            "id",
            statistic=statistic,
            threshold=Threshold(Operator.MUST_BE, expected),
        ),
    )
    assert result.success and result.actual == expected


def test_stddev_nan_and_empty(df: Any, empty: Any) -> None:
    sd = one(
        df,
        rule(
            RuleKind.STATISTIC, "id", statistic="stddev", threshold=Threshold(Operator.LESS_THAN, 2)
        ),
    )
    assert sd.success and sd.actual is not None and abs(sd.actual - 1.2909944) < 1e-6
    with_nan = one(
        df,
        rule(
            RuleKind.STATISTIC,
            "amount",
            statistic="avg",
            threshold=Threshold(Operator.GREATER_THAN, 0),
        ),
    )
    assert with_nan.status is Status.FAILED and with_nan.message == "the value is NaN"
    none = one(
        empty,
        rule(
            RuleKind.STATISTIC, "id", statistic="avg", threshold=Threshold(Operator.GREATER_THAN, 0)
        ),
    )
    assert (
        none.status is Status.FAILED
        and none.actual is None
        and "no non-null" in (none.message or "")
    )


def test_freshness(df: Any) -> None:
    day = 86400.0
    not_older = one(df, rule(RuleKind.FRESHNESS, "ts", max_age_seconds=365 * day))
    assert not_older.failing_rows == 1  # the 400-day-old row
    older = one(df, rule(RuleKind.FRESHNESS, "ts", min_age_seconds=1 * day))
    assert older.failing_rows == 1  # the 1-hour-old row; null not counted
    pct = one(
        df,
        rule(
            RuleKind.FRESHNESS,
            "ts",
            max_age_seconds=5 * day,
            unit=Unit.PERCENT,
            threshold=Threshold(Operator.LESS_OR_EQUAL, 50),
        ),
    )
    assert pct.success and pct.actual == 50.0
    on_text = one(df, rule(RuleKind.FRESHNESS, "day", max_age_seconds=day))
    assert on_text.status is Status.ERROR
    assert time.time() > 0


def test_sql_rules_read_only_with_placeholders(df: Any) -> None:
    count = one(
        df,
        Rule(
            id="s",
            kind=RuleKind.SQL,
            threshold=Threshold(Operator.MUST_BE, 1),
            query="SELECT count(*) FROM {object} WHERE {property} IS NULL",
            columns=("name",),
        ),
    )
    assert count.success and count.actual == 1
    legacy = one(
        df,
        Rule(
            id="s",
            kind=RuleKind.SQL,
            threshold=Threshold(Operator.GREATER_THAN, 3),
            query="SELECT max(id) FROM ${object}",
        ),
    )
    assert legacy.success and legacy.actual == 4
    drop = one(df, Rule(id="s", kind=RuleKind.SQL, threshold=Z, query="DROP TABLE {object}"))
    assert drop.status is Status.ERROR and "read-only" in (drop.message or "")
    broken = one(
        df, Rule(id="s", kind=RuleKind.SQL, threshold=Z, query="SELECT nope FROM {object}")
    )
    assert broken.status is Status.ERROR and "query failed" in (broken.message or "")
    for query in (
        "SELECT java_method('java.lang.System', 'setProperty', 'lq.x', 'y')",
        "SELECT count(*) FROM {object} WHERE REFLECT('java.lang.Thread', 'sleep', 1) IS NULL",
    ):
        jvm = one(df, Rule(id="s", kind=RuleKind.SQL, threshold=Z, query=query))
        # Refused by the analyzed-plan check, or by Spark's analysis before it (a method Spark
        # cannot call): never run (tests/spark/test_sql_sandbox.py has every spelling).
        assert jvm.status is Status.ERROR
        assert "not allowed" in (jvm.message or "") or (jvm.message or "").startswith(
            "query failed: DATATYPE_MISMATCH"
        )
    files = one(
        df,
        Rule(
            id="s", kind=RuleKind.SQL, threshold=Z, query="SELECT count(*) FROM text.`/etc/passwd`"
        ),
    )
    assert files.status is Status.ERROR  # no SQL on files in the evaluator's session
    text = one(df, Rule(id="s", kind=RuleKind.SQL, threshold=Z, query="SELECT 'x'"))
    assert text.status is Status.ERROR and "not a number" in (text.message or "")


def test_column_types_and_skip_semantics(df: Any) -> None:
    schema = [
        Rule(
            id="t_id",
            kind=RuleKind.COLUMN_TYPE,
            columns=("id",),
            threshold=Z,
            expected_type="integer",
        ),
        Rule(
            id="t_amount",
            kind=RuleKind.COLUMN_TYPE,
            columns=("amount",),
            threshold=Z,
            expected_type="integer",
        ),
        Rule(id="t_gone", kind=RuleKind.COLUMN_TYPE, columns=("gone",), threshold=Z),
        Rule(
            id="t_num",
            kind=RuleKind.COLUMN_TYPE,
            columns=("amount",),
            threshold=Z,
            expected_type="number",
        ),
    ]
    dependents = [
        Rule(
            id="nn_amount",
            kind=RuleKind.NULL_VALUES,
            columns=("amount",),
            threshold=Z,
            depends_on=("t_amount",),
        ),
        Rule(
            id="nn_gone",
            kind=RuleKind.NULL_VALUES,
            columns=("gone",),
            threshold=Z,
            depends_on=("t_gone",),
        ),
        Rule(
            id="nn_id",
            kind=RuleKind.NULL_VALUES,
            columns=("id",),
            threshold=Z,
            depends_on=("t_id",),
        ),
    ]
    by_id = {r.rule.id: r for r in evaluate_dataframe(df, schema + dependents)}
    assert by_id["t_id"].success and by_id["t_id"].observed == "int"
    assert by_id["t_amount"].code == "TYPE_MISMATCH" and not by_id["t_amount"].success
    assert by_id["t_gone"].code == "FIELD_MISSING"
    assert by_id["t_num"].success  # number accepts any numeric type
    assert (
        by_id["nn_amount"].status is Status.SKIPPED
        and by_id["nn_amount"].skip_reason == "TYPE_MISMATCH"
    )
    assert (
        by_id["nn_gone"].status is Status.SKIPPED
        and by_id["nn_gone"].skip_reason == "FIELD_MISSING"
    )
    assert by_id["nn_id"].success


def test_extra_columns(df: Any) -> None:
    declared = ["id", "NAME", "amount", "tags", "day"]
    loose = one(df, Rule(id="x", kind=RuleKind.EXTRA_COLUMNS, threshold=Z, valid_values=declared))
    assert not loose.success and loose.message == "undeclared columns: ts"
    strict = one(
        df,
        Rule(
            id="x",
            kind=RuleKind.EXTRA_COLUMNS,
            threshold=Z,
            valid_values=declared,
            case_sensitive=True,
        ),
    )
    assert strict.failing_rows == 2  # name (declared NAME) and ts


def test_decimal_precision_and_scale(spark: Any) -> None:
    df = spark.createDataFrame([], "price DECIMAL(10,2), other DOUBLE")
    ok, wrong, not_decimal = evaluate_dataframe(
        df,
        [
            Rule(
                id="a",
                kind=RuleKind.COLUMN_TYPE,
                columns=("price",),
                threshold=Z,
                expected_type="float",
                precision=10,
                scale=2,
            ),
            Rule(
                id="b",
                kind=RuleKind.COLUMN_TYPE,
                columns=("price",),
                threshold=Z,
                expected_type="float",
                precision=12,
                scale=2,
            ),
            Rule(
                id="c",
                kind=RuleKind.COLUMN_TYPE,
                columns=("other",),
                threshold=Z,
                expected_type="float",
                precision=10,
                scale=2,
            ),
        ],
    )
    assert ok.success
    assert wrong.code == "TYPE_MISMATCH" and "precision 12" in (wrong.message or "")
    assert not_decimal.code == "TYPE_MISMATCH"


EDGE_RULES = [
    rule(RuleKind.NULL_VALUES, "v"),
    rule(RuleKind.MISSING_VALUES, "v", missing_values=[""]),
    rule(RuleKind.INVALID_VALUES, "v", valid_values=["x"]),
    rule(RuleKind.INVALID_VALUES, "v", pattern="^x$"),
    rule(RuleKind.DUPLICATE_VALUES, "v"),
    rule(RuleKind.LENGTH_RANGE, "v", max_value=1),
    rule(RuleKind.CARDINALITY, "v", min_value=1),
    rule(RuleKind.DATE_FORMAT, "v", date_format="%Y"),
    rule(RuleKind.VALUE_RANGE, "n", min_value=0),
    rule(RuleKind.FRESHNESS, "t", max_age_seconds=60),
    rule(RuleKind.STATISTIC, "n", statistic="sum", threshold=Threshold(Operator.GREATER_THAN, -1)),
    rule(RuleKind.ROW_COUNT, threshold=Threshold(Operator.GREATER_OR_EQUAL, 0)),
    rule(RuleKind.COLUMN_TYPE, "n", expected_type="float"),
]


@pytest.mark.parametrize("shape", ["empty", "all_null"])
def test_every_kind_on_empty_data_and_an_all_null_column(spark: Any, shape: str) -> None:
    rows = [] if shape == "empty" else [(None, None, None)] * 3
    df = spark.createDataFrame(rows, "v STRING, n DOUBLE, t TIMESTAMP")
    results = evaluate_dataframe(df, EDGE_RULES)
    assert not [r for r in results if r.status is Status.ERROR]
    by_kind = {(r.rule.kind, r.rule.pattern): r for r in results}
    expected_failures = {RuleKind.STATISTIC}  # no value to compare: never a pass
    if shape == "all_null":
        # nulls are missing, null, and a null has no value at all (cardinality 0)
        expected_failures |= {RuleKind.NULL_VALUES, RuleKind.MISSING_VALUES, RuleKind.CARDINALITY}
    failed = {k for (k, _), r in by_kind.items() if not r.success}
    assert failed == expected_failures, [(r.rule.kind, r.status, r.actual) for r in results]
