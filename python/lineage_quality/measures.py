"""What one evaluation measured on a dataset, beside the verdicts: its row count and, per column,
the statistics its scan computed anyway (or the opt-in profile added to the same scan).

The engine fills it from the single fused aggregation (engine/measures.py); every RuleResult of
that evaluation points at the same DatasetMeasures, so it travels wherever the results go
(memoised, re-scoped, quarantined) without a second channel. facets/metrics.py turns it into
OpenLineage's `dataQualityMetrics`; it is never recomputed. Pure, no Spark.
"""

from __future__ import annotations

import attrs


@attrs.frozen
class ColumnMeasures:
    """One column's numbers; None where the scan did not compute that number. Integral values
    stay ints (a long sum or bound above 2^53 is exact). `distinct` is exact: it comes from a
    uniqueness rule's grouped pass, never from an estimate."""

    nulls: int | None = None
    distinct: int | None = None
    sum: int | float | None = None
    min: int | float | None = None
    max: int | float | None = None
    mean: float | None = None
    stddev: float | None = None
    median: float | None = None

    @property
    def empty(self) -> bool:
        return all(getattr(self, a.name) is None for a in attrs.fields(ColumnMeasures))


@attrs.frozen
class DatasetMeasures:
    """`rows` counted by the scan; `columns` in the dataset's order, only columns with at least
    one number; `profiled` when the opt-in profile added every column's cheap metrics."""

    rows: int
    columns: tuple[tuple[str, ColumnMeasures], ...] = ()
    profiled: bool = False

    def column(self, name: str) -> ColumnMeasures | None:
        return next((m for n, m in self.columns if n == name), None)
