"""Failing-row samples on real Spark: taken in the evaluation, only for failed row-level rules,
from the rows the verdict counted, masked as the contract says (lineage_quality.samples)."""

from __future__ import annotations

from typing import Any

import pytest

from lineage_quality.engine.run import evaluate_dataframe
from lineage_quality.kinds import RuleKind
from lineage_quality.results import RuleResult, Status
from lineage_quality.rules import Operator, Rule, Threshold
from lineage_quality.samples import HASH_PREFIX, REDACTED, Masking, SamplePolicy, Sampling

pytestmark = pytest.mark.spark

ZERO = Threshold(Operator.MUST_BE, 0)
ROWS = [
    (1, "a@example.com", "open", "DE"),
    (2, "not-an-email", "OPEN", "FR"),
    (3, "secret.person@corp", None, "FR"),
    (4, "also bad", "closed", "DE"),
    (5, "not-an-email", "bogus", "ES"),
    (6, "b@example.com", "open", "ES"),
    (6, "c@example.com", "open", "ES"),
]
EMAIL = r"^[^@ ]+@[^@ ]+\.[a-z]+$"


@pytest.fixture(scope="module")
def df(spark: Any) -> Any:
    return spark.createDataFrame(ROWS, "id INT, email STRING, status STRING, country STRING")


def rule(rule_id: str, kind: RuleKind, *cols: str, **kw: Any) -> Rule:
    kw.setdefault("threshold", ZERO)
    return Rule(id=rule_id, kind=kind, columns=cols, **kw)


def by_id(results: list[RuleResult]) -> dict[str, RuleResult]:
    return {r.rule.id: r for r in results}


def test_a_failed_pattern_rule_shows_its_failing_values_with_the_key(df: Any) -> None:
    rules = [
        rule("email_pattern", RuleKind.INVALID_VALUES, "email", pattern=EMAIL),
        rule("status_valid", RuleKind.INVALID_VALUES, "status", valid_values=["open", "closed"]),
        rule("country_not_null", RuleKind.NULL_VALUES, "country"),  # passes
        rule("rows", RuleKind.ROW_COUNT, threshold=Threshold(Operator.GREATER_THAN, 99)),
    ]
    sampling = Sampling(SamplePolicy(keys=("ID",)), rows=5)
    found = by_id(evaluate_dataframe(df, rules, sampling=sampling))
    email = found["email_pattern"]
    assert email.status is Status.FAILED and email.samples is not None
    assert email.samples.columns == ("id", "email")
    # the very rows the verdict counted, sorted by key
    assert email.samples.rows == (
        ("2", "not-an-email"), ("3", "secret.person@corp"), ("4", "also bad"), ("5", "not-an-email")
    )  # fmt: skip
    assert len(email.samples.rows) == email.failing_rows
    status = found["status_valid"].samples
    assert status is not None and status.rows == (("2", "OPEN"), ("5", "bogus"))
    assert found["country_not_null"].samples is None  # passed: nothing taken
    assert found["rows"].status is Status.FAILED and found["rows"].samples is None  # no row fails


def test_samples_are_bounded_per_rule_and_by_the_contract(df: Any) -> None:
    rules = [
        rule("email_pattern", RuleKind.INVALID_VALUES, "email", pattern=EMAIL),
        rule("status_valid", RuleKind.INVALID_VALUES, "status", valid_values=["open", "closed"]),
    ]
    policy = SamplePolicy(rows=2, per_rule=(("status_valid", 0),), keys=("id",))
    found = by_id(evaluate_dataframe(df, rules, sampling=Sampling(policy, rows=5)))
    email = found["email_pattern"].samples
    assert email is not None and len(email.rows) == 2
    # the first failing rows the scan reads, the same each time
    again = by_id(evaluate_dataframe(df, rules, sampling=Sampling(policy, rows=5)))
    assert again["email_pattern"].samples == email
    assert found["status_valid"].samples is None


def test_a_classified_column_is_masked_and_equal_values_hash_alike(df: Any) -> None:
    rules = [rule("email_pattern", RuleKind.INVALID_VALUES, "email", pattern=EMAIL)]
    policy = SamplePolicy(keys=("id",), masks=(("email", Masking.HASH), ("id", Masking.REDACT)))
    result = evaluate_dataframe(df, rules, sampling=Sampling(policy, key=b"k" * 32))[0]
    samples = result.samples
    assert samples is not None and samples.masked == ("id", "email")
    text = samples.text()
    for raw in ("not-an-email", "secret.person@corp", "also bad"):
        assert raw not in text
    hashes = [row[1] for row in samples.rows]
    assert all(h is not None and h.startswith(HASH_PREFIX) for h in hashes)
    assert [row[0] for row in samples.rows] == [REDACTED] * 4
    assert len(set(hashes)) == 3  # the two "not-an-email" rows share one hash
    other_key = evaluate_dataframe(df, rules, sampling=Sampling(policy, key=b"x" * 32))[0]
    assert other_key.samples is not None and other_key.samples.rows != samples.rows


def test_a_duplicate_key_rule_shows_the_repeated_keys_with_their_rows(df: Any) -> None:
    rules = [rule("id_unique", RuleKind.DUPLICATE_VALUES, "id")]
    result = evaluate_dataframe(df, rules, sampling=Sampling())[0]
    assert result.status is Status.FAILED
    assert result.samples is not None
    assert result.samples.columns == ("id", "rows")
    assert result.samples.rows == (("6", "2"),)


def test_a_filtered_rule_samples_the_rows_it_selects(df: Any) -> None:
    rules = [
        rule(
            "fr_email", RuleKind.INVALID_VALUES, "email", pattern=EMAIL,
            filter_condition="country = 'FR'",
        )
    ]  # fmt: skip
    result = evaluate_dataframe(df, rules, sampling=Sampling(SamplePolicy(keys=("id",))))[0]
    assert result.samples is not None
    assert result.samples.rows == (("2", "not-an-email"), ("3", "secret.person@corp"))


def test_without_sampling_nothing_is_taken(df: Any) -> None:
    rules = [rule("email_pattern", RuleKind.INVALID_VALUES, "email", pattern=EMAIL)]
    assert evaluate_dataframe(df, rules)[0].samples is None


def test_sample_jobs_run_side_by_side_in_the_callers_job_group(spark: Any, df: Any) -> None:
    """Cancelling an evaluation cancels its job group: the sample jobs, run in threads of their
    own, must be in it too."""
    rules = [
        rule("email_pattern", RuleKind.INVALID_VALUES, "email", pattern=EMAIL),
        rule("status_valid", RuleKind.INVALID_VALUES, "status", valid_values=["open", "closed"]),
        rule("country_known", RuleKind.INVALID_VALUES, "country", valid_values=["DE"]),
    ]
    sc = spark.sparkContext
    counts = []
    for i, sampling in enumerate((None, Sampling())):
        group = f"lq-samples-{i}"
        sc.setJobGroup(group, "samples test")
        try:
            results = evaluate_dataframe(df, rules, sampling=sampling)
        finally:
            sc.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
        counts.append(len(sc.statusTracker().getJobIdsForGroup(group)))
        assert all((r.samples is not None) == (sampling is not None) for r in results)
    assert counts[1] >= counts[0] + 3  # one job per failed rule, in the group
