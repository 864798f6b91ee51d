"""Run a plan on a DataFrame: ONE aggregation for every fused metric, one shuffle for the key sets.

Only the single result row of each pass reaches the driver. A failing aggregation (a pattern Java
rejects, a type Spark cannot compare) is isolated by re-running the metrics one at a time, so only
the rules that caused it become errors. `type: sql` rules run their own read-only query on the
dataset registered as a temporary view.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any

import attrs
from pyspark.sql import DataFrame

from lineage_quality.engine import footer_bounds
from lineage_quality.engine.analyzers import analyzer
from lineage_quality.engine.column_stats import grouped_stats
from lineage_quality.engine.dictionary_values import dictionary_columns, dictionary_counts
from lineage_quality.engine.expressions import Expr, agg
from lineage_quality.engine.footer_bounds import bounded_columns, served_bounds
from lineage_quality.engine.footer_nulls import footer_columns, footer_counts, served_nulls
from lineage_quality.engine.key_sets import (
    KeySetCounting,
    key_set_counts,
    overlapped,
    read_what_the_scan_read,
)
from lineage_quality.engine.measures import dataset_measures
from lineage_quality.engine.plan import Metric, Plan, build_plan
from lineage_quality.engine.row_gates import gated_counts
from lineage_quality.engine.samples import take_samples
from lineage_quality.engine.shared_columns import share
from lineage_quality.engine.sql import run_sql_rule
from lineage_quality.engine.sql_sandbox import UnsafeQueryError
from lineage_quality.engine.uniqueness import KeyCounts
from lineage_quality.engine.verdicts import verdict
from lineage_quality.results import Cause, RuleResult, error_result
from lineage_quality.rules import Rule
from lineage_quality.samples import Sampling

log = logging.getLogger(__name__)


def _aggregate(df: DataFrame, metrics: Sequence[Metric], now: float) -> list[Any]:
    """Each metric's aggregation (its analyzer's), in one `agg`; the row's values in order."""
    df, shared = share(df, metrics)
    conditions = [analyzer(m).counted(m, now, shared) for m in metrics]
    df, gated, grouped = gated_counts(df, metrics, conditions, shared)
    in_groups = {i for g in grouped for i in g.metrics}
    grouped.extend(
        grouped_stats(df, metrics, [i for i in range(len(metrics)) if i not in in_groups])
    )
    in_groups = {i for g in grouped for i in g.metrics}
    alone = [i for i in range(len(metrics)) if i not in in_groups]
    columns: list[Expr] = []
    for i in alone:
        own = gated[i]
        if own is None:
            own = analyzer(metrics[i]).aggregation(metrics[i], now, shared, conditions[i])
        columns.append(own)
    columns.extend(g.aggregate for g in grouped)
    row = agg(df, [c.alias(f"m{i}") for i, c in enumerate(columns)]).first()
    assert row is not None  # a global aggregation always yields one row
    values: list[Any] = [None] * len(metrics)
    for i, value in zip(alone, row, strict=False):
        values[i] = value
    for g, found in zip(grouped, list(row)[len(alone) :], strict=True):
        for i, value in zip(g.metrics, found, strict=True):  # a list of counts or a struct
            values[i] = value
    return values


def _fused(
    df: DataFrame, metrics: Sequence[Metric], answered: list[tuple[int, dict[int, Any]]]
) -> list[Any | Exception]:
    """The value of each metric (or the error that kept it from being measured): one scan, less
    what the Parquet files `answered` without it (`_answered`)."""
    if not answered:
        return _scanned(df, metrics)
    served: dict[int, Any] = {}
    for _, answers in answered:
        served.update(answers)
    scanned = [i for i in range(len(metrics)) if i not in served]  # metrics[0], the rows, too
    values = _scanned(df, [metrics[i] for i in scanned])
    rows = values[0]
    if isinstance(rows, Exception):  # the dataset could not be read: nothing is measured
        return [rows for _ in metrics]
    for listed, _ in answered:
        if int(rows) != listed:
            log.warning(
                "Parquet files list %d rows, the scan read %d (files replaced meanwhile?): "
                "testing every column in a scan",
                listed,
                int(rows),
            )
            return _scanned(df, metrics)
    out: list[Any | Exception] = [None] * len(metrics)
    for i, value in zip(scanned, values, strict=True):
        out[i] = value
    for i, value in served.items():
        out[i] = value
    return out


