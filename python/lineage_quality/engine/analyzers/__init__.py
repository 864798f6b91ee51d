"""The metric kinds, each in one place (Deequ's analyzers): what one kind declares is in
`base.Analyzer`; this table says which analyzer measures each `Measure` of the plan.

    rows.py     ROWS: count(*)
    counts.py   the kinds that count offending rows (nulls, missing, invalid, ranges, dates)
    stats.py    STAT: a column's statistic, exact where a double would round

These are the built-in measurements; a rule kind (kinds/) asks for one in `Kind.metric`. A kind
that measures something none of them does names its metric by its own value and brings its
analyzer (`Kind.analyzer`).
"""

from __future__ import annotations

from lineage_quality.engine.analyzers.base import Analyzer
from lineage_quality.engine.analyzers.counts import (
    Age,
    BadDate,
    CardinalityOut,
    Invalid,
    LengthOut,
    Missing,
    Nulls,
    OutOfRange,
)
from lineage_quality.engine.analyzers.rows import Rows
from lineage_quality.engine.analyzers.stats import Statistic
from lineage_quality.engine.expressions import Expr
from lineage_quality.engine.shared_columns import Shared
from lineage_quality.values.metric import Measure, Metric

ANALYZERS: dict[Measure, Analyzer] = {
    Measure.ROWS: Rows(),
    Measure.NULLS: Nulls(),
    Measure.MISSING: Missing(),
    Measure.INVALID: Invalid(),
    Measure.OUT_OF_RANGE: OutOfRange(),
    Measure.LENGTH_OUT: LengthOut(),
    Measure.CARDINALITY_OUT: CardinalityOut(),
    Measure.BAD_DATE: BadDate(),
    Measure.TOO_NEW: Age(newer=True),
    Measure.TOO_OLD: Age(newer=False),
    Measure.STAT: Statistic(),
}

__all__ = ["ANALYZERS", "Analyzer", "analyzer", "failing_condition", "metric_column"]


def analyzer(metric: Metric) -> Analyzer:
    """The analyzer of a built-in Measure, else the one its kind brings (`Metric.measure`,
    set by the plan)."""
    if isinstance(metric.kind, Measure):
        return ANALYZERS[metric.kind]
    found = metric.measure
    if not isinstance(found, Analyzer):
        raise TypeError(f"kind {metric.kind}: analyzer() must return an engine Analyzer")
    return found


def failing_condition(metric: Metric, now: float, shared: Shared | None = None) -> Expr | None:
    """The per-row predicate a counting metric counts (true = an offending row), or None for
    metrics that are not row counts (ROWS, STAT). Quarantine selects rows with this same
    expression, so what it writes aside is exactly what the verdict counted."""
    return analyzer(metric).condition(metric, now, shared)


def metric_column(metric: Metric, now: float, shared: Shared | None = None) -> Expr:
    """The aggregate column that measures `metric` on its own (no row gate)."""
    found = analyzer(metric)
    return found.aggregation(metric, now, shared, found.counted(metric, now, shared))
