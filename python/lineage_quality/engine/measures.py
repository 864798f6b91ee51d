"""The dataset's numbers, read off the values the plan's passes already returned. Pure.

Deequ keeps every analyzer's metric in its repository; we kept only the verdicts. Here each
fused metric that is a plain column statistic (a null count, a sum, a bound, an average, the
median) and each one-column key set's counts become that column's ColumnMeasures. Nothing is
computed for it: a metric that is not in the plan is simply not reported. Counting metrics of
other rules (rows out of range, invalid values) say nothing about the column as a whole and stay
in their assertions.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from lineage_quality.engine.plan import Metric, MetricKind, Plan
from lineage_quality.engine.uniqueness import KeyCounts
from lineage_quality.engine.verdicts import exact
from lineage_quality.measures import ColumnMeasures, DatasetMeasures

# STAT `arg` -> the ColumnMeasures field it fills
_STAT_FIELDS = {
    "sum": "sum",
    "min": "min",
    "max": "max",
    "avg": "mean",
    "stddev": "stddev",
    "median": "median",
}


def _number(value: Any) -> int | float | None:
    """A measured value as a plain number: exact ints stay ints (a decimal(38,0) sum), other
    decimals become floats; None when nothing was measured."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, Decimal):
        return exact(value)
    if isinstance(value, (int, float)):
        return value
    return None


def _null_count(metric: Metric) -> bool:
    # A missingValues rule without listed values counts exactly the nulls.
    return metric.kind is MetricKind.NULLS or (
        metric.kind is MetricKind.MISSING and not metric.values
    )


def dataset_measures(
    plan: Plan,
    values: Sequence[Any | Exception],
    keys: Mapping[int, KeyCounts | Exception],
    rows: int,
    order: Sequence[str] = (),
) -> DatasetMeasures:
    """`values` are the plan's metric values (an Exception where one failed), `keys` the key
    sets' counts by index, `rows` the scan's row count, `order` the dataset's columns."""
    found: dict[str, dict[str, Any]] = {}
    for metric, value in zip(plan.metrics, values, strict=True):
        if metric.column is None or isinstance(value, Exception):
            continue
        if _null_count(metric):
            number = _number(value)
            if number is not None:
                found.setdefault(metric.column, {})["nulls"] = int(number)
        elif metric.kind is MetricKind.STAT and metric.arg in _STAT_FIELDS:
            number = _number(value)
            if number is not None:
                field = _STAT_FIELDS[metric.arg]
                if field in ("mean", "stddev", "median"):
                    number = float(number)
                found.setdefault(metric.column, {})[field] = number
    for index, counted in keys.items():
        key = plan.key_sets[index]
        if len(key) != 1 or isinstance(counted, Exception):
            continue  # a compound key's distinct count describes no single column
        column = found.setdefault(key[0], {})
        column["distinct"] = counted.distinct
        column.setdefault("nulls", rows - counted.rows)  # rows whose key part is null
    position = {name: i for i, name in enumerate(order)}
    columns = tuple(
        (name, ColumnMeasures(**fields))
        for name, fields in sorted(found.items(), key=lambda kv: position.get(kv[0], math.inf))
        if fields
    )
    return DatasetMeasures(rows=rows, columns=columns, profiled=plan.profiled)
