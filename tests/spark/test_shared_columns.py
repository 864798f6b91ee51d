"""Metrics sharing one per-row value per column (engine/shared_columns.py: a product DFA for
several patterns, value codes for several value lists) answer exactly as each metric's own
`rlike` / `isin`, row by row, on the pattern corpus of test_patterns_dfa (line terminators,
non-ASCII bytes, empty strings, nulls)."""

from __future__ import annotations

import time
from typing import Any

import pytest
from pyspark.sql import Column
from test_patterns_dfa import PATTERNS, _corpus

from lineage_quality.engine.analyzers import failing_condition, metric_column
from lineage_quality.engine.expressions import Expr, agg, column
from lineage_quality.engine.plan import Measure, Metric
from lineage_quality.engine.regex_dfa_set import compile_dfa_set, group_patterns
from lineage_quality.engine.shared_columns import share

LISTS = [
    ("a@b.de", "abc", "AB-1234", ""),
    ("abc", "color", "é", "ÄÖ"),
    ("x",),
    (*tuple(f"v{i}" for i in range(80)), "the end"),  # a union past 63 values
    ("AB-1234", "é", "ümlaut@b.de"),
    # values the lookup table tells apart by their first 8 bytes and length, or compares whole:
    # a shared 8-byte start at other lengths, past 8 bytes, and a trailing NUL byte
    ("abcdefgh", "abcdefghi", "abcdefgh-1", "abcdefgh-2", "a", "a\x00", "ééééé"),
]
# near misses of the lists above, in the rows as well
NEAR = ["abcdefg", "abcdefgh-3", "abcdefghij", "a\x00\x00", "éééé", "ééééé ", "abcdefgi"]


def _named(condition: Expr | None, name: str) -> Column:
    assert condition is not None
    return column(condition.alias(name))


def _metrics() -> list[Metric]:
    out = [Metric(Measure.INVALID, "v", pattern=p) for p in PATTERNS]
    out += [Metric(Measure.INVALID, "v", values=values) for values in LISTS]
    out += [Metric(Measure.MISSING, "v", values=values) for values in LISTS[:2]]
    # a metric testing a list and a pattern at once
    out.append(Metric(Measure.INVALID, "v", values=LISTS[0], pattern=PATTERNS[1]))
    return out


def test_the_patterns_walk_as_few_product_dfas() -> None:
    groups = group_patterns(tuple(PATTERNS))
    assert sum(len(members) for members, _ in groups) == len(PATTERNS)
    assert len(groups) <= 3
    assert compile_dfa_set(PATTERNS[:4]) is not None


@pytest.mark.parametrize("seed", [3, 4])
def test_shared_equals_own_expressions_row_by_row(spark: Any, seed: int) -> None:
    values = _corpus(seed, 400) + [v for values in LISTS for v in values] + NEAR
    frame = spark.createDataFrame([(i, v) for i, v in enumerate(values)], "i long, v string")
    metrics = _metrics()
    now = time.time()
    with_shared, shared = share(frame, metrics)
    assert len(shared.matches) == len(PATTERNS)
    assert len(shared.members) == len(LISTS)
    shared_cols = [
        _named(failing_condition(m, now, shared), f"s{n}") for n, m in enumerate(metrics)
    ]
    own_cols = [_named(failing_condition(m, now), f"o{n}") for n, m in enumerate(metrics)]
    result = with_shared.select("i", "v", *shared_cols, *own_cols)
    plan = result._jdf.queryExecution().executedPlan().toString()
    assert "findAll" in plan and "ValueCodes" in plan, plan
    # lists within the union's first 63 codes test a bit of a mask, the others an IN of codes
    assert "shiftright" in plan and " IN (" in plan, plan
    rows = result.collect()
    differences = [
        (metrics[n], row["v"], row[f"s{n}"], row[f"o{n}"])
        for row in rows
        for n in range(len(metrics))
        if row[f"s{n}"] != row[f"o{n}"]
    ]
    assert differences == []
    for n, metric in enumerate(metrics):  # both answers occur, or the comparison proves little
        assert {row[f"o{n}"] for row in rows if row["v"] is not None} == {True, False}, metric


