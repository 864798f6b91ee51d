"""Which columns the Parquet dictionaries may answer (engine/dictionary_values.py). Pure."""

from __future__ import annotations

from lineage_quality.engine.dictionary_values import dictionary_columns
from lineage_quality.engine.plan import Measure, Metric

TYPES = {"s": "string", "t": "string", "n": "bigint", "u": "string", "v": "string", "w": "string"}


def test_only_string_columns_with_value_tests_and_nothing_else() -> None:
    metrics = [
        Metric(Measure.ROWS),
        Metric(Measure.INVALID, "s", values=("a", "b")),
        Metric(Measure.NULLS, "s"),
        Metric(Measure.INVALID, "t", pattern="^x$"),
        Metric(Measure.LENGTH_OUT, "t", low=1),  # needs every value's length: the scan
        Metric(Measure.INVALID, "n", values=(1, 2)),  # not a string column
        Metric(Measure.MISSING, "u", values=("",)),
        Metric(Measure.MISSING, "v", values=()),  # a null count: the footers answer it
        Metric(Measure.NULLS, "w"),
    ]
    assert dictionary_columns(metrics, TYPES) == ["s", "u"]
