"""Every rule kind on real Spark: pass, fail, and edges (nulls, NaN, empty strings, empty data)."""

from __future__ import annotations

from typing import Any

import pytest

from lineage_quality.engine.run import evaluate_dataframe
from lineage_quality.kinds import RuleKind
from lineage_quality.results import RuleResult, Status
from lineage_quality.rules import Operator, Rule, Threshold, Unit

pytestmark = pytest.mark.spark

ZERO = Threshold(Operator.MUST_BE, 0)
ROWS = [
    (1, "a@x.io", "OPEN", 1.0),
    (2, None, "OPEN", float("nan")),
    (2, "", "BAD", 3.0),
    (None, "d@x.io", None, None),
]
SCHEMA = "id INT, email STRING, status STRING, amount DOUBLE"


@pytest.fixture(scope="module")
def df(spark: Any) -> Any:
    return spark.createDataFrame(ROWS, SCHEMA)


def run(df: Any, *rules: Rule) -> list[RuleResult]:
    return evaluate_dataframe(df, list(rules))


def r(kind: RuleKind, *cols: str, threshold: Threshold = ZERO, **kw: Any) -> Rule:
    return Rule(id=f"{kind.value}", kind=kind, columns=cols, threshold=threshold, **kw)


def test_row_count(df: Any, spark: Any) -> None:
    (ok,) = run(df, r(RuleKind.ROW_COUNT, threshold=Threshold(Operator.MUST_BE, 4)))
    assert ok.status is Status.PASSED and ok.actual == 4
    (bad,) = run(df, r(RuleKind.ROW_COUNT, threshold=Threshold(Operator.GREATER_THAN, 4)))
    assert bad.status is Status.FAILED
    empty = spark.createDataFrame([], SCHEMA)
    (none,) = run(empty, r(RuleKind.ROW_COUNT, threshold=Threshold(Operator.GREATER_THAN, 0)))
    assert none.status is Status.FAILED and none.actual == 0


def test_null_values_count_nulls_but_not_nan_or_empty_strings(df: Any) -> None:
    ids, emails, amounts = run(
        df,
        r(RuleKind.NULL_VALUES, "id"),
        r(RuleKind.NULL_VALUES, "email"),
        r(
            RuleKind.NULL_VALUES,
            "amount",
            threshold=Threshold(Operator.LESS_THAN, 30),
            unit=Unit.PERCENT,
        ),
    )
    assert (ids.status, ids.failing_rows) == (Status.FAILED, 1)
    assert emails.failing_rows == 1  # "" is not null
    assert (
        amounts.failing_rows == 1 and amounts.actual == 25.0 and amounts.success
    )  # NaN is not null


def test_missing_values_include_null_and_listed_values(df: Any) -> None:
    (res,) = run(df, r(RuleKind.MISSING_VALUES, "email", missing_values=[None, ""]))
    assert res.status is Status.FAILED and res.failing_rows == 2


def test_invalid_values_by_list_and_pattern_ignore_nulls(df: Any) -> None:
    by_list, by_pattern, both = run(
        df,
        r(RuleKind.INVALID_VALUES, "status", valid_values=["OPEN"]),
        r(RuleKind.INVALID_VALUES, "email", pattern=r"^[^@]+@[^@]+$"),
        r(RuleKind.INVALID_VALUES, "email", valid_values=["a@x.io"], pattern="@"),
    )
    assert by_list.failing_rows == 1  # BAD; the null status is not invalid
    assert by_pattern.failing_rows == 1  # ""; the null email is not invalid
    assert both.failing_rows == 2  # "", d@x.io (in pattern but not in list)
    (ok,) = run(df, r(RuleKind.INVALID_VALUES, "status", valid_values=["OPEN", "BAD"]))
    assert ok.success


def test_duplicates_count_extra_occurrences_of_non_null_keys(df: Any) -> None:
    single, pct, compound = run(
        df,
        r(RuleKind.DUPLICATE_VALUES, "id"),
        r(
            RuleKind.DUPLICATE_VALUES,
            "id",
            threshold=Threshold(Operator.LESS_OR_EQUAL, 25),
            unit=Unit.PERCENT,
        ),
        r(RuleKind.DUPLICATE_VALUES, "id", "status"),
    )
    assert (single.status, single.failing_rows) == (Status.FAILED, 1)
    assert pct.success and pct.actual == 25.0
    assert compound.success and compound.failing_rows == 0


def test_all_null_column(spark: Any) -> None:
    df = spark.createDataFrame([(None,), (None,)], "v STRING")
    nulls, dupes, invalid = run(
        df,
        r(RuleKind.NULL_VALUES, "v"),
        r(RuleKind.DUPLICATE_VALUES, "v"),
        r(RuleKind.INVALID_VALUES, "v", valid_values=["x"]),
    )
    assert nulls.failing_rows == 2 and not nulls.success
    assert dupes.failing_rows == 0 and dupes.success
    assert invalid.failing_rows == 0 and invalid.success


def test_a_missing_column_is_an_error_and_the_other_rules_still_run(df: Any) -> None:
    missing, fine = run(df, r(RuleKind.NULL_VALUES, "nope"), r(RuleKind.NULL_VALUES, "email"))
    assert missing.status is Status.ERROR and "nope" in (missing.message or "")
    assert not missing.success
    assert fine.status is Status.FAILED and fine.failing_rows == 1


def test_a_pattern_java_rejects_is_isolated_to_its_rule(df: Any) -> None:
    # `(?P<name>...)` compiles in Python but not in Java: only this rule may error.
    bad, good = run(
        df,
        r(RuleKind.INVALID_VALUES, "email", pattern=r"(?P<user>\w+)@"),
        r(RuleKind.NULL_VALUES, "email"),
    )
    assert bad.status is Status.ERROR and "evaluation failed" in (bad.message or "")
    assert "PatternSyntaxException" in (bad.message or "")  # the root cause, not py4j's wrapper
    assert good.status is Status.FAILED and good.failing_rows == 1


def test_java_only_regex_syntax_works_and_a_null_valid_value_is_harmless(df: Any) -> None:
    upper, listed = run(
        df,
        r(RuleKind.INVALID_VALUES, "status", pattern=r"^\p{Upper}+$"),
        r(RuleKind.INVALID_VALUES, "status", valid_values=["OPEN", None]),
    )
    assert upper.success  # OPEN, BAD: upper case; the null is not invalid
    assert listed.failing_rows == 1  # BAD is still invalid despite the null in the list


def test_the_evaluator_session_turns_ansi_off_whatever_the_defaults(spark: Any, df: Any) -> None:
    from lineage_quality.evaluation.session import evaluator_session

    spark.conf.set("spark.sql.ansi.enabled", "true")  # as a spark-defaults.conf could
    session = evaluator_session("local[2]")
    assert session.conf.get("spark.sql.ansi.enabled") == "false"
    (mixed,) = run(df, r(RuleKind.MISSING_VALUES, "id", missing_values=["", "N/A"]))
    assert mixed.status is Status.FAILED and mixed.failing_rows == 1, mixed.message
