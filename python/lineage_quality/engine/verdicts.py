"""From measured numbers to verdicts. Pure."""

from __future__ import annotations

from lineage_quality.results import RuleResult, Status
from lineage_quality.rules import Rule, RuleKind, Unit


def verdict(rule: Rule, measured: int, row_count: int) -> RuleResult:
    """Compare a rule's measured count with its threshold.

    For `unit: percent` the count is divided by the dataset's row count; an empty dataset has
    0 % offending rows (there is nothing to offend).
    """
    if rule.kind is RuleKind.ROW_COUNT:
        actual = float(row_count)
        failing = None
    elif rule.unit is Unit.PERCENT:
        actual = 100.0 * measured / row_count if row_count else 0.0
        failing = measured
    else:
        actual = float(measured)
        failing = measured
    status = Status.PASSED if rule.threshold.holds(actual) else Status.FAILED
    return RuleResult(
        rule=rule, status=status, actual=actual, failing_rows=failing, row_count=row_count
    )
