"""nullValues: rows where the column is null."""

from __future__ import annotations

from types import MappingProxyType

from lineage_quality.kinds.datahub_mapping import counted_shape, not_null
from lineage_quality.rules.model import Kind, Rule
from lineage_quality.values.datahub_shape import COLUMN, NativeAssertion, Shape
from lineage_quality.values.metric import Measure, Metric


class NullValues(Kind):
    value = "nullValues"
    # one valid rule of the kind (Rule(...) keywords; mustBe 0 unless given) and its DataHub type
    sample = MappingProxyType({"columns": ("order_id",)})
    datahub_type = "FIELD"
    assertion_name = "not_null"
    counts_rows = True
    priority = 1
    odcs_metrics = ("nullValues",)
    odcs_verbs = (("hasNoNullValues", "mustBe", 0),)

    def metric(self, rule: Rule, column: str, ctype: str) -> Metric:
        return Metric(Measure.NULLS, column)

    def datahub_shape(self, rule: Rule) -> Shape:
        return counted_shape(rule, COLUMN, "NULL_COUNT", "NULL_PROPORTION")

    def datahub_native(self, rule: Rule) -> NativeAssertion | None:
        return not_null(rule)  # FIELD: values NOT_NULL, or the NULL_COUNT / NULL_PERCENTAGE
