"""rowCount: the dataset's rows (slot 0 of every plan: every verdict needs the row count)."""

from __future__ import annotations

from lineage_quality.datahub.mapping import metric_shape
from lineage_quality.datahub.shape import ROWS, Shape
from lineage_quality.rules.model import Kind, Rule


class RowCount(Kind):
    value = "rowCount"
    assertion_name = "row_count"
    columns = "none"
    scan = "rows"
    implied = ("mustBeGreaterThan", 0)  # at least one row
    odcs_metrics = ("rowCount",)
    odcs_verbs = (
        ("hasRowCountGreaterThan", "mustBeGreaterThan", "value"),
        ("hasRowCountLessThan", "mustBeLessThan", "value"),
    )

    def datahub_shape(self, rule: Rule) -> Shape:
        return metric_shape(rule, ROWS, "ROW_COUNT")
