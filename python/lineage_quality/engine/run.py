"""Run a plan on a DataFrame: ONE aggregation for every fused metric, one grouped pass per key set.

Only the single result row of each pass reaches the driver. A failing aggregation (a pattern Java
rejects, a type Spark cannot compare) is isolated by re-running the metrics one at a time, so only
the rules that caused it become errors.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from functools import reduce
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from lineage_quality.engine.plan import Metric, MetricKind, Plan, build_plan
from lineage_quality.engine.verdicts import verdict
from lineage_quality.results import RuleResult, error_result
from lineage_quality.rules import Rule

log = logging.getLogger(__name__)


def quote(name: str) -> str:
    """A column reference that Spark reads literally, whatever characters the name holds."""
    return "`" + name.replace("`", "``") + "`"


def col(name: str) -> Column:
    return F.col(quote(name))


def _count_where(condition: Column) -> Column:
    # sum(CASE WHEN ...) rather than count_if: same plan, and null-safe on empty input via coalesce.
    return F.coalesce(F.sum(F.when(condition, F.lit(1)).otherwise(F.lit(0))), F.lit(0))


def metric_column(metric: Metric) -> Column:
    if metric.kind is MetricKind.ROWS:
        return F.count(F.lit(1))
    assert metric.column is not None
    c = col(metric.column)
    if metric.kind is MetricKind.NULLS:
        return _count_where(c.isNull())
    if metric.kind is MetricKind.MISSING:
        missing = c.isNull()
        if metric.values:
            missing = missing | c.isin(list(metric.values))
        return _count_where(missing)
    # INVALID: null is not invalid (nullValues covers it); a value must satisfy every given test.
    valid: Column | None = None
    if metric.values is not None:
        valid = c.isin(list(metric.values))
    if metric.pattern is not None:
        matches = c.cast("string").rlike(metric.pattern)
        valid = matches if valid is None else (valid & matches)
    assert valid is not None
    return _count_where(c.isNotNull() & ~valid)


def _aggregate(df: DataFrame, metrics: Sequence[Metric]) -> list[Any]:
    row = df.agg(*[metric_column(m).alias(f"m{i}") for i, m in enumerate(metrics)]).first()
    assert row is not None  # a global aggregation always yields one row
    return list(row)


def _fused(df: DataFrame, metrics: Sequence[Metric]) -> list[Any | Exception]:
    try:
        return list(_aggregate(df, metrics))
    except Exception as exc:
        log.warning("fused aggregation failed (%s); isolating metrics", _short(exc))
        out: list[Any | Exception] = []
        for m in metrics:
            try:
                out.append(_aggregate(df, [m])[0])
            except Exception as inner:
                out.append(inner)
        return out


def duplicate_count(df: DataFrame, columns: Sequence[str]) -> int:
    """Rows repeating an earlier row's key (all parts non-null): non-null rows - distinct keys."""
    not_null = reduce(lambda a, b: a & b, [col(c).isNotNull() for c in columns])
    grouped = (
        df.where(not_null).groupBy(*[col(c) for c in columns]).agg(F.count(F.lit(1)).alias("lq_n"))
    )
    row = grouped.agg(
        F.coalesce(F.sum("lq_n"), F.lit(0)).alias("rows"), F.count(F.lit(1)).alias("keys")
    ).first()
    assert row is not None
    return int(row["rows"]) - int(row["keys"])


def _short(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__


def run_plan(df: DataFrame, plan: Plan) -> list[RuleResult]:
    values = _fused(df, plan.metrics)
    rows = values[0]
    if isinstance(rows, Exception):
        return [
            error_result(s.rule, f"dataset could not be read: {_short(rows)}") for s in plan.steps
        ]
    duplicates: dict[int, int | Exception] = {}
    for i, keys in enumerate(plan.key_sets):
        if any(s.key_set == i for s in plan.steps):
            try:
                duplicates[i] = duplicate_count(df, keys)
            except Exception as exc:
                duplicates[i] = exc
    results: list[RuleResult] = []
    for step in plan.steps:
        if step.error is not None:
            results.append(error_result(step.rule, step.error))
            continue
        measured = values[step.metric] if step.metric is not None else duplicates[step.key_set or 0]
        if isinstance(measured, Exception):
            results.append(error_result(step.rule, f"evaluation failed: {_short(measured)}"))
        else:
            results.append(verdict(step.rule, int(measured), int(rows)))
    return results


def evaluate_dataframe(df: DataFrame, rules: Sequence[Rule]) -> list[RuleResult]:
    """Evaluate `rules` on `df`: one scan for the fused metrics plus one per uniqueness key set."""
    if not rules:
        return []
    plan = build_plan(rules, df.columns)
    return run_plan(df, plan)
