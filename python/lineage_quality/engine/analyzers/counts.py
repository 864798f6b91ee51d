"""The kinds that count offending rows: each declares its per-row predicate; the scan counts it
(`count(CASE WHEN offends THEN 1 END)`, row_gates.py) and the rule's count is judged against its
threshold (`Analyzer.result`)."""

from __future__ import annotations

from functools import reduce
from typing import Any

from lineage_quality.engine import functions as F
from lineage_quality.engine.analyzers.base import Analyzer
from lineage_quality.engine.columns import col, is_not_null
from lineage_quality.engine.expressions import Expr
from lineage_quality.engine.patterns import pattern_matches
from lineage_quality.engine.plan import Metric
from lineage_quality.engine.row_gates import count_where
from lineage_quality.engine.shared_columns import Shared


def _column(metric: Metric) -> Expr:
    assert metric.column is not None
    return col(metric.column)


def _outside(value: Expr, low: float | None, high: float | None) -> Expr:
    conditions = []
    if low is not None:
        conditions.append(value < F.lit(low))
    if high is not None:
        conditions.append(value > F.lit(high))
    return reduce(lambda a, b: a | b, conditions)


def _member(metric: Metric, values: tuple[Any, ...], shared: Shared | None) -> Expr:
    """Whether the column's value is one of `values`: the shared bit test where the scan
    computes one for the column's value lists (shared_columns.py), else `isin`."""
    key = (metric.column or "", values)
    if shared is not None and key in shared.members:
        return shared.members[key]
    return _column(metric).isin(list(values))


class Count(Analyzer):
    """Rows where `condition` holds."""

    def aggregation(
        self, metric: Metric, now: float, shared: Shared | None, counted: Expr | None
    ) -> Expr:
        assert counted is not None
        return count_where(counted)


class Nulls(Count):
    """NULLS: rows where the column is null; also the column's null count."""

    def condition(self, metric: Metric, now: float, shared: Shared | None) -> Expr:
        return _column(metric).isNull()

    def aggregation(
        self, metric: Metric, now: float, shared: Shared | None, counted: Expr | None
    ) -> Expr:
        # count(*) - count(c): both are plain counters, and count(*) is shared by every metric.
        return F.count(F.lit(1)) - F.count(_column(metric))

    def measures(self, metric: Metric) -> str:
        return "nulls"


class Missing(Count):
    """MISSING: rows where the column is null or one of the missing values."""

    def condition(self, metric: Metric, now: float, shared: Shared | None) -> Expr:
        missing = _column(metric).isNull()
        if metric.values:
            missing = missing | _member(metric, metric.values, shared)
        return missing

    def measures(self, metric: Metric) -> str | None:
        # without listed values it counts exactly the nulls
        return None if metric.values else "nulls"


class Invalid(Count):
    """INVALID: non-null rows that fail a given test (the value list, the pattern or both)."""

    def condition(self, metric: Metric, now: float, shared: Shared | None) -> Expr:
        # null is not invalid (nullValues covers it); a value must pass every given test.
        assert metric.column is not None
        valid: Expr | None = None
        if metric.values is not None:
            valid = _member(metric, metric.values, shared)
        if metric.pattern is not None:
            key = (metric.column, metric.pattern)
            matches = (
                shared.matches[key]
                if shared is not None and key in shared.matches
                else pattern_matches(_column(metric).cast("string"), metric.pattern)
            )
            valid = matches if valid is None else (valid & matches)
        assert valid is not None
        return is_not_null(metric.column) & ~valid


class OutOfRange(Count):
    """OUT_OF_RANGE: non-null rows outside [low, high]."""

    def condition(self, metric: Metric, now: float, shared: Shared | None) -> Expr:
        # NaN sorts above every number in Spark, so it is outside any range with a maximum.
        assert metric.column is not None
        return is_not_null(metric.column) & _outside(_column(metric), metric.low, metric.high)


class LengthOut(Count):
    """LENGTH_OUT: non-null rows whose length (an array's element count) is outside the range."""

    def condition(self, metric: Metric, now: float, shared: Shared | None) -> Expr:
        assert metric.column is not None
        c = _column(metric)
        length = F.size(c) if metric.array else F.length(c.cast("string"))
        return is_not_null(metric.column) & _outside(length, metric.low, metric.high)


class CardinalityOut(Count):
    """CARDINALITY_OUT: rows whose number of values (0 for null) is outside the range."""

    def condition(self, metric: Metric, now: float, shared: Shared | None) -> Expr:
        c = _column(metric)
        count = F.when(c.isNull(), F.lit(0)).otherwise(F.size(c) if metric.array else F.lit(1))
        return _outside(count, metric.low, metric.high)


class BadDate(Count):
    """BAD_DATE: non-null string rows that do not parse with the pattern `arg`. A date or
    timestamp column (`typed`) has nothing to parse: 0, with nothing counted per row."""

    def condition(self, metric: Metric, now: float, shared: Shared | None) -> Expr:
        assert metric.column is not None
        if metric.typed:
            return F.lit(False)
        parsed = F.to_timestamp(_column(metric), metric.arg or "")
        return is_not_null(metric.column) & parsed.isNull()

    def counted(self, metric: Metric, now: float, shared: Shared | None) -> Expr | None:
        return None if metric.typed else self.condition(metric, now, shared)

    def aggregation(
        self, metric: Metric, now: float, shared: Shared | None, counted: Expr | None
    ) -> Expr:
        if metric.typed:
            return F.lit(0).cast("long")
        return super().aggregation(metric, now, shared, counted)


class Age(Count):
    """TOO_NEW / TOO_OLD: rows newer (older) than `low` seconds before now."""

    def __init__(self, newer: bool) -> None:
        self.newer = newer

    def condition(self, metric: Metric, now: float, shared: Shared | None) -> Expr:
        assert metric.low is not None
        epoch = _column(metric).cast("timestamp").cast("double")
        cutoff = F.lit(now - metric.low)
        return epoch > cutoff if self.newer else epoch < cutoff
