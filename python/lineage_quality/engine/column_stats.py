"""A column's statistics in one aggregate, its buffers shared (JVM helper `ColumnStats`).

Each statistic rule is its own Spark aggregate: on a column with avg, sum, stddev, min and max,
every row updates eight buffers in five aggregates (avg's sum and count, the sum, the standard
deviation's count, mean and M2, the minimum, the maximum), each with its own null handling. The
helper's one aggregate per column keeps one count of the non-null values, one double sum for the
mean and a floating sum, one mean and M2, and the bounds: six buffers, one null test. Each of its
values is the one Spark's own function gives, bit for bit (the same formulas in the same order:
jvm-config/src/lineagequality/Stats.java; tests/spark/test_column_stats.py compares them).

Only for plain numeric columns (tinyint to bigint, float, double) and avg, sum, stddev, min and
max, not a bigint's sum (taken in decimal), on a column with two or more of them.
`LINEAGE_QUALITY_GROUPED_STATS=0` keeps one aggregate per statistic.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from pyspark.sql import DataFrame

from lineage_quality.engine.columns import col
from lineage_quality.engine.expressions import helper
from lineage_quality.engine.jvm_helpers import jvm_helper
from lineage_quality.engine.plan import Measure, Metric
from lineage_quality.engine.row_gates import Grouped

_TYPES = frozenset({"tinyint", "smallint", "int", "bigint", "float", "double"})
_STATS = frozenset({"avg", "sum", "stddev", "min", "max"})


def grouped_stats(
    df: DataFrame, metrics: Sequence[Metric], among: Collection[int]
) -> list[Grouped]:
    """One aggregate per column of two or more of `metrics[i]` (i in `among`) that are
    statistics it can take; its value a struct, field j the value of metric `metrics[j]`."""
    if jvm_helper("ColumnStats", "GROUPED_STATS") is None:
        return []
    types: dict[str, str] = {}
    for field in df.schema.fields:
        key = field.name.lower()  # Spark resolves names case-blind
        types[key] = "" if key in types else field.dataType.simpleString()
    by_column: dict[str, list[int]] = {}
    for i in among:
        m = metrics[i]
        if m.kind is not Measure.STAT or m.column is None or m.arg not in _STATS:
            continue
        ctype = types.get(m.column.lower(), "")
        if ctype not in _TYPES or (m.arg == "sum" and ctype == "bigint"):
            continue
        by_column.setdefault(m.column, []).append(i)
    grouped: list[Grouped] = []
    for column, found in by_column.items():
        if len(found) < 2:
            continue
        ctype = types[column.lower()]
        stats = [metrics[i].arg for i in found]
        aggregate = helper("ColumnStats", "stats", col(column), ctype, stats)
        grouped.append(Grouped(aggregate, tuple(found)))
    return grouped
