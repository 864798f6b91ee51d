"""Range rules and the min and max of integer Parquet columns, answered from the footers.

Every Parquet column chunk's statistics hold its smallest and largest value. An id, a year or a
quantity column checked only for a range (`order_id >= 0`), its min or max, and nulls needs none
of its values when every chunk's values already lie within the range. For such columns the
footers are read (with the null counts, engine/footer_nulls.py, in the same pass) and:
- each range rule's own condition (its analyzer's, as the scan counts it) is evaluated on the
  columns' overall smallest and largest values, a two-row local relation, on the driver with no
  job. A range's failing values are those below its low end or above its high end, so when
  neither the smallest nor the largest value fails, no value between them does: the rule counts
  0 failing rows. When either fails, the footers cannot say how many rows do, and the scan
  counts them;
- `min` and `max` statistics are the overall smallest and largest values.
The fused scan then leaves the column out; it still counts the rows, and when the footers' row
total differs from it (files replaced between the reads) none of this is used (engine/run.py).

Only where the answer is certainly the scan's: what the null counts need, plus signed 32- or
64-bit integers read as `int` or `bigint` with both bounds written in every chunk that holds a
value. Not floats or doubles: a NaN is left out of a chunk's bounds but fails every range with a
high end. Only for files of `MIN_FILE_BYTES` or more, where leaving a column out pays for the
query on the bounds. `LINEAGE_QUALITY_FOOTER_BOUNDS=0` turns it off.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from lineage_quality.engine.analyzers import failing_condition
from lineage_quality.engine.expressions import Expr, column
from lineage_quality.engine.footer_nulls import FooterCounts
from lineage_quality.engine.plan import Measure, Metric

log = logging.getLogger(__name__)

# Below this many bytes of files the scan reads an integer column faster than the query on the
# bounds costs (~0.02 s on the driver).
MIN_FILE_BYTES = 64 * 1024 * 1024
_TYPES = ("int", "bigint")
_STATS = ("min", "max")


def _bound(m: Metric) -> bool:
    """A metric the bounds answer."""
    if m.kind is Measure.OUT_OF_RANGE:
        return not m.array
    return m.kind is Measure.STAT and m.integral and m.arg in _STATS


def bounded_columns(metrics: Sequence[Metric], types: dict[str, str]) -> list[str]:
    """The integer columns whose fused metrics are all ranges, mins, maxes or null counts, with
    at least one that is not a null count: what the footers can answer, so the scan needs
    nothing of them."""
    ok: dict[str, bool] = {}
    some: set[str] = set()
    for m in metrics:
        if m.column is None:
            continue
        served = _bound(m)
        ok[m.column] = ok.get(m.column, True) and (served or m.kind is Measure.NULLS)
        if served:
            some.add(m.column)
    return [c for c, fine in ok.items() if fine and c in some and types.get(c) in _TYPES]


def _condition(metric: Metric, now: float) -> Expr:
    condition = failing_condition(metric, now)  # the predicate the scan counts
    assert condition is not None  # a range counts rows
    return condition


def served_bounds(metrics: Sequence[Metric], footers: FooterCounts, now: float) -> dict[int, Any]:
    """What the footers' bounds answer: metric index -> value, for every bound metric of each
    column they answer wholly (a column with a range its bounds cannot decide is left to the
    scan)."""
    ranges = [
        i
        for i, m in enumerate(metrics)
        if m.kind is Measure.OUT_OF_RANGE and footers.bounds.get(m.column or "") is not None
    ]
    undecided: set[str] = set()
    if ranges and footers.frame is None:  # bounds without their relation: nothing to test on
        undecided = {metrics[i].column or "" for i in ranges}
    elif ranges and footers.frame is not None:
        try:
            conditions = [
                column(_condition(metrics[i], now)).alias(f"r{k}") for k, i in enumerate(ranges)
            ]
            ends = footers.frame.select(*conditions).collect()  # a local relation: no job
        except Exception as exc:  # the scan measures these columns and reports what is wrong
            log.info("ranges not decided on Parquet footers: %s", str(exc).strip()[:300])
            return {}
        for k, i in enumerate(ranges):
            if any(row[k] is not False for row in ends):  # fails, or null: undecided
                undecided.add(metrics[i].column or "")
    out: dict[int, Any] = {}
    for i, m in enumerate(metrics):
        c = m.column or ""
        if c not in footers.bounds or c in undecided or not _bound(m):
            continue
        ends_of_c = footers.bounds[c]
        if m.kind is Measure.OUT_OF_RANGE:
            out[i] = 0  # no value (all null) or none beyond the bounds
        else:
            out[i] = None if ends_of_c is None else ends_of_c[0 if m.arg == "min" else 1]
    return out
