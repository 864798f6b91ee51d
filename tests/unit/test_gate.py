"""Which results stop the pipeline in-driver, and how the message names them."""

from __future__ import annotations

from lineage_quality.driver.gate import blocking, gate_message
from lineage_quality.kinds import RuleKind
from lineage_quality.results import RuleResult, Status, error_result
from lineage_quality.rules import Operator, Rule, Threshold

ZERO = Threshold(Operator.MUST_BE, 0)


def rule(name: str, **kw: object) -> Rule:
    return Rule(id=name, kind=RuleKind.NULL_VALUES, columns=("c",), threshold=ZERO, name=name, **kw)  # type: ignore[arg-type]


def failed(r: Rule, actual: int = 3) -> RuleResult:
    return RuleResult(rule=r, status=Status.FAILED, actual=actual, failing_rows=actual)


def test_failed_and_errored_block_rules_block_and_nothing_else_does() -> None:
    block = rule("amount_not_null", severity="error")  # error -> BLOCK
    declared = rule("id_not_null", action="BLOCK")
    alert = rule("warned", severity="warn")
    quarantine = rule("quarantined", action="QUARANTINE")
    results = [
        ("file:/d", failed(block)),
        ("file:/d", error_result(declared, "column not found in dataset: c")),
        ("file:/d", failed(alert)),
        ("file:/d", failed(quarantine)),
        ("file:/e", RuleResult(rule=block, status=Status.PASSED, actual=0)),
        ("file:/e", RuleResult(rule=declared, status=Status.SKIPPED, skip_reason="FIELD_MISSING")),
    ]
    found = blocking(results)
    assert [f.describe() for f in found] == [
        "file:/d: rule amount_not_null failed: expected == 0, actual 3",
        "file:/d: rule id_not_null could not be evaluated: column not found in dataset: c",
    ]


def test_message_lists_every_problem() -> None:
    text = gate_message(["a: rule x failed", "b: rule y failed"])
    assert text == (
        "lineage-quality: quality gate failed (2):\n  a: rule x failed\n  b: rule y failed"
    )
