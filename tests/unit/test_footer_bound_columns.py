"""Which columns the footers' bounds may answer (engine/footer_bounds.py). Pure."""

from __future__ import annotations

from lineage_quality.engine.footer_bounds import bounded_columns, served_bounds
from lineage_quality.engine.footer_nulls import FooterCounts
from lineage_quality.engine.plan import Measure, Metric

TYPES = {
    "i": "int", "b": "bigint", "d": "double", "s": "smallint", "m": "int", "n": "int",
    "a": "int", "z": "int",
}  # fmt: skip


def test_only_int_and_bigint_columns_with_ranges_mins_maxes_and_null_counts() -> None:
    metrics = [
        Metric(Measure.ROWS),
        Metric(Measure.OUT_OF_RANGE, "i", low=0),
        Metric(Measure.NULLS, "i"),
        Metric(Measure.STAT, "b", arg="max", integral=True, wide=True),
        Metric(Measure.OUT_OF_RANGE, "d", high=1.0),  # a NaN hides from a double's bounds
        Metric(Measure.OUT_OF_RANGE, "s", low=0),  # not int or bigint
        Metric(Measure.OUT_OF_RANGE, "m", low=0),
        Metric(Measure.STAT, "m", arg="avg", integral=True),  # needs every value: the scan
        Metric(Measure.NULLS, "n"),  # a null count only: engine/footer_nulls.py
        Metric(Measure.OUT_OF_RANGE, "a", low=0, array=True),  # an element count
        Metric(Measure.STAT, "z", arg="min", integral=False),
    ]
    assert bounded_columns(metrics, TYPES) == ["i", "b"]


def test_served_values_without_a_frame_to_test_ranges_on() -> None:
    metrics = [
        Metric(Measure.ROWS),
        Metric(Measure.OUT_OF_RANGE, "i", low=0),
        Metric(Measure.STAT, "i", arg="min", integral=True),
        Metric(Measure.OUT_OF_RANGE, "n", low=0),
        Metric(Measure.STAT, "n", arg="max", integral=True),
        Metric(Measure.STAT, "b", arg="max", integral=True, wide=True),
    ]
    footers = FooterCounts(10, {"i": 0, "n": 10, "b": 0}, {"i": (3, 9), "n": None, "b": (-2, 7)})
    # a range needs its condition tested on the bounds: without the relation, the scan counts
    # it; a column with no value fails no range; min and max are the bounds themselves
    assert served_bounds(metrics, footers, 0.0) == {3: 0, 4: None, 5: 7}
