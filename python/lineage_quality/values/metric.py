"""`Metric`: one aggregate of the fused scan, as the plan asks for it. Pure values.

`Measure` names the built-in measurements (several rule kinds share one: a freshness rule is
a TOO_NEW or a TOO_OLD count); the speed shortcuts (footers, dictionaries, row gates) know them
by name. A rule kind that brings a measurement of its own (kinds/) names it by its kind's value,
a string, and its analyzer comes from the kind: the plan puts it in `measure` (so the engine
never looks kinds up by name).
"""

from __future__ import annotations

import enum
from typing import Any

import attrs


class Measure(enum.Enum):
    ROWS = "rows"  # count(*)
    NULLS = "nulls"  # rows where the column is null
    MISSING = "missing"  # rows where the column is null or one of the missing values
    INVALID = "invalid"  # non-null rows that are not valid (value list and/or pattern)
    OUT_OF_RANGE = "out_of_range"  # non-null rows outside [low, high]
    LENGTH_OUT = "length_out"  # non-null rows whose length is outside [low, high]
    CARDINALITY_OUT = "cardinality_out"  # rows whose value count is outside [low, high]
    BAD_DATE = "bad_date"  # non-null string rows that do not parse with `arg`
    TOO_NEW = "too_new"  # rows newer than now - low seconds
    TOO_OLD = "too_old"  # rows older than now - low seconds
    STAT = "stat"  # the statistic `arg` of the column


@attrs.frozen
class Metric:
    """One aggregate expression of the fused scan. `kind` is a built-in Measure, or the value
    of a registered rule kind that measures with its own analyzer."""

    kind: Measure | str
    column: str | None = None
    values: tuple[Any, ...] | None = None
    pattern: str | None = None
    low: float | None = None
    high: float | None = None
    arg: str | None = None
    array: bool = False  # the column is an array (length = element count)
    typed: bool = False  # BAD_DATE on a date/timestamp column: nothing can be malformed
    integral: bool = False  # STAT on an integer column: sum/min/max are computed exactly
    wide: bool = False  # ... a 64-bit one: its sum can pass 2^63, a sum of narrower ones cannot
    # the analyzer of a kind's own measurement (`kind` a string): the kind's `analyzer()`, set
    # by the plan; the same name always means the same analyzer, so it is not part of equality
    measure: object = attrs.field(default=None, eq=False, repr=False)


ROWS = Metric(Measure.ROWS)
