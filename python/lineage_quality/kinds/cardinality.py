"""cardinality: rows whose number of values (an array's size; 0 or 1 for a scalar) is out of
range."""

from __future__ import annotations

from types import MappingProxyType

from lineage_quality.kinds.ranges import (
    BoundsOptions,
    per_row_metric,
    per_value_shape,
    validate_bounds,
)
from lineage_quality.rules.model import Kind, Rule
from lineage_quality.values.datahub_shape import COLUMN, NATIVE, Shape
from lineage_quality.values.metric import Measure, Metric


class Cardinality(Kind):
    value = "cardinality"
    # one valid rule of the kind (Rule(...) keywords; mustBe 0 unless given) and its DataHub type
    sample = MappingProxyType({"columns": ("tags",), "min_value": 0, "max_value": 1})
    datahub_type = "CUSTOM"
    options_type = BoundsOptions
    assertion_name = "cardinality"
    counts_rows = True

    def validate(self, rule: Rule) -> None:
        validate_bounds(rule)

    def metric(self, rule: Rule, column: str, ctype: str) -> Metric:
        return per_row_metric(Measure.CARDINALITY_OUT, rule, column, ctype)

    def datahub_shape(self, rule: Rule) -> Shape | None:
        return per_value_shape(rule, COLUMN, NATIVE)  # the value's size, per row
