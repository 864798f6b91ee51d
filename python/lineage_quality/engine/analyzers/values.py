"""The analyzers of the kinds that bring their own measurement (kinds/count.py,
kinds/value_check.py): a column's non-null count judged as a value, and the rows whose value
fails a per-value comparison (the RFC's "Optional A" value checks)."""

from __future__ import annotations

from typing import Any

from lineage_quality.engine import functions as F
from lineage_quality.engine.analyzers.base import Analyzer
from lineage_quality.engine.analyzers.counts import Count
from lineage_quality.engine.columns import col, is_not_null
from lineage_quality.engine.expressions import Expr
from lineage_quality.engine.plan import Metric
from lineage_quality.engine.shared_columns import Shared
from lineage_quality.engine.verdicts import value_verdict
from lineage_quality.results import RuleResult
from lineage_quality.rules import Rule


class NonNullCount(Analyzer):
    """count(c): the rows where the column has a value, judged against the threshold."""

    def aggregation(
        self, metric: Metric, now: float, shared: Shared | None, counted: Expr | None
    ) -> Expr:
        assert metric.column is not None
        return F.count(col(metric.column))

    def result(self, df: Any, rule: Rule, metric: Metric, value: Any, rows: int) -> RuleResult:
        return value_verdict(rule, int(value), rows)


class FailedValueCheck(Count):
    """Non-null rows whose value does not satisfy `<operator> low [high]` (`arg`: the operator)."""

    def condition(self, metric: Metric, now: float, shared: Shared | None) -> Expr:
        assert metric.column is not None and metric.low is not None
        c = col(metric.column)
        low = F.lit(metric.low)
        op = metric.arg
        holds: Expr
        if op == "mustBe":
            holds = c == low
        elif op == "mustNotBe":
            holds = c != low
        elif op == "mustBeGreaterThan":
            holds = c > low
        elif op == "mustBeGreaterOrEqualTo":
            holds = c >= low
        elif op == "mustBeLessThan":
            holds = c < low
        elif op == "mustBeLessOrEqualTo":
            holds = c <= low
        else:
            assert metric.high is not None
            inside = (c >= low) & (c <= F.lit(metric.high))
            holds = inside if op == "mustBeBetween" else ~inside
        return is_not_null(metric.column) & ~holds
