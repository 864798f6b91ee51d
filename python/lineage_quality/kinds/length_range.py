"""lengthRange: non-null rows whose string length (an array's size) is outside [min, max]."""

from __future__ import annotations

from types import MappingProxyType

from lineage_quality.kinds.datahub_mapping import field_values, per_value_bounds
from lineage_quality.kinds.ranges import (
    BoundsOptions,
    per_row_metric,
    per_value_shape,
    validate_bounds,
)
from lineage_quality.rules.model import Kind, Rule
from lineage_quality.values.datahub_shape import COLUMN, NATIVE, NativeAssertion, Shape
from lineage_quality.values.metric import Measure, Metric


class LengthRange(Kind):
    value = "lengthRange"
    # one valid rule of the kind (Rule(...) keywords; mustBe 0 unless given) and its DataHub type
    sample = MappingProxyType({"columns": ("status",), "min_value": 1, "max_value": 20})
    datahub_type = "FIELD"
    options_type = BoundsOptions
    assertion_name = "value_length_between"
    counts_rows = True

    def validate(self, rule: Rule) -> None:
        validate_bounds(rule)

    def metric(self, rule: Rule, column: str, ctype: str) -> Metric:
        return per_row_metric(Measure.LENGTH_OUT, rule, column, ctype)

    def datahub_shape(self, rule: Rule) -> Shape | None:
        return per_value_shape(rule, COLUMN, NATIVE)  # the value's length, per row

    def datahub_native(self, rule: Rule) -> NativeAssertion | None:
        # FIELD: each non-null value's LENGTH within its bounds
        within = per_value_bounds(rule.min_value, rule.max_value)
        return field_values(rule, within, "STRING", transform="LENGTH")
