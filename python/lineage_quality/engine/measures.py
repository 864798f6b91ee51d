"""The dataset's numbers, read off the values the plan's passes already returned. Pure.

Deequ keeps every analyzer's metric in its repository; we kept only the verdicts. Here each
fused metric that is a plain column statistic (a null count, a sum, a bound, an average, the
median: its analyzer names the field, engine/analyzers/) and each one-column key set's counts
become that column's ColumnMeasures. Nothing is
computed for it: a metric that is not in the plan is simply not reported. Counting metrics of
other rules (rows out of range, invalid values) say nothing about the column as a whole and stay
in their assertions.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from lineage_quality.engine.analyzers import analyzer
from lineage_quality.engine.plan import Plan
from lineage_quality.engine.uniqueness import KeyCounts
from lineage_quality.engine.verdicts import exact
from lineage_quality.measures import ColumnMeasures, DatasetMeasures

_FLOATS = ("mean", "stddev", "median")  # fields reported as floats; counts as ints


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
        field = analyzer(metric).measures(metric)  # which of the column's numbers, if any
        number = _number(value) if field is not None else None
        if field is None or number is None:
            continue
        if field == "nulls":
            number = int(number)
        elif field in _FLOATS:
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