def _answered(df: DataFrame, metrics: Sequence[Metric]) -> list[tuple[int, dict[int, Any]]]:
    """What the files answer without the scan: (the rows they list, metric index -> value).
    Null counts and integer bounds from their footers (engine/footer_nulls.py,
    engine/footer_bounds.py), value tests on their dictionaries (engine/dictionary_values.py)."""
    found: list[tuple[int, dict[int, Any]]] = []
    types = {f.name: f.dataType.simpleString() for f in df.schema.fields}
    now = time.time()
    bounded = bounded_columns(metrics, types)
    nulls_only = footer_columns(metrics)
    footers = None
    if bounded:
        footers = footer_counts(df, nulls_only + bounded, bounded, footer_bounds.MIN_FILE_BYTES)
    if footers is None and nulls_only:  # e.g. a bounded partition column: the files lack it
        footers = footer_counts(df, nulls_only)
    if footers is not None:
        answers: dict[int, Any] = served_nulls(metrics, footers)
        answers.update(served_bounds(metrics, footers, now))
        found.append((footers.rows, answers))
    columns = dictionary_columns(metrics, types)
    dictionaries = dictionary_counts(df, metrics, columns, now) if columns else None
    if dictionaries is not None:
        found.append((dictionaries.rows, dictionaries.values))
    return found


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


@attrs.frozen
class Measured:
    """What a plan's passes measured: each metric's value (or the error that kept it from being
    measured), each key set's counts by index, and the rows."""

    values: list[Any | Exception]
    counted: dict[int, KeyCounts | Exception]
    rows: int


def measure(df: DataFrame, plan: Plan) -> Measured | list[RuleResult]:
    """The plan's passes on `df`; the results outright when nothing could be measured (the
    dataset unreadable) or nothing needed measuring (decided from the schema alone)."""
    needs_scan = plan.profiled or any(s.result is None for s in plan.steps)
    if not needs_scan:
        return [s.result or error_result(s.rule, "not decided") for s in plan.steps]
    answered = _answered(df, plan.metrics)
    # Every key set's counts, the hashable ones in one shuffle (engine/key_sets.py). When the
    # files list their rows, that shuffle's jobs run beside the fused scan's, not after them:
    # each fills the cores the other's last tasks leave idle.
    early = (
        KeySetCounting(df, plan.key_sets, answered[0][0])
        if plan.key_sets and answered and overlapped()
        else None
    )
    try:
        values: list[Any | Exception] = _fused(df, plan.metrics, answered)
        rows = values[0]
        if isinstance(rows, Exception):
            message = f"dataset could not be read: {short_error(rows)}"
            return [s.result or error_result(s.rule, message, Cause.UNREADABLE) for s in plan.steps]
        # where the fused value cannot be trusted (a long sum past 2^32 rows), measured again
        values = [
            analyzer(m).settle(df, m, v, int(rows))
            for m, v in zip(plan.metrics, values, strict=True)
        ]
    finally:
        found = early.result() if early is not None else []  # no Spark work outlives this
    if early is None:
        found = key_set_counts(df, plan.key_sets, int(rows))
    found = read_what_the_scan_read(df, plan.key_sets, found, int(rows))
    return Measured(values, dict(enumerate(found)), int(rows))


