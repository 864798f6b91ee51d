"""ROWS: the dataset's row count, `count(*)`; slot 0 of every plan (every verdict needs it) and
the measure of a rowCount rule."""

from __future__ import annotations

from lineage_quality.engine import functions as F
from lineage_quality.engine.analyzers.base import Analyzer
from lineage_quality.engine.expressions import Expr
from lineage_quality.engine.plan import Metric
from lineage_quality.engine.shared_columns import Shared


class Rows(Analyzer):
    def aggregation(
        self, metric: Metric, now: float, shared: Shared | None, counted: Expr | None
    ) -> Expr:
        return F.count(F.lit(1))