def test_fused_counts_are_the_same(spark: Any) -> None:
    values = _corpus(5, 300)
    frame = spark.createDataFrame([(v,) for v in values], "v string")
    metrics = _metrics()
    now = time.time()
    with_shared, shared = share(frame, metrics)
    fused = agg(with_shared, [metric_column(m, now, shared) for m in metrics]).first()
    own = agg(frame, [metric_column(m, now) for m in metrics]).first()
    assert fused is not None and own is not None
    assert list(fused) == list(own)


def test_values_alike_in_their_first_bytes_get_their_own_codes(spark: Any) -> None:
    # a letter followed by 0-8 NUL bytes: the same first 8 bytes (UTF8String.getPrefix pads with
    # zeros), told apart by length only; 26 such families fill the lookup table so that probes
    # pass by their neighbours. Even counts of NULs are in one list, odd ones in the other.
    family = [c + "\x00" * k for c in "abcdefghijklmnopqrstuvwxyz" for k in range(9)]
    lists = [
        tuple(v for v in family if len(v) % 2 == 1 and len(v) <= 8),
        tuple(v for v in family if len(v) % 2 == 0 and len(v) <= 8),
    ]  # 9 bytes (8 NULs) is in neither: compared whole
    frame = spark.createDataFrame([(v,) for v in [*family, "q\x00\x00\x01", None]], "w string")
    metrics = [Metric(Measure.INVALID, "w", values=values) for values in lists]
    with_shared, shared = share(frame, metrics)
    assert len(shared.members) == 2
    now = time.time()
    shared_cols = [
        _named(failing_condition(m, now, shared), f"s{n}") for n, m in enumerate(metrics)
    ]
    own_cols = [_named(failing_condition(m, now), f"o{n}") for n, m in enumerate(metrics)]
    rows = with_shared.select("w", *shared_cols, *own_cols).collect()
    assert [(r["w"], r["s0"], r["s1"]) for r in rows] == [(r["w"], r["o0"], r["o1"]) for r in rows]
    assert [r["s0"] for r in rows[:9]] == [k % 2 == 1 or k == 8 for k in range(9)]


def test_one_pattern_or_one_list_per_column_is_not_shared(spark: Any) -> None:
    frame = spark.createDataFrame([("a", "a"), (None, None)], "v string, w string")
    metrics = [
        Metric(Measure.INVALID, "v", pattern="^a$"),
        Metric(Measure.INVALID, "w", values=("a",)),
        Metric(Measure.INVALID, "w", pattern="^b$"),
    ]
    same, shared = share(frame, metrics)
    assert same is frame and not shared.matches and not shared.members


def test_non_string_lists_are_not_shared(spark: Any) -> None:
    frame = spark.createDataFrame([(1,), (2,), (None,)], "n int")
    metrics = [
        Metric(Measure.INVALID, "n", values=(1,)),
        Metric(Measure.INVALID, "n", values=(1, 2)),
    ]
    _, shared = share(frame, metrics)
    assert not shared.members
    counts = agg(frame, [metric_column(m, time.time()) for m in metrics]).first()
    assert counts is not None and list(counts) == [1, 0]


def test_a_dataset_column_named_like_ours_is_left_alone(spark: Any) -> None:
    frame = spark.createDataFrame(
        [("a", "zz"), ("b", "zz"), (None, "zz")], "v string, LQ_SHARED_0 string"
    )
    metrics = [
        Metric(Measure.INVALID, "v", pattern="^a$"),
        Metric(Measure.INVALID, "v", pattern="^[ab]$"),
        Metric(Measure.INVALID, "LQ_SHARED_0", values=("zz",)),
    ]
    with_shared, shared = share(frame, metrics)
    assert shared.matches
    now = time.time()
    row = agg(with_shared, [metric_column(m, now, shared) for m in metrics]).first()
    assert row is not None and list(row) == [1, 0, 0]
    assert with_shared.select("LQ_SHARED_0").distinct().collect()[0][0] == "zz"