def judge(df: DataFrame, plan: Plan, measured: Measured) -> list[RuleResult]:
    """Each rule's result from what was measured (`df`: the data it was measured on, for the
    rare value measured again and for `type: sql` rules)."""
    values, counted, rows = measured.values, measured.counted, measured.rows
    results: list[RuleResult] = []
    for step in plan.steps:
        if step.result is not None:
            results.append(step.result)
            continue
        if step.sql:
            results.append(run_sql_rule(df, step.rule, rows))
            continue
        value: Any
        if step.metric is None:  # a grouped pass: its duplicates against the threshold
            key_set = counted[step.key_set or 0]
            value = key_set if isinstance(key_set, Exception) else key_set.duplicates
        else:
            value = values[step.metric]
        if isinstance(value, Exception):
            results.append(
                error_result(
                    step.rule, f"evaluation failed: {short_error(value)}", Cause.QUERY_FAILED
                )
            )
        elif step.metric is None:
            results.append(verdict(step.rule, int(value), rows))
        else:
            metric = plan.metrics[step.metric]
            results.append(analyzer(metric).result(df, step.rule, metric, value, rows))
    # Every result of the evaluation carries the same numbers (see lineage_quality.measures).
    measures = dataset_measures(plan, values, counted, rows, df.columns)
    return [attrs.evolve(r, measures=measures) for r in results]


def run_plan(df: DataFrame, plan: Plan) -> list[RuleResult]:
    measured = measure(df, plan)
    if isinstance(measured, list):
        return measured
    return judge(df, plan, measured)


def evaluate_dataframe(
    df: DataFrame,
    rules: Sequence[Rule],
    profile: bool = False,
    sampling: Sampling | None = None,
) -> list[RuleResult]:
    """Evaluate `rules` on `df`: one scan for the fused metrics plus one shuffle for the key sets
    (plus one query per `type: sql` rule). `profile` adds every column's cheap metrics (null
    count; min, max and sum of numeric columns) to that same scan, for `dataQualityMetrics`.
    `sampling`: then a few failing rows of each failed rule, masked (engine/samples.py)."""
    results = _evaluate_all(df, rules, profile)
    if sampling is not None:  # only failed rules cost a (bounded) job: engine/samples.py
        results = take_samples(df, results, sampling)
    return results


def _evaluate_all(df: DataFrame, rules: Sequence[Rule], profile: bool) -> list[RuleResult]:
    if not rules:
        return []
    conditions = {r.filter_condition for r in rules if r.filter_condition and r.active}
    if not conditions:
        return _evaluate(df, rules, profile)
    # Rules with a filter condition count only the rows it selects: one more scan per condition.
    whole = [r for r in rules if not (r.filter_condition and r.active)]
    found: dict[int, RuleResult] = {}
    for i, result in zip(_positions(rules, whole), _evaluate(df, whole, profile), strict=True):
        found[i] = result
    for condition in sorted(conditions):
        chosen = [r for r in rules if r.active and r.filter_condition == condition]
        for i, result in zip(
            _positions(rules, chosen), _evaluate_where(df, chosen, condition), strict=True
        ):
            found[i] = result
    return [found[i] for i in range(len(rules))]


# Where Spark keeps a catalog column's declared char/varchar type (CharVarcharUtils).
VARCHAR_KEY = "__CHAR_VARCHAR_TYPE_STRING"


def _positions(rules: Sequence[Rule], chosen: Sequence[Rule]) -> list[int]:
    ids = {id(r) for r in chosen}
    return [i for i, r in enumerate(rules) if id(r) in ids]


def _evaluate(df: DataFrame, rules: Sequence[Rule], profile: bool) -> list[RuleResult]:
    if not rules:
        return []
    fields = df.schema.fields
    schema = [(f.name, f.dataType.simpleString()) for f in fields]
    declared = {f.name: f.metadata[VARCHAR_KEY] for f in fields if VARCHAR_KEY in f.metadata}
    plan = build_plan(rules, schema, profile, declared)
    return run_plan(df, plan)


def _evaluate_where(df: DataFrame, rules: Sequence[Rule], condition: str) -> list[RuleResult]:
    from lineage_quality.engine.filters import filtered

    try:
        with filtered(df, condition) as selected:
            results = _evaluate(selected, rules, profile=False)
    except UnsafeQueryError as exc:
        return [error_result(r, str(exc)) for r in rules]
    scope = f"rows where {condition}"
    return [attrs.evolve(r, scope=scope) for r in results]
