from pathlib import Path

from lineage_quality.engine import build_plan, verdict
from lineage_quality.engine.plan import ROWS, Measure
from lineage_quality.kinds import RuleKind
from lineage_quality.results import Status
from lineage_quality.rules import Operator, Rule, Threshold, Unit

ZERO = Threshold(Operator.MUST_BE, 0)


def rule(kind: RuleKind, *columns: str, **kw: object) -> Rule:
    return Rule(
        id=f"{kind.value}:{','.join(columns)}",
        kind=kind,
        threshold=kw.pop("threshold", ZERO),  # type: ignore[arg-type]
        columns=columns,
        **kw,
    )  # type: ignore[arg-type]


def test_identical_metrics_are_computed_once_and_row_count_is_always_first() -> None:
    rules = [
        rule(RuleKind.NULL_VALUES, "a"),
        rule(RuleKind.NULL_VALUES, "a", threshold=Threshold(Operator.LESS_THAN, 5)),
        rule(RuleKind.NULL_VALUES, "b"),
        rule(RuleKind.ROW_COUNT, threshold=Threshold(Operator.GREATER_THAN, 0)),
        rule(RuleKind.INVALID_VALUES, "b", valid_values=["x"]),
    ]
    plan = build_plan(rules, [("a", "string"), ("b", "string")])
    assert plan.metrics[0] == ROWS
    assert [m.kind for m in plan.metrics] == [
        Measure.ROWS,
        Measure.NULLS,
        Measure.NULLS,
        Measure.INVALID,
    ]
    assert plan.steps[0].metric == plan.steps[1].metric == 1
    assert plan.steps[3].metric == 0


def test_uniqueness_gets_one_pass_per_key_set() -> None:
    rules = [
        rule(RuleKind.DUPLICATE_VALUES, "a"),
        rule(RuleKind.DUPLICATE_VALUES, "a", unit=Unit.PERCENT),
        rule(RuleKind.DUPLICATE_VALUES, "a", "b"),
    ]
    plan = build_plan(rules, [("a", "string"), ("b", "string")])
    assert plan.key_sets == (("a",), ("a", "b"))
    assert [s.key_set for s in plan.steps] == [0, 0, 1]


def test_preconditions_become_errors_before_any_scan() -> None:
    rules = [
        rule(RuleKind.NULL_VALUES, "gone"),
        rule(RuleKind.INVALID_VALUES, "a", pattern="(unclosed"),
        rule(RuleKind.DUPLICATE_VALUES, "a", "gone2"),
        rule(RuleKind.NULL_VALUES, "A"),  # case-insensitive match, as Spark resolves columns
    ]
    plan = build_plan(rules, [("a", "string")])
    assert plan.steps[0].error == "column not found in dataset: gone"
    # A pattern that does not compile is this rule's ERROR, decided before the scan.
    assert plan.steps[1].metric is None
    assert plan.steps[1].error == (
        "pattern '(unclosed' does not compile: missing ), unterminated subpattern at position 0"
    )
    assert plan.steps[2].error == "column not found in dataset: gone2"
    assert plan.steps[3].error is None
    assert plan.metrics[plan.steps[3].metric or 0].column == "a"
    assert plan.key_sets == ()


def test_verdicts_in_rows_and_percent() -> None:
    r = rule(
        RuleKind.NULL_VALUES, "a", threshold=Threshold(Operator.LESS_THAN, 10), unit=Unit.PERCENT
    )
    failed = verdict(r, 2, 10)
    assert (failed.status, failed.actual, failed.failing_rows) == (Status.FAILED, 20.0, 2)
    assert failed.expected == "< 10%" and failed.actual_text() == "20%"
    passed = verdict(r, 0, 10)
    assert passed.success and passed.actual == 0.0
    empty = verdict(r, 0, 0)  # nothing can offend in an empty dataset
    assert empty.success and empty.actual == 0.0


