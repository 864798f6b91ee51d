"""Per-row values that several metrics of one column share, computed once per row.

Ten pattern rules on one column would walk its bytes ten times and ten value-list rules would
search ten lists; instead the fused scan projects, once per column:
- a bitmask of every pattern that matches (one walk of the patterns' product DFA,
  engine/regex_dfa_set.py, JVM helper `RegexDfa.findAll`);
- the value's index in the sorted union of every value list (one hash-table probe, JVM helper
  `ValueCodes`), so each list's membership is a bit test of a constant mask.
Each metric then reads its bit. The answers are those of `rlike` and `isin`, row by row. A column
tested by one pattern or one list, a pattern outside the DFA subset, non-string value lists, or a
session without the helper jar keep the per-metric expressions.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import attrs
from pyspark.sql import DataFrame

from lineage_quality.engine import functions as F
from lineage_quality.engine.columns import col
from lineage_quality.engine.expressions import Expr, helper, with_columns
from lineage_quality.engine.jvm_helpers import jvm_helper
from lineage_quality.engine.plan import Measure, Metric
from lineage_quality.engine.regex_dfa_set import group_patterns

log = logging.getLogger(__name__)

_VALUE_LISTS = (Measure.INVALID, Measure.MISSING)


@attrs.frozen
class Shared:
    """Column expressions that replace a metric's own test, keyed by what the metric tests."""

    matches: dict[tuple[str, str], Expr] = attrs.field(factory=dict)  # (column, pattern)
    members: dict[tuple[str, tuple[Any, ...]], Expr] = attrs.field(factory=dict)  # (col, values)
    # what they read, for tests of several at once (engine/row_gates.py):
    bits: dict[tuple[str, str], tuple[str, int]] = attrs.field(factory=dict)  # -> (mask col, bit)
    codes: dict[tuple[str, tuple[Any, ...]], tuple[str, tuple[int, ...]]] = attrs.field(
        factory=dict
    )  # (col, values) -> (code column, positions of the values)


def _bit(mask: Expr, i: int) -> Expr:
    return mask.bitwiseAND(F.lit(1 << i)) != F.lit(0)


def in_positions(code: str, positions: list[int]) -> Expr:
    """Whether the code column `code` is one of `positions`. Up to 63 positions, one bit test of
    a constant mask: about half the cost of an IN of a few ints. Java masks a shift count to
    its low 6 bits, so codes past 62 and the "not listed" code -1 are first clamped to 63, the
    bit no list sets here; null stays null."""
    if positions and positions[-1] < 63:
        mask = sum(1 << p for p in positions)
        # Built call by call, not parsed from SQL text: a parse costs about a millisecond in the
        # JVM, and a hundred rules on value lists made a hundred of them per evaluation.
        shift = F.least(col(code), F.lit(63))
        shifted = F.call_function("shiftright", F.lit(mask).cast("bigint"), shift)
        return shifted.bitwiseAND(F.lit(1)) != F.lit(0)
    return F.col(code).isin(positions)


def _by_column(metrics: Sequence[Metric], pick: Any) -> dict[str, list[Any]]:
    found: dict[str, list[Any]] = {}
    for m in metrics:
        item = pick(m)
        if item is not None and m.column is not None and item not in found.get(m.column, []):
            found.setdefault(m.column, []).append(item)
    return found


def _utf8(value: str) -> bytes:
    return value.encode("utf-8", "surrogatepass")


def share(df: DataFrame, metrics: Sequence[Metric]) -> tuple[DataFrame, Shared]:
    """`df` with the shared per-row columns added, and the expressions that read them. When
    the helpers cannot build them, `df` as it is: each metric then uses its own expression."""
    try:
        return _share(df, metrics)
    except Exception as exc:  # the same verdicts follow without sharing, only slower
        log.warning("shared column values not used: %s", str(exc).strip().splitlines()[0])
        return df, Shared()


def _share(df: DataFrame, metrics: Sequence[Metric]) -> tuple[DataFrame, Shared]:
    shared = Shared()
    extra: dict[str, Expr] = {}
    types = {f.name: f.dataType.simpleString() for f in df.schema.fields}
    taken = {name.lower() for name in types}

    def fresh() -> str:  # a name no column of the dataset has (Spark compares case-blind)
        n = len(extra)
        while f"lq_shared_{n}" in taken:
            n += 1
        taken.add(f"lq_shared_{n}")
        return f"lq_shared_{n}"

    regex = jvm_helper("RegexDfa", "PATTERN_DFA")
    if regex is not None:
        patterns = _by_column(
            metrics, lambda m: m.pattern if m.kind is Measure.INVALID else None
        )
        for column, found in patterns.items():
            if len(found) < 2:
                continue
            for chunk, table in group_patterns(tuple(found)):
                name = fresh()
                value = col(column).cast("string")
                extra[name] = helper("RegexDfa", "columnAll", value, table, list(chunk))
                for i, pattern in enumerate(chunk):
                    shared.matches[(column, pattern)] = _bit(F.col(name), i)
                    shared.bits[(column, pattern)] = (name, i)
    codes = jvm_helper("ValueCodes", "VALUE_CODES")
    if codes is not None:
        lists = _by_column(metrics, lambda m: m.values if m.kind in _VALUE_LISTS else None)
        for column, found in lists.items():
            if len(found) < 2 or types.get(column) != "string":
                continue
            if not all(isinstance(v, str) for values in found for v in values):
                continue
            union = sorted({v for values in found for v in values}, key=_utf8)
            index = {v: i for i, v in enumerate(union)}
            name = fresh()
            extra[name] = helper("ValueCodes", "column", col(column), union)
            for values in found:
                positions = sorted({index[v] for v in values})
                shared.members[(column, values)] = in_positions(name, positions)
                shared.codes[(column, values)] = (name, tuple(positions))
    return with_columns(df, extra), shared
