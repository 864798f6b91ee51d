"""From measured numbers to verdicts. Pure."""

from __future__ import annotations

import math
from decimal import Decimal

from lineage_quality.results import RuleResult, Status
from lineage_quality.rules import Rule, Unit


def verdict(rule: Rule, measured: int, row_count: int) -> RuleResult:
    """Compare a rule's measured count with its threshold.

    For `unit: percent` the count is divided by the dataset's row count; an empty dataset has
    0 % offending rows (there is nothing to offend).
    """
    actual: int | float
    if rule.kind.scan == "rows":  # the row count itself
        actual = row_count
        failing = None
    elif rule.unit is Unit.PERCENT:
        actual = 100.0 * measured / row_count if row_count else 0.0
        failing = measured
    else:
        actual = measured
        failing = measured
    status = Status.PASSED if rule.threshold.holds(actual) else Status.FAILED
    return RuleResult(
        rule=rule, status=status, actual=actual, failing_rows=failing, row_count=row_count
    )


def exact(value: int | float | Decimal) -> int | float:
    """A measured value as compared: integral decimals (an exact sum) become ints, so values
    above 2^53 are compared without rounding."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    return value


def value_verdict(rule: Rule, value: int | float | Decimal | None, row_count: int) -> RuleResult:
    """A statistic or a SQL result against the threshold. No value (an empty column's average)
    or NaN cannot meet any threshold: FAILED, with the reason."""
    if value is None:
        return RuleResult(
            rule=rule,
            status=Status.FAILED,
            row_count=row_count,
            message="no value: the column has no non-null values",
        )
    actual = exact(value)
    status = Status.PASSED if rule.threshold.holds(actual) else Status.FAILED
    message = "the value is NaN" if isinstance(actual, float) and math.isnan(actual) else None
    return RuleResult(rule=rule, status=status, actual=actual, row_count=row_count, message=message)
