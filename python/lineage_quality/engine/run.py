"""Run a plan on a DataFrame: ONE aggregation for every fused metric, one grouped pass per key set.

Only the single result row of each pass reaches the driver. A failing aggregation (a pattern Java
rejects, a type Spark cannot compare) is isolated by re-running the metrics one at a time, so only
the rules that caused it become errors. `type: sql` rules run their own read-only query on the
dataset registered as a temporary view.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from functools import reduce
from typing import Any

import attrs
from pyspark.sql import DataFrame

from lineage_quality.engine import functions as F
from lineage_quality.engine.columns import col, is_not_null
from lineage_quality.engine.expressions import Expr, agg
from lineage_quality.engine.footer_nulls import footer_columns, footer_counts
from lineage_quality.engine.measures import dataset_measures
from lineage_quality.engine.patterns import pattern_matches
from lineage_quality.engine.plan import Metric, MetricKind, Plan, build_plan
from lineage_quality.engine.row_gates import count_where, gated_counts
from lineage_quality.engine.shared_columns import Shared, share
from lineage_quality.engine.sql import run_sql_rule
from lineage_quality.engine.uniqueness import KeyCounts, key_counts
from lineage_quality.engine.verdicts import value_verdict, verdict
from lineage_quality.results import RuleResult, error_result
from lineage_quality.rules import Rule

log = logging.getLogger(__name__)


NARROW_SUM_EXACT_ROWS = 2**32  # below it a long sum of 32-bit values cannot pass 2^63


def _outside(value: Expr, low: float | None, high: float | None) -> Expr:
    conditions = []
    if low is not None:
        conditions.append(value < F.lit(low))
    if high is not None:
        conditions.append(value > F.lit(high))
    return reduce(lambda a, b: a | b, conditions)


_STATS = {
    "avg": F.avg,
    "sum": F.sum,
    "stddev": F.stddev_samp,
    "median": F.median,
    "min": F.min,
    "max": F.max,
}


def failing_condition(metric: Metric, now: float, shared: Shared | None = None) -> Expr | None:
    """The per-row predicate a counting metric counts (true = an offending row), or None for
    metrics that are not row counts (ROWS, STAT). Quarantine selects rows with this same
    expression, so what it writes aside is exactly what the verdict counted."""
    kind = metric.kind
    if kind is MetricKind.ROWS or kind is MetricKind.STAT:
        return None
    assert metric.column is not None
    c = col(metric.column)
    if kind is MetricKind.NULLS:
        return c.isNull()
    if kind is MetricKind.MISSING:
        missing = c.isNull()
        if metric.values:
            missing = missing | _member(c, metric, metric.values, shared)
        return missing
    if kind is MetricKind.INVALID:
        # null is not invalid (nullValues covers it); a value must pass every given test.
        valid: Expr | None = None
        if metric.values is not None:
            valid = _member(c, metric, metric.values, shared)
        if metric.pattern is not None:
            key = (metric.column, metric.pattern)
            matches = (
                shared.matches[key]
                if shared is not None and key in shared.matches
                else pattern_matches(c.cast("string"), metric.pattern)
            )
            valid = matches if valid is None else (valid & matches)
        assert valid is not None
        return is_not_null(metric.column) & ~valid
    if kind is MetricKind.OUT_OF_RANGE:
        # NaN sorts above every number in Spark, so it is outside any range with a maximum.
        return is_not_null(metric.column) & _outside(c, metric.low, metric.high)
    if kind is MetricKind.LENGTH_OUT:
        length = F.size(c) if metric.array else F.length(c.cast("string"))
        return is_not_null(metric.column) & _outside(length, metric.low, metric.high)
    if kind is MetricKind.CARDINALITY_OUT:
        count = F.when(c.isNull(), F.lit(0)).otherwise(F.size(c) if metric.array else F.lit(1))
        return _outside(count, metric.low, metric.high)
    if kind is MetricKind.BAD_DATE:
        if metric.typed:
            return F.lit(False)
        parsed = F.to_timestamp(c, metric.arg or "")
        return is_not_null(metric.column) & parsed.isNull()
    assert kind is MetricKind.TOO_NEW or kind is MetricKind.TOO_OLD
    assert metric.low is not None
    epoch = c.cast("timestamp").cast("double")
    cutoff = F.lit(now - metric.low)
    return epoch > cutoff if kind is MetricKind.TOO_NEW else epoch < cutoff


def _member(c: Expr, metric: Metric, values: tuple[Any, ...], shared: Shared | None) -> Expr:
    key = (metric.column or "", values)
    if shared is not None and key in shared.members:
        return shared.members[key]
    return c.isin(list(values))


def metric_column(metric: Metric, now: float, shared: Shared | None = None) -> Expr:
    if metric.kind is MetricKind.ROWS:
        return F.count(F.lit(1))
    if metric.kind is MetricKind.BAD_DATE and metric.typed:
        return F.lit(0).cast("long")
    if metric.kind is MetricKind.NULLS:
        # count(*) - count(c): both are plain counters, and count(*) is shared by every metric.
        assert metric.column is not None
        return F.count(F.lit(1)) - F.count(col(metric.column))
    condition = failing_condition(metric, now, shared)
    if condition is not None:
        return count_where(condition)
    assert metric.kind is MetricKind.STAT and metric.arg is not None
    assert metric.column is not None
    c = col(metric.column)
    if metric.wide and metric.arg == "sum":
        # A bigint sum wraps at 2^63 with ANSI off; in decimal(38,0) it cannot for < 10^19 rows.
        return F.sum(c.cast("decimal(38,0)"))
    if metric.integral and metric.arg == "sum":
        # Values below 2^31 cannot reach 2^63 in fewer than 2^32 rows: the long sum is exact,
        # and several times faster than a decimal one.
        return F.sum(c.cast("long"))
    if metric.integral and metric.arg in ("min", "max"):
        return _STATS[metric.arg](c).cast("long")  # exact: a double rounds above 2^53
    return _STATS[metric.arg](c).cast("double")


def _aggregate(df: DataFrame, metrics: Sequence[Metric], now: float) -> list[Any]:
    df, shared = share(df, metrics)
    conditions: list[Expr | None] = []
    for m in metrics:
        typed_date = m.kind is MetricKind.BAD_DATE and m.typed  # a constant 0, nothing to count
        conditions.append(None if typed_date else failing_condition(m, now, shared))
    df, gated = gated_counts(df, metrics, conditions, shared)
    columns = []
    for m, condition, count in zip(metrics, conditions, gated, strict=True):
        if count is None and condition is not None and m.kind is not MetricKind.NULLS:
            count = count_where(condition)  # as metric_column would, without building it again
        columns.append(count if count is not None else metric_column(m, now, shared))
    row = agg(df, [c.alias(f"m{i}") for i, c in enumerate(columns)]).first()
    assert row is not None  # a global aggregation always yields one row
    return list(row)


def _fused(df: DataFrame, metrics: Sequence[Metric]) -> list[Any | Exception]:
    """The value of each metric (or the error that kept it from being measured): one scan, less
    the null counts the Parquet footers give (engine/footer_nulls.py)."""
    columns = footer_columns(metrics)
    footers = footer_counts(df, columns) if columns else None
    if footers is None:
        return _scanned(df, metrics)
    served = {
        i: footers.nulls[m.column]
        for i, m in enumerate(metrics)
        if m.kind is MetricKind.NULLS and m.column in footers.nulls
    }
    scanned = [i for i in range(len(metrics)) if i not in served]  # metrics[0], the rows, too
    values = _scanned(df, [metrics[i] for i in scanned])
    rows = values[0]
    if isinstance(rows, Exception):  # the dataset could not be read: nothing is measured
        return [rows for _ in metrics]
    if int(rows) != footers.rows:
        log.warning(
            "Parquet footers list %d rows, the scan read %d (files replaced meanwhile?): "
            "counting nulls in a scan",
            footers.rows,
            int(rows),
        )
        return _scanned(df, metrics)
    out: list[Any | Exception] = [None] * len(metrics)
    for i, value in zip(scanned, values, strict=True):
        out[i] = value
    for i, nulls in served.items():
        out[i] = nulls
    return out


def _scanned(df: DataFrame, metrics: Sequence[Metric]) -> list[Any | Exception]:
    now = time.time()
    try:
        return list(_aggregate(df, metrics, now))
    except Exception as exc:  # isolate which metric broke the scan
        if _cancelled(exc):  # cancelled on purpose: starting more jobs would defeat the cancel
            return [exc for _ in metrics]
        log.warning("fused aggregation failed (%s); isolating metrics", short_error(exc))
        out: list[Any | Exception] = []
        for m in metrics:
            try:
                out.append(_aggregate(df, [m], now)[0])
            except Exception as inner:
                out.append(inner)
        return out


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


def _cancelled(exc: Exception) -> bool:
    text = str(exc).lower()
    return "cancelled" in text and ("job" in text or "stage" in text)


def short_error(exc: BaseException) -> str:
    """One line saying what went wrong: for a JVM error its root cause (a PatternSyntaxException,
    a cast failure), not py4j's "An error occurred while calling o123.collectToPython"."""
    text = str(exc)
    java = getattr(exc, "java_exception", None)
    if java is not None:
        try:
            cause = java
            while cause.getCause() is not None:
                cause = cause.getCause()
            text = str(cause.toString())
        except Exception:  # the JVM side is gone: keep the Python text
            pass
    lines = text.strip().splitlines()
    return lines[0][:300] if lines else type(exc).__name__


