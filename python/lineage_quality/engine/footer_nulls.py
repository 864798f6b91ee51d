"""Null counts of Parquet columns read from the files' footers instead of their pages.

A column whose only rules are not-null rules (the commonest rule there is: ODCS `required: true`)
needs no value of it, only how many are null, and every Parquet column chunk's statistics say so.
For such columns the fused scan leaves them out, and the JVM helper `FooterNulls` adds up their
chunks' null counts. The scan still counts the rows; when the footers' row total differs from it
(files replaced between the two reads), the footers' counts are not used and the scan counts the
nulls after all, so a verdict never mixes two states of the data.

The helper answers only where its answer is the scan's (a DataFrame that is exactly a read of
plain Parquet files, no corrupt or missing files skipped, top-level columns, every chunk with
its null count); otherwise it says so and the scan counts them. `LINEAGE_QUALITY_FOOTER_NULLS=0`
turns it off.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import attrs
from pyspark.sql import DataFrame

from lineage_quality.engine.jvm_helpers import jvm_helper
from lineage_quality.engine.plan import Measure, Metric

log = logging.getLogger(__name__)

MAX_FILES = 200_000  # past it, reading the footers would cost more than the pages they spare
# A footer is read whole into the driver's memory; its length comes from the file itself. Wide
# tables with many row groups reach a few MiB; past this bound the scan reads that file.
MAX_FOOTER_BYTES = 64 * 1024 * 1024
_NO_VALUES, _HAS_VALUES = 0, 1  # FooterNulls.stats' bounds states (-1: no bounds)


@attrs.frozen
class FooterCounts:
    rows: int
    nulls: dict[str, int]  # column -> null count
    # column -> (smallest, largest) value, None when it holds no value; only the bounded
    # columns the footers bound (engine/footer_bounds.py)
    bounds: dict[str, tuple[int, int] | None] = attrs.field(factory=dict)
    # the bounds as a two-row local relation (smallest, largest) of the columns with values
    frame: DataFrame | None = None


def footer_columns(metrics: Sequence[Metric]) -> list[str]:
    """The columns every fused metric of which is a null count: the scan needs nothing else of
    them."""
    kinds: dict[str, set[Measure | str]] = {}
    for m in metrics:
        if m.column is not None:
            kinds.setdefault(m.column, set()).add(m.kind)
    return [c for c, found in kinds.items() if found == {Measure.NULLS}]


def served_nulls(metrics: Sequence[Metric], footers: FooterCounts) -> dict[int, int]:
    """The null counts the footers give: metric index -> count, for each null-count metric of a
    column they counted."""
    return {
        i: footers.nulls[m.column]
        for i, m in enumerate(metrics)
        if m.kind is Measure.NULLS and m.column in footers.nulls
    }


def footer_counts(
    df: DataFrame, columns: Sequence[str], bounded: Sequence[str] = (), min_bounded_bytes: int = 0
) -> FooterCounts | None:
    """The rows and the null counts of `columns` (and the bounds of those `bounded`, when the
    files hold `min_bounded_bytes` or more) from the footers of the files `df` reads, or None
    when the footers cannot stand for the scan (or the helper jar is not in the session)."""
    # each switched on and off on its own (`bounded`: engine/footer_bounds.py)
    nulls_helper = jvm_helper("FooterNulls", "FOOTER_NULLS")
    if nulls_helper is None:
        columns = [c for c in columns if c in bounded]
    if jvm_helper("FooterNulls", "FOOTER_BOUNDS") is None:
        columns, bounded = [c for c in columns if c not in bounded], ()
    helper = nulls_helper or jvm_helper("FooterNulls", "FOOTER_BOUNDS")
    if helper is None or not columns:
        return None
    try:
        if not bounded:
            found = helper.count(df._jdf, list(columns), MAX_FILES, MAX_FOOTER_BYTES)
            if found is None:
                return None
            values = [int(v) for v in found]
            return FooterCounts(values[0], dict(zip(columns, values[1:], strict=True)))
        flags = "".join("1" if c in bounded else "0" for c in columns)
        stats = helper.stats(
            df._jdf, list(columns), flags, MAX_FILES, MAX_FOOTER_BYTES, min_bounded_bytes
        )
        if stats is None:
            return None
        counts = _with_bounds(df, columns, stats)
    except Exception as exc:  # an unreadable footer: the scan reads the file and says what is wrong
        log.info("nothing taken from Parquet footers: %s", str(exc).strip()[:300])
        return None
    # with null counts from footers switched off, the scan counts even a bounded column's nulls
    return counts if nulls_helper is not None else attrs.evolve(counts, nulls={})


def _with_bounds(df: DataFrame, columns: Sequence[str], stats: Any) -> FooterCounts:
    values = [int(v) for v in str(stats.values()).split(",")]
    nulls: dict[str, int] = {}
    bounds: dict[str, tuple[int, int] | None] = {}
    for i, c in enumerate(columns):
        count, state, low, high = values[1 + 4 * i : 5 + 4 * i]
        nulls[c] = count
        if state == _HAS_VALUES:
            bounds[c] = (low, high)
        elif state == _NO_VALUES:
            bounds[c] = None
    jframe = stats.frame()
    frame = DataFrame(jframe, df.sparkSession) if jframe is not None else None
    return FooterCounts(values[0], nulls, bounds, frame)
