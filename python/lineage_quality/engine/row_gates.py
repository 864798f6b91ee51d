"""Counting metrics that a row offending none of its column's rules passes with one test.

A counting metric is `count(CASE WHEN offends THEN 1 END)`: each row evaluates its condition and
updates its counter, offending or not. Where a column has two or more counting metrics, the scan
instead projects once per row the column's gate, true when the row may offend one of them, and
each of those metrics becomes the same count `FILTER (WHERE gate)` (JVM helper `RowGates`).
Spark tests the filter before it evaluates the condition or calls the update, so on a row that
offends nothing a metric costs one branch; a row that passes the gate has its metrics'
conditions evaluated as before.

The gate tests several rules at once where they read one per-row value: the value lists of a
column (one test of the intersection of their codes, engine/shared_columns.py), its patterns
(one test of their bits in the match mask), its ranges (the highest minimum and the lowest
maximum); any other condition is OR-ed in as it is. A gate may be true on a row that offends
nothing (that only costs the conditions' evaluation), never false on one that offends: so the
counts are those of the plain metrics.

A column's counts are also one aggregate rather than one per metric (`Grouped`: JVM helper
`RowGates.counts`, an array of counts with the gate as its one FILTER): Catalyst analyzes,
optimizes and generates code for a node per column instead of ~10 per rule, and a row the gate
passes costs one test for all of them. `LINEAGE_QUALITY_GROUPED_COUNTS=0` keeps a count per
metric.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import attrs
from pyspark.sql import DataFrame

from lineage_quality.engine import functions as F
from lineage_quality.engine.columns import col, is_not_null
from lineage_quality.engine.expressions import Expr, helper, with_columns
from lineage_quality.engine.jvm_helpers import jvm_helper
from lineage_quality.engine.plan import Measure, Metric
from lineage_quality.engine.shared_columns import Shared, in_positions


def count_where(condition: Expr) -> Expr:
    """count(CASE WHEN c THEN 1 END): a null condition counts as false, an empty dataset gives
    0; cheaper than sum(CASE ... ELSE 0 END), which carries a nullable sum per metric."""
    return F.count(F.when(condition, F.lit(1)))


@attrs.frozen
class Grouped:
    """One aggregate counting several metrics' conditions: an array, element j the count of
    metric `metrics[j]`."""

    aggregate: Expr
    metrics: tuple[int, ...]


def gated_counts(
    df: DataFrame,
    metrics: Sequence[Metric],
    conditions: Sequence[Expr | None],
    shared: Shared,
) -> tuple[DataFrame, list[Expr | None], list[Grouped]]:
    """`df` with a gate column for each column whose counting metrics its gate tests in fewer
    tests than there are metrics; per metric its count filtered by its column's gate, or None
    where it is not gated or is grouped (the caller's own expression counts a metric that is
    neither); and each column's grouped counts, one aggregate per column of two or more counts.
    `conditions[i]` is the condition metric i counts, or None for a metric that is not a count.
    Without the helper jar: `df` as it is, nothing gated or grouped."""
    gates_helper = jvm_helper("RowGates", "ROW_GATES")
    grouping = jvm_helper("RowGates", "GROUPED_COUNTS") is not None
    groups: dict[str, list[int]] = {}
    for i, (m, condition) in enumerate(zip(metrics, conditions, strict=True)):
        if condition is not None and m.column is not None:
            groups.setdefault(m.column, []).append(i)
    several = {c: found for c, found in groups.items() if len(found) >= 2}
    taken = {name.lower() for name in df.columns}
    gates: dict[str, Expr] = {}
    counts: list[Expr | None] = [None] * len(metrics)
    grouped: list[Grouped] = []
    for column, found in several.items():
        gate: Expr | None = None
        terms = _terms(column, [(metrics[i], conditions[i]) for i in found], shared)
        # where the gate tests nothing at once it would cost what it spares (measured on R30)
        if gates_helper is not None and len(terms) < len(found):
            n = len(gates)
            while f"lq_gate_{n}" in taken:  # a name no column has (Spark compares case-blind)
                n += 1
            name = f"lq_gate_{n}"
            taken.add(name)
            gates[name] = _any(terms)
            gate = F.col(name)
        tested = [_condition(conditions[i]) for i in found]
        if grouping and gates_helper is not None:
            grouped.append(Grouped(_grouped(tested, gate), tuple(found)))
            continue
        if gate is None:
            continue
        for i, condition in zip(found, tested, strict=True):
            counts[i] = helper("RowGates", "filtered", count_where(condition), gate)
    return with_columns(df, gates), counts, grouped


def _condition(condition: Expr | None) -> Expr:
    assert condition is not None  # grouped by the metrics that have one
    return condition


def _grouped(conditions: list[Expr], gate: Expr | None) -> Expr:
    if gate is None:
        return helper("RowGates", "counts", conditions)
    return helper("RowGates", "counts", conditions, gate)


def _terms(column: str, items: list[tuple[Metric, Expr | None]], shared: Shared) -> list[Expr]:
    """Tests whose OR is true on every row that offends one of `items` (metric, condition)."""
    terms: list[Expr] = []
    code: str | None = None
    accepted: set[int] | None = None  # codes every value list of the column accepts
    masks: dict[str, int] = {}  # match mask column -> bits of the column's patterns
    lows: dict[type, list[Any]] = {}  # bound type -> minimums
    highs: dict[type, list[Any]] = {}
    for m, condition in items:
        assert condition is not None
        listed = shared.codes.get((column, m.values)) if m.values is not None else None
        bit = shared.bits.get((column, m.pattern)) if m.pattern is not None else None
        if m.kind is Measure.INVALID and m.pattern is None and listed is not None:
            code = listed[0]
            accepted = set(listed[1]) if accepted is None else accepted & set(listed[1])
        elif m.kind is Measure.INVALID and m.values is None and bit is not None:
            masks[bit[0]] = masks.get(bit[0], 0) | (1 << bit[1])
        elif m.kind is Measure.OUT_OF_RANGE and _plain(m.low) and _plain(m.high):
            if m.low is not None:
                lows.setdefault(type(m.low), []).append(m.low)
            if m.high is not None:
                highs.setdefault(type(m.high), []).append(m.high)
        else:
            terms.append(condition)
    present = is_not_null(column)
    if code is not None and accepted is not None:
        terms.append(present & ~in_positions(code, sorted(accepted)))
    for mask_column, mask in masks.items():
        terms.append(present & (F.col(mask_column).bitwiseAND(F.lit(mask)) != F.lit(mask)))
    # one bound per type: a bound's type decides how Spark compares (exactly or as doubles), and
    # that comparison is monotone in the bound, so the highest minimum covers every minimum
    for found in lows.values():
        terms.append(present & (col(column) < F.lit(max(found))))
    for found in highs.values():
        terms.append(present & (col(column) > F.lit(min(found))))
    return terms


def _plain(bound: Any) -> bool:
    """A bound that orders like the others of its type: an int or a float other than NaN (a NaN
    bound compares as Spark's largest value; its metric keeps its own test)."""
    if bound is None:
        return True
    if isinstance(bound, bool) or not isinstance(bound, (int, float)):
        return False
    return not (isinstance(bound, float) and math.isnan(bound))


def _any(terms: list[Expr]) -> Expr:
    # null OR false is null, which a filter takes as false: true exactly when one term is
    gate = terms[0]
    for term in terms[1:]:
        gate = gate | term
    return gate
