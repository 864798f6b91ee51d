"""Counting metrics behind a per-column gate (engine/row_gates.py): the same counts as without
it, on values at the edges of what the gate tests at once (nulls, NaN, infinities, bounds of
mixed types, longs past 2^53, lists with nothing in common, a union past 63 codes, patterns
split over several match masks), and a gate only where it tests several rules at once. A
column's counts grouped in one aggregate (`Grouped`) give each metric's own count, with or
without a gate, on an empty dataset too."""

from __future__ import annotations

import math
import time
from typing import Any

import pytest
from pyspark.sql import functions as PF
from test_patterns_dfa import PATTERNS, _corpus
from test_shared_columns import LISTS, NEAR

from lineage_quality.engine import row_gates
from lineage_quality.engine.analyzers import failing_condition
from lineage_quality.engine.expressions import column as built
from lineage_quality.engine.plan import ROWS, Measure, Metric
from lineage_quality.engine.run import _aggregate
from lineage_quality.engine.shared_columns import share

pytestmark = pytest.mark.spark

BIG = 2**53


def _numbers() -> list[Any]:
    values: list[Any] = [None, 0.0, -0.0, 1.0, -1.0, 0.5, 2.5, 1e300, -1e300]
    values += [float("nan"), float("inf"), float("-inf"), 99.999, 100.0, 100.001, -5.0, -5.5]
    return values + [float(i) for i in range(-10, 120, 7)]


def _longs() -> list[Any]:
    return [None, 0, -1, 1, BIG - 1, BIG, BIG + 1, BIG + 2, -BIG - 1, 2**62, -(2**63), 2**63 - 1]


def _number_metrics() -> list[Metric]:
    """One column per kind of bound, so that no other test of a gate hides a wrong one."""
    out = [Metric(Measure.NULLS, "x")]
    for low, high in [(0.0, None), (None, 100.0), (-5.5, 1e300), (float("-inf"), float("inf"))]:
        out.append(Metric(Measure.OUT_OF_RANGE, "x", low=low, high=high))
    for low, high in [(-5, None), (None, 100), (2, 99), (1, 1), (2, 99.5)]:
        out.append(Metric(Measure.OUT_OF_RANGE, "y", low=low, high=high))
    # a float minimum before the NaN one: merged, max(0.5, nan) would be 0.5
    for low, high in [
        (0.5, None), (float("nan"), None), (None, float("nan")), (-1, 1), (-3, 3), (0, None),
    ]:  # fmt: skip
        out.append(Metric(Measure.OUT_OF_RANGE, "z", low=low, high=high))
    out.append(Metric(Measure.INVALID, "z", values=(1.0, 2.5, 100.0)))  # its own test
    for low, high in [(BIG, None), (BIG + 1.0, None), (None, BIG - 1), (-BIG, 2**62), (0, 0)]:
        out.append(Metric(Measure.OUT_OF_RANGE, "n", low=low, high=high))
    return out


def _string_metrics() -> list[Metric]:
    """Patterns, value lists and other tests each on a column of their own (the same strings)."""
    out = [Metric(Measure.NULLS, "p")]
    out += [Metric(Measure.INVALID, "p", pattern=p) for p in PATTERNS]
    out += [Metric(Measure.NULLS, "v")]
    out += [Metric(Measure.INVALID, "v", values=values) for values in LISTS]
    # lists with nothing in common
    out += [Metric(Measure.INVALID, "w", values=values) for values in [("a",), ("b",)]]
    out.append(Metric(Measure.MISSING, "u", values=LISTS[0]))
    out.append(Metric(Measure.LENGTH_OUT, "u", low=1, high=8))
    out += [Metric(Measure.INVALID, "u", values=values) for values in LISTS[1:3]]
    return out


@pytest.fixture(scope="module")
def frame(spark: Any) -> Any:
    strings = _corpus(7, 300) + [v for values in LISTS for v in values] + NEAR
    numbers, longs = _numbers(), _longs()
    rows = [
        (
            strings[i % len(strings)],
            strings[(i + 101) % len(strings)],
            strings[(i + 203) % len(strings)],
            ["a", "b", "c", None][i % 4],
            numbers[i % len(numbers)],
            numbers[(i + 5) % len(numbers)],
            numbers[(i + 11) % len(numbers)],
            longs[i % len(longs)],
        )
        for i in range(max(len(strings), 400))
    ]
    schema = "p STRING, v STRING, u STRING, w STRING, x DOUBLE, y DOUBLE, z DOUBLE, n LONG"
    return spark.createDataFrame(rows, schema)


def _counts(
    frame: Any,
    metrics: list[Metric],
    monkeypatch: pytest.MonkeyPatch,
    on: bool,
    grouped: bool = True,
) -> Any:
    monkeypatch.setenv("LINEAGE_QUALITY_ROW_GATES", "1" if on else "0")
    monkeypatch.setenv("LINEAGE_QUALITY_GROUPED_COUNTS", "1" if grouped else "0")
    return _aggregate(frame, [ROWS, *metrics], time.time())


