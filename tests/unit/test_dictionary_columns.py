"""Which columns the Parquet dictionaries may answer (engine/dictionary_values.py). Pure."""

from __future__ import annotations

from lineage_quality.engine.dictionary_values import dictionary_columns
from lineage_quality.engine.plan import Metric, MetricKind

TYPES = {"s": "string", "t": "string", "n": "bigint", "u": "string", "v": "string", "w": "string"}


def test_only_string_columns_with_value_tests_and_nothing_else() -> None:
    metrics = [
        Metric(MetricKind.ROWS),
        Metric(MetricKind.INVALID, "s", values=("a", "b")),
        Metric(MetricKind.NULLS, "s"),
        Metric(MetricKind.INVALID, "t", pattern="^x$"),
        Metric(MetricKind.LENGTH_OUT, "t", low=1),  # needs every value's length: the scan
        Metric(MetricKind.INVALID, "n", values=(1, 2)),  # not a string column
        Metric(MetricKind.MISSING, "u", values=("",)),
        Metric(MetricKind.MISSING, "v", values=()),  # a null count: the footers answer it
        Metric(MetricKind.NULLS, "w"),
    ]
    assert dictionary_columns(metrics, TYPES) == ["s", "u"]