def test_row_count_verdict_uses_rows() -> None:
    r = rule(RuleKind.ROW_COUNT, threshold=Threshold(Operator.BETWEEN, 1, 3))
    assert verdict(r, 0, 3).success
    result = verdict(r, 0, 0)
    assert result.status is Status.FAILED and result.actual == 0 and result.failing_rows is None


def test_physical_type_is_exact_logical_type_is_a_family() -> None:
    from lineage_quality.engine.types import type_mismatch

    assert type_mismatch("integer", "bigint") is None  # logicalType: the integer family
    assert type_mismatch("int", "bigint", exact=True) == "expected physical type int, found bigint"
    assert type_mismatch("long", "bigint", exact=True) is None  # an alias of the same type
    assert type_mismatch("bigint", "int", exact=True) == "expected physical type bigint, found int"
    assert type_mismatch("decimal(10,2)", "decimal(10,2)", exact=True) is None
    found = type_mismatch("double", "float", exact=True)
    assert found == "expected physical type double, found float"


def test_odcs_physical_type_rule_is_exact(tmp_path: Path) -> None:
    from lineage_quality.contracts import load_file

    path = tmp_path / "c.yaml"
    path.write_text(
        "apiVersion: v3.1.0\nkind: DataContract\nid: t\nversion: 1.0.0\nstatus: active\n"
        "schema:\n  - name: p\n    customProperties:\n      - {property: openlineage.name, "
        "value: /x}\n    properties:\n      - {name: a, logicalType: integer, physicalType: int}\n"
        "      - {name: b, logicalType: integer}\n"
    )
    rules = {r.columns[0]: r for b in load_file(path) for r in b.rules if r.expected_type}
    plan = build_plan(list(rules.values()), [("a", "bigint"), ("b", "bigint")])
    by_column = {s.rule.columns[0]: s.result for s in plan.steps}
    assert by_column["a"] is not None and by_column["a"].code == "TYPE_MISMATCH"
    assert by_column["b"] is not None and by_column["b"].status is Status.PASSED


def test_an_inactive_rule_is_skipped_and_blocks_nothing() -> None:
    """Seed 002's `is_active: false`: declared, not measured; an inactive schema rule does not
    skip its dependents."""
    schema_rule = rule(RuleKind.COLUMN_TYPE, "a", expected_type="integer", active=False)
    dependent = Rule(
        id="n",
        kind=RuleKind.NULL_VALUES,
        threshold=ZERO,
        columns=("a",),
        depends_on=(schema_rule.id,),
    )
    plan = build_plan([schema_rule, dependent], [("a", "string")])
    first, second = plan.steps
    assert first.result is not None and first.result.status is Status.SKIPPED
    assert (first.result.skip_reason, first.result.message) == ("INACTIVE", "is_active: false")
    assert second.result is None and second.metric == 1  # measured


def test_declared_varchar_length_against_max_length() -> None:
    r = rule(RuleKind.COLUMN_TYPE, "a", expected_type="string", max_length=100)
    (step,) = build_plan([r], [("a", "string")], declared={"a": "varchar(100)"}).steps
    assert step.result is not None and step.result.status is Status.PASSED
    (step,) = build_plan([r], [("a", "string")], declared={"a": "char(10)"}).steps
    assert step.result is not None and step.result.status is Status.FAILED
    assert step.result.message == "declared char(10), expected max_length 100"
    (step,) = build_plan([r], [("a", "string")]).steps  # nothing declared: the values say
    assert step.result is not None and step.result.status is Status.PASSED


def test_a_filtered_rule_is_not_quarantined() -> None:
    from lineage_quality.engine.quarantine import _wants_quarantine
    from lineage_quality.results import RuleResult

    kw = {"action": "QUARANTINE"}
    plain = RuleResult(rule=rule(RuleKind.NULL_VALUES, "a", **kw), status=Status.FAILED)
    filtered = RuleResult(
        rule=rule(RuleKind.NULL_VALUES, "a", filter_condition="b > 1", **kw), status=Status.FAILED
    )
    assert _wants_quarantine(plain) and not _wants_quarantine(filtered)
