"""Outcome of evaluating one rule on one dataset."""

from __future__ import annotations

import enum

import attrs

from lineage_quality.rules import Rule, Unit


class Status(enum.Enum):
    PASSED = "PASSED"
    FAILED = "FAILED"
    ERROR = "ERROR"  # the rule could not run (missing column, bad regex, unreadable data, timeout)
    SKIPPED = "SKIPPED"  # not run because a rule it depends on failed (see `skip_reason`)


@attrs.frozen
class RuleResult:
    """A verdict. `actual` is in the rule's unit; `failing_rows` is the raw offending count."""

    rule: Rule
    status: Status
    actual: float | None = None
    failing_rows: int | None = None
    row_count: int | None = None
    message: str | None = None
    skip_reason: str | None = None

    @property
    def success(self) -> bool:
        """Only a PASSED rule is a success: an error is never reported as a pass."""
        return self.status is Status.PASSED

    @property
    def expected(self) -> str:
        suffix = "%" if self.rule.unit is Unit.PERCENT else ""
        return self.rule.threshold.describe() + suffix

    def actual_text(self) -> str | None:
        if self.actual is None:
            return None
        value = self.actual
        text = str(int(value)) if float(value).is_integer() else f"{value:.6g}"
        return text + ("%" if self.rule.unit is Unit.PERCENT else "")


def error_result(rule: Rule, message: str) -> RuleResult:
    return RuleResult(rule=rule, status=Status.ERROR, message=message)


def skipped_result(rule: Rule, reason: str, message: str | None = None) -> RuleResult:
    return RuleResult(rule=rule, status=Status.SKIPPED, skip_reason=reason, message=message)