def run_plan(df: DataFrame, plan: Plan) -> list[RuleResult]:
    needs_scan = plan.profiled or any(s.result is None for s in plan.steps)
    values: list[Any | Exception] = _fused(df, plan.metrics) if needs_scan else [0]
    rows = values[0]
    if isinstance(rows, Exception):
        message = f"dataset could not be read: {short_error(rows)}"
        return [s.result or error_result(s.rule, message) for s in plan.steps]
    if int(rows) >= NARROW_SUM_EXACT_ROWS:  # a long sum of ints may have wrapped: redo in decimal
        for i, m in enumerate(plan.metrics):
            if m.integral and not m.wide and m.arg == "sum" and m.column is not None:
                try:
                    exact = agg(df, [F.sum(col(m.column).cast("decimal(38,0)"))]).first()
                    values[i] = exact[0] if exact is not None else None
                except Exception as exc:
                    values[i] = exc
    counted: dict[int, KeyCounts | Exception] = {}
    for i, keys in enumerate(plan.key_sets):
        try:
            counted[i] = key_counts(df, keys, int(rows))
        except Exception as exc:
            counted[i] = exc
    results: list[RuleResult] = []
    for step in plan.steps:
        if step.result is not None:
            results.append(step.result)
            continue
        if step.sql:
            results.append(run_sql_rule(df, step.rule, int(rows)))
            continue
        measured: Any
        if step.metric is not None:
            measured = values[step.metric]
            metric = plan.metrics[step.metric]
        else:
            key_set = counted[step.key_set or 0]
            measured = key_set if isinstance(key_set, Exception) else key_set.duplicates
            metric = None
        if isinstance(measured, Exception):
            results.append(error_result(step.rule, f"evaluation failed: {short_error(measured)}"))
        elif metric is not None and metric.kind is MetricKind.STAT:
            if metric.arg == "stddev" and _overflowed(measured):
                measured = _rescaled_stddev(df, metric)
                if isinstance(measured, str):
                    results.append(error_result(step.rule, measured))
                    continue
            results.append(value_verdict(step.rule, measured, int(rows)))
        else:
            results.append(verdict(step.rule, int(measured), int(rows)))
    if not needs_scan:
        return results  # decided from the schema alone: nothing was measured
    # Every result of the evaluation carries the same numbers (see lineage_quality.measures).
    measures = dataset_measures(plan, values, counted, int(rows), df.columns)
    return [attrs.evolve(r, measures=measures) for r in results]


def evaluate_dataframe(
    df: DataFrame, rules: Sequence[Rule], profile: bool = False
) -> list[RuleResult]:
    """Evaluate `rules` on `df`: one scan for the fused metrics plus one per uniqueness key set
    (plus one query per `type: sql` rule). `profile` adds every column's cheap metrics (null
    count; min, max and sum of numeric columns) to that same scan, for `dataQualityMetrics`."""
    if not rules:
        return []
    schema = [(f.name, f.dataType.simpleString()) for f in df.schema.fields]
    plan = build_plan(rules, schema, profile)
    return run_plan(df, plan)
