"""`Analyzer`: what one metric kind declares, in Deequ's analyzer shape.

A kind says which aggregate column measures it in the fused scan (`aggregation`, with the
per-row predicate it counts, `counted`, which the row gates may filter first), how its value is
made exact when the fused one cannot be trusted (`settle`), how a rule's result is read from its
slot of the single result row (`result`) and which of the column's numbers it gives
(`measures`). The runner (engine/run.py) only orchestrates: it never looks at a metric's kind.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame

from lineage_quality.engine.expressions import Expr
from lineage_quality.engine.plan import Metric
from lineage_quality.engine.shared_columns import Shared
from lineage_quality.engine.verdicts import verdict
from lineage_quality.results import RuleResult
from lineage_quality.rules import Rule


class Analyzer:
    """A metric kind. The defaults are those of a count of rows: override what differs."""

    def condition(self, metric: Metric, now: float, shared: Shared | None) -> Expr | None:
        """The per-row predicate the kind counts (true = an offending row), or None for a kind
        that is not a row count. Quarantine selects rows with it, so what it writes aside is
        what the verdict counted."""
        return None

    def counted(self, metric: Metric, now: float, shared: Shared | None) -> Expr | None:
        """The predicate the scan counts for `metric`, which the row gates (row_gates.py) may
        test first; None when the scan counts nothing per row."""
        return self.condition(metric, now, shared)

    def aggregation(
        self, metric: Metric, now: float, shared: Shared | None, counted: Expr | None
    ) -> Expr:
        """The aggregate column of `metric` in the fused scan; `counted` is `self.counted`'s,
        built once by the caller."""
        raise NotImplementedError

    def settle(self, df: DataFrame, metric: Metric, value: Any, rows: int) -> Any:
        """The value to judge and report: the fused one, or measured again (an extra job) where
        `rows` says the fused one may be wrong. An Exception when that failed."""
        return value

    def result(
        self, df: DataFrame, rule: Rule, metric: Metric, value: Any, rows: int
    ) -> RuleResult:
        """The rule's result from its metric's (settled) value: a count against its threshold."""
        return verdict(rule, int(value), rows)

    def measures(self, metric: Metric) -> str | None:
        """The ColumnMeasures field this metric's value fills for its column, or None: counts of
        other rules' offending rows say nothing about the column as a whole."""
        return None
