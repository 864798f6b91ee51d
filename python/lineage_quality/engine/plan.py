"""Turn the rules of one dataset into one fused aggregation plus grouped passes.

Pure: works on column names and types, never touches Spark. In the manner of Deequ's analyzers,
each rule declares the aggregate it needs; identical aggregates are computed once; schema
preconditions (the column exists, the regex compiles) are checked here, before any scan, and a
rule that fails them becomes an error result instead of breaking the scan for the others.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Sequence
from typing import Any

import attrs

from lineage_quality.rules import Rule, RuleKind


class MetricKind(enum.Enum):
    ROWS = "rows"  # count(*)
    NULLS = "nulls"  # rows where the column is null
    MISSING = "missing"  # rows where the column is null or one of the missing values
    INVALID = "invalid"  # non-null rows that are not valid (value list and/or pattern)


@attrs.frozen
class Metric:
    """One aggregate expression of the fused scan."""

    kind: MetricKind
    column: str | None = None
    values: tuple[Any, ...] | None = None
    pattern: str | None = None


ROWS = Metric(MetricKind.ROWS)


@attrs.frozen
class Step:
    """How one rule gets its number: a metric slot, a grouped pass, or an up-front error."""

    rule: Rule
    metric: int | None = None  # index into Plan.metrics
    key_set: int | None = None  # index into Plan.key_sets
    error: str | None = None


@attrs.frozen
class Plan:
    metrics: tuple[Metric, ...]  # metrics[0] is always ROWS: every verdict needs the row count
    key_sets: tuple[tuple[str, ...], ...]
    steps: tuple[Step, ...]


def resolve_column(name: str, columns: Sequence[str]) -> str | None:
    """The dataset's spelling of `name`: exact, else case-insensitive (Spark's default)."""
    if name in columns:
        return name
    folded = [c for c in columns if c.lower() == name.lower()]
    return folded[0] if len(folded) == 1 else None


def _metric_for(rule: Rule, column: str) -> Metric:
    if rule.kind is RuleKind.NULL_VALUES:
        return Metric(MetricKind.NULLS, column)
    if rule.kind is RuleKind.MISSING_VALUES:
        values = tuple(v for v in (rule.missing_values or ()) if v is not None)
        return Metric(MetricKind.MISSING, column, values=values)
    if rule.kind is RuleKind.INVALID_VALUES:
        return Metric(MetricKind.INVALID, column, values=rule.valid_values, pattern=rule.pattern)
    raise ValueError(f"no fused metric for {rule.kind}")


def build_plan(rules: Iterable[Rule], columns: Sequence[str]) -> Plan:
    metrics: list[Metric] = [ROWS]
    key_sets: list[tuple[str, ...]] = []
    steps: list[Step] = []

    def slot(metric: Metric) -> int:
        if metric not in metrics:
            metrics.append(metric)
        return metrics.index(metric)

    for rule in rules:
        resolved = [resolve_column(c, columns) for c in rule.columns]
        missing = [c for c, r in zip(rule.columns, resolved, strict=True) if r is None]
        if missing:
            steps.append(Step(rule, error=f"column not found in dataset: {', '.join(missing)}"))
            continue
        cols = tuple(r for r in resolved if r is not None)
        if rule.pattern is not None:
            try:
                re.compile(rule.pattern)
            except re.error as exc:
                steps.append(Step(rule, error=f"invalid pattern {rule.pattern!r}: {exc}"))
                continue
        if rule.kind is RuleKind.ROW_COUNT:
            steps.append(Step(rule, metric=0))
        elif rule.kind.is_grouped:
            if cols not in key_sets:
                key_sets.append(cols)
            steps.append(Step(rule, key_set=key_sets.index(cols)))
        else:
            steps.append(Step(rule, metric=slot(_metric_for(rule, cols[0]))))
    return Plan(metrics=tuple(metrics), key_sets=tuple(key_sets), steps=tuple(steps))
