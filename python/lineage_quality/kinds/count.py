"""count: the number of non-null values of a column (the predefined-rules RFC's statistical
`count`, seed 003), judged as a value against the entry's operator (SQL's `count(column)`)."""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING

from lineage_quality.kinds.datahub_mapping import metric_shape
from lineage_quality.rules.model import Kind, Rule
from lineage_quality.rules.threshold import Operator, Threshold
from lineage_quality.values.datahub_shape import COLUMN, NATIVE, Shape
from lineage_quality.values.metric import Metric

if TYPE_CHECKING:
    from lineage_quality.engine.analyzers.values import NonNullCount


class Count(Kind):
    value = "count"
    # one valid rule of the kind (Rule(...) keywords; mustBe 0 unless given) and its DataHub type
    sample = MappingProxyType(
        {"columns": ("order_id",), "threshold": Threshold(Operator.GREATER_THAN, 0)}
    )
    datahub_type = "CUSTOM"
    assertion_name = "column_count"
    needs_operator = True  # "count" alone says nothing about how many: the entry gives it
    odcs_metrics = ("count",)

    def metric(self, rule: Rule, column: str, ctype: str) -> Metric:
        return Metric(self.value, column)

    def datahub_shape(self, rule: Rule) -> Shape:
        return metric_shape(rule, COLUMN, NATIVE)

    def analyzer(self) -> NonNullCount:
        from lineage_quality.engine.analyzers.values import NonNullCount

        return NonNullCount()