def test_gated_counts_equal_plain_counts(frame: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    metrics = _number_metrics() + _string_metrics()
    gated = _counts(frame, metrics, monkeypatch, on=True)
    plain = _counts(frame, metrics, monkeypatch, on=False)
    assert gated == plain
    # every test both counts offending rows and passes others, or this proves little (but
    # "above NaN": nothing is, NaN sorting above every number)
    nothing = [m for m in metrics if isinstance(m.high, float) and math.isnan(m.high)]
    counted = [c for c, m in zip(gated[1:], metrics, strict=True) if m not in nothing]
    assert len(nothing) == 1 and len(counted) == len(metrics) - 1
    assert all(0 < count < gated[0] for count in counted), list(
        zip(metrics, gated[1:], strict=True)
    )


def test_grouped_counts_equal_one_count_per_metric(
    frame: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # with the gates (every column here has one) and without (a column of a null count and
    # one range gets none): each metric's element is its own count
    metrics = _number_metrics() + _string_metrics()
    metrics += [Metric(Measure.NULLS, "n"), Metric(Measure.OUT_OF_RANGE, "y", low=-1.0)]
    ungated = [Metric(Measure.NULLS, "x"), Metric(Measure.OUT_OF_RANGE, "x", low=0.0)]
    for chosen in (metrics, ungated):
        grouped = _counts(frame, chosen, monkeypatch, on=True)
        alone = _counts(frame, chosen, monkeypatch, on=True, grouped=False)
        assert grouped == alone
        assert all(isinstance(c, int) for c in grouped)
        assert len(set(grouped[1:])) > len(chosen) // 3  # not one count copied to all


def test_grouped_counts_on_an_empty_dataset_are_zero(
    frame: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    metrics = _number_metrics() + _string_metrics()
    empty = frame.limit(0)
    grouped = _counts(empty, metrics, monkeypatch, on=True)
    assert grouped == _counts(empty, metrics, monkeypatch, on=False)
    assert grouped == [0] * (len(metrics) + 1)


def test_one_grouped_aggregate_per_column(frame: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    metrics = [ROWS, *_number_metrics(), *_string_metrics()]
    now = time.time()
    shared_frame, shared = share(frame, metrics)
    conditions = [failing_condition(m, now, shared) for m in metrics]
    _, counts, grouped = row_gates.gated_counts(shared_frame, metrics, conditions, shared)
    assert all(c is None for c in counts)
    assert sorted(i for g in grouped for i in g.metrics) == list(range(1, len(metrics)))
    columns = [{metrics[i].column for i in g.metrics} for g in grouped]
    assert all(len(c) == 1 for c in columns) and len(columns) == 8
    monkeypatch.setenv("LINEAGE_QUALITY_GROUPED_COUNTS", "0")
    _, counts, grouped = row_gates.gated_counts(shared_frame, metrics, conditions, shared)
    assert grouped == [] and [i for i, c in enumerate(counts) if c is None] == [0]


def test_each_column_has_its_gate_and_the_gates_hold_every_offending_row(
    frame: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LINEAGE_QUALITY_GROUPED_COUNTS", "0")  # each count its own aggregate
    metrics = [ROWS, *_number_metrics(), *_string_metrics()]
    now = time.time()
    shared_frame, shared = share(frame, metrics)
    conditions = [failing_condition(m, now, shared) for m in metrics]
    gated_frame, counts, _ = row_gates.gated_counts(shared_frame, metrics, conditions, shared)
    gates = [c for c in gated_frame.columns if c.startswith("lq_gate_")]
    columns = ["x", "y", "z", "n", "p", "v", "w", "u"]
    assert len(gates) == len(columns)
    assert [m for m, c in zip(metrics, counts, strict=True) if c is None] == [ROWS]
    # row by row: no row offends a metric while its column's gate is false
    checks = [
        (~gated_frame[gate] | gated_frame[gate].isNull()) & built(condition)
        for gate, column in zip(gates, columns, strict=True)
        for m, condition in zip(metrics, conditions, strict=True)
        if m.column == column and condition is not None
    ]
    leaks = gated_frame.agg(*[PF.count(PF.when(check, 1)) for check in checks]).first()
    assert list(leaks) == [0] * len(checks)


def test_no_gate_where_it_tests_nothing_at_once(frame: Any) -> None:
    # a null count and one range: two tests either way, as on most columns of R30
    metrics = [ROWS, Metric(Measure.NULLS, "x"), Metric(Measure.OUT_OF_RANGE, "x", low=0.0)]
    now = time.time()
    conditions = [failing_condition(m, now) for m in metrics]
    same, counts, grouped = row_gates.gated_counts(
        frame, metrics, conditions, share(frame, metrics)[1]
    )
    assert same is frame and counts == [None, None, None]
    assert [g.metrics for g in grouped] == [(1, 2)]  # grouped, with no gate
