"""From measured numbers to verdicts. Pure."""

from __future__ import annotations

import math

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


def value_verdict(rule: Rule, value: float | None, row_count: int) -> RuleResult:
    """A statistic or a SQL result against the threshold. No value (an empty column's average)
    or NaN cannot meet any threshold: FAILED, with the reason."""
    if value is None:
        return RuleResult(
            rule=rule,
            status=Status.FAILED,
            row_count=row_count,
            message="no value: the column has no non-null values",
        )
    actual = float(value)
    status = Status.PASSED if rule.threshold.holds(actual) else Status.FAILED
    message = "the value is NaN" if math.isnan(actual) else None
    return RuleResult(rule=rule, status=status, actual=actual, row_count=row_count, message=message)
