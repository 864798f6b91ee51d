"""STAT: a statistic of a numeric column (`arg`: avg, sum, stddev, median, min, max), judged as
a value against the rule's threshold and reported as the column's number.

Exact where a double would round: a 64-bit column's sum in decimal(38,0); a narrower one's as a
long, measured again in decimal past 2^32 rows (where that long may have wrapped); integer min and
max as longs. A standard deviation whose squares overflow a double is measured again on rescaled
values.
"""

from __future__ import annotations

import math
from typing import Any

from pyspark.sql import DataFrame

from lineage_quality.engine import functions as F
from lineage_quality.engine.analyzers.base import Analyzer
from lineage_quality.engine.columns import col
from lineage_quality.engine.expressions import Expr, agg
from lineage_quality.engine.plan import Metric
from lineage_quality.engine.row_gates import count_where
from lineage_quality.engine.shared_columns import Shared
from lineage_quality.engine.verdicts import value_verdict
from lineage_quality.results import RuleResult, error_result
from lineage_quality.rules import Rule

NARROW_SUM_EXACT_ROWS = 2**32  # below it a long sum of 32-bit values cannot pass 2^63

_STATS = {
    "avg": F.avg,
    "sum": F.sum,
    "stddev": F.stddev_samp,
    "median": F.median,
    "min": F.min,
    "max": F.max,
}
# `arg` -> the ColumnMeasures field it fills
_FIELDS = {
    "sum": "sum",
    "min": "min",
    "max": "max",
    "avg": "mean",
    "stddev": "stddev",
    "median": "median",
}


class Statistic(Analyzer):
    def aggregation(
        self, metric: Metric, now: float, shared: Shared | None, counted: Expr | None
    ) -> Expr:
        assert metric.arg is not None and metric.column is not None
        c = col(metric.column)
        if metric.wide and metric.arg == "sum":
            # A bigint sum wraps at 2^63 with ANSI off; in decimal(38,0) it cannot for < 10^19
            # rows.
            return F.sum(c.cast("decimal(38,0)"))
        if metric.integral and metric.arg == "sum":
            # Values below 2^31 cannot reach 2^63 in fewer than 2^32 rows: the long sum is
            # exact, and several times faster than a decimal one.
            return F.sum(c.cast("long"))
        if metric.integral and metric.arg in ("min", "max"):
            return _STATS[metric.arg](c).cast("long")  # exact: a double rounds above 2^53
        return _STATS[metric.arg](c).cast("double")

    def settle(self, df: DataFrame, metric: Metric, value: Any, rows: int) -> Any:
        narrow_sum = metric.integral and not metric.wide and metric.arg == "sum"
        if not narrow_sum or rows < NARROW_SUM_EXACT_ROWS or metric.column is None:
            return value
        try:  # the long sum may have wrapped: again in decimal
            exact = agg(df, [F.sum(col(metric.column).cast("decimal(38,0)"))]).first()
            return exact[0] if exact is not None else None
        except Exception as exc:
            return exc

    def result(
        self, df: DataFrame, rule: Rule, metric: Metric, value: Any, rows: int
    ) -> RuleResult:
        if metric.arg == "stddev" and _overflowed(value):
            value = _rescaled_stddev(df, metric)
            if isinstance(value, str):
                return error_result(rule, value)
        return value_verdict(rule, value, rows)

    def measures(self, metric: Metric) -> str | None:
        return _FIELDS.get(metric.arg or "")


def _overflowed(value: Any) -> bool:
    return isinstance(value, float) and not math.isfinite(value)


def _rescaled_stddev(df: DataFrame, metric: Metric) -> float | str:
    """The standard deviation of finite values whose squares overflow a double (near 1e300):
    Spark's one-pass formula then gives NaN. Computed again on values scaled by the largest
    magnitude (an extra pass, only in this case). A NaN or infinite value in the data leaves
    the NaN as measured; an error says why when the rescue fails too."""
    assert metric.column is not None
    c = col(metric.column).cast("double")
    bad = F.isnan(c) | (F.abs(c) == F.lit(float("inf")))
    row = agg(df, [count_where(bad).alias("bad"), F.max(F.abs(c)).alias("scale")]).first()
    assert row is not None
    if int(row["bad"]) > 0 or not row["scale"]:
        return float("nan")
    scale = float(row["scale"])
    again = agg(df, [(F.stddev_samp(c / F.lit(scale)) * F.lit(scale)).alias("s")]).first()
    assert again is not None
    value = again["s"]
    if value is None or not math.isfinite(value):
        return "stddev overflows a double even after rescaling the values"
    return float(value)
