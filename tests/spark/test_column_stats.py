"""A column's statistics in one aggregate (engine/column_stats.py, JVM helper `ColumnStats`)
give each statistic the value Spark's own function gives: compared value by value, to the bit,
with `LINEAGE_QUALITY_GROUPED_STATS=0` (one Spark aggregate per statistic)."""

from __future__ import annotations

import random
import time
from typing import Any

import pytest

from lineage_quality.engine import column_stats
from lineage_quality.engine.plan import ROWS, Metric, stat_metric
from lineage_quality.engine.run import _aggregate

TYPES = {"b": "tinyint", "s": "smallint", "i": "int", "l": "bigint", "f": "float", "d": "double"}
STATS = ["avg", "sum", "stddev", "min", "max"]
INF = float("inf")


def _values(kind: str, rng: random.Random, n: int) -> list[Any]:
    """Values of a type with nulls, extremes and (for floating types) NaN, infinities, -0.0."""
    limit = {"b": 127, "s": 32767, "i": 2**31 - 1, "l": 2**63 - 1}
    if kind in limit:
        top = limit[kind]
        pool: list[Any] = [None, 0, 1, -1, top, -top - 1]
        return [rng.choice(pool) if i % 7 == 0 else rng.randint(-top - 1, top) for i in range(n)]
    pool = [None, 0.0, -0.0, 1e300, -1e300, 5e-324]
    out = [rng.choice(pool) if i % 7 == 0 else rng.uniform(-1e6, 1e6) for i in range(n)]
    if kind == "f":
        out = [None if v is None else max(min(v, 3e38), -3e38) for v in out]
    return out


def _frame(spark: Any, rows: int, seed: int, partitions: int = 3) -> Any:
    rng = random.Random(seed)
    columns = {name: _values(name, rng, rows) for name in TYPES}
    data = [tuple(columns[name][r] for name in TYPES) for r in range(rows)]
    schema = ", ".join(f"{name} {t}" for name, t in TYPES.items())
    return spark.createDataFrame(data, schema).repartition(partitions)


def _metrics(stats: list[str] = STATS) -> list[Metric]:
    out = []
    for name, ctype in TYPES.items():
        out += [stat_metric(name, ctype, s) for s in stats]
    return out


def _both(frame: Any, metrics: list[Metric], monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    monkeypatch.setenv("LINEAGE_QUALITY_GROUPED_STATS", "1")
    grouped = _aggregate(frame, [ROWS, *metrics], time.time())
    monkeypatch.setenv("LINEAGE_QUALITY_GROUPED_STATS", "0")
    alone = _aggregate(frame, [ROWS, *metrics], time.time())
    return grouped, alone


def _exact(values: list[Any]) -> list[tuple[str, str]]:
    # repr tells -0.0 from 0.0 and shows NaN; the type tells an int sum from a float one
    return [(type(v).__name__, repr(v)) for v in values]


def test_each_statistic_is_sparks_own_to_the_bit(
    spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    frame = _frame(spark, 3000, seed=1)
    metrics = _metrics()
    grouped, alone = _both(frame, metrics, monkeypatch)
    assert _exact(grouped) == _exact(alone)
    named = dict(zip([(m.column, m.arg) for m in metrics], grouped[1:], strict=True))
    assert isinstance(named[("i", "sum")], int) and isinstance(named[("d", "sum")], float)
    assert named[("l", "min")] == -(2**63) and named[("b", "max")] == 127
    assert len({v for v in grouped[1:]}) > len(metrics) // 2  # not one value copied to all


@pytest.mark.parametrize("stats", [["min", "max"], ["avg", "stddev"], ["sum", "avg"]])
def test_subsets_of_the_statistics(
    spark: Any, monkeypatch: pytest.MonkeyPatch, stats: list[str]
) -> None:
    frame = _frame(spark, 500, seed=2)
    grouped, alone = _both(frame, _metrics(stats), monkeypatch)
    assert _exact(grouped) == _exact(alone)


def test_nan_infinities_and_signed_zeros(spark: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    nan = float("nan")
    cases = [
        [nan, 1.0, None],  # NaN is Spark's largest: the max, not the min
        [INF, -INF, 2.0],  # the mean and the deviation NaN, the bounds infinite
        [-0.0, None, -0.0],  # Spark's min and max keep the first of equal values
        [0.0, -0.0],
        [-INF],
        [nan],
        [None, None],
    ]
    for values in cases:
        frame = spark.createDataFrame([(v, v) for v in values], "d double, f float").repartition(2)
        metrics = [
            stat_metric(c, t, s) for c, t in (("d", "double"), ("f", "float")) for s in STATS
        ]
        grouped, alone = _both(frame, metrics, monkeypatch)
        assert _exact(grouped) == _exact(alone), values


def test_empty_one_value_and_all_null(spark: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    frame = _frame(spark, 40, seed=3)
    one = frame.limit(1)
    nulls = spark.createDataFrame([(None, None)] * 5, "i int, d double")
    for data, columns in (
        (frame.limit(0), TYPES),
        (one, TYPES),
        (nulls, {"i": "int", "d": "double"}),
    ):
        metrics = [stat_metric(c, t, s) for c, t in columns.items() for s in STATS]
        grouped, alone = _both(data, metrics, monkeypatch)
        assert _exact(grouped) == _exact(alone)
    grouped, _ = _both(one, _metrics(["stddev", "avg"]), monkeypatch)
    assert all(v is None for v in grouped[1::2])  # stddev of one value: null


def test_one_aggregate_per_column_of_two_or_more(
    spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    frame = _frame(spark, 10, seed=4)
    metrics = [
        *_metrics(),
        stat_metric("d", "double", "median"),  # not one it takes
        stat_metric("x", "double", "avg"),  # no such column
    ]
    groups = column_stats.grouped_stats(frame, metrics, range(len(metrics)))
    by_column = {metrics[g.metrics[0]].column: g.metrics for g in groups}
    assert set(by_column) == set(TYPES)
    assert all(len({metrics[i].column for i in found}) == 1 for found in by_column.values())
    # a bigint's sum is taken in decimal, alone
    assert [metrics[i].arg for i in by_column["l"]] == ["avg", "stddev", "min", "max"]
    assert len(by_column["d"]) == 5
    alone = [stat_metric("d", "double", "avg"), stat_metric("i", "int", "sum")]
    assert column_stats.grouped_stats(frame, alone, range(2)) == []
    monkeypatch.setenv("LINEAGE_QUALITY_GROUPED_STATS", "0")
    assert column_stats.grouped_stats(frame, metrics, range(len(metrics))) == []


def test_a_decimal_column_keeps_sparks_own(spark: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    frame = spark.createDataFrame([(1,), (2,), (None,)], "v int").selectExpr(
        "cast(v as decimal(10,2)) as v"
    )
    metrics: list[Metric] = [stat_metric("v", "decimal(10,2)", s) for s in STATS]
    assert column_stats.grouped_stats(frame, metrics, range(len(metrics))) == []
    grouped, alone = _both(frame, metrics, monkeypatch)
    assert _exact(grouped) == _exact(alone)
