"""valueRange: non-null rows outside [min_value, max_value]."""

from __future__ import annotations

from types import MappingProxyType

from lineage_quality.engine.types import is_numeric
from lineage_quality.kinds.datahub_mapping import field_values, per_value_bounds, shacl_min_max
from lineage_quality.kinds.ranges import BoundsOptions, per_value_shape, validate_bounds
from lineage_quality.rules.model import Kind, Rule
from lineage_quality.values.datahub_shape import COLUMN, NativeAssertion, Shape
from lineage_quality.values.metric import Measure, Metric


class ValueRange(Kind):
    value = "valueRange"
    # one valid rule of the kind (Rule(...) keywords; mustBe 0 unless given) and its DataHub type
    sample = MappingProxyType({"columns": ("amount",), "min_value": 0, "max_value": 100})
    datahub_type = "FIELD"
    options_type = BoundsOptions
    assertion_name = "accepted_range"
    counts_rows = True

    def validate(self, rule: Rule) -> None:
        validate_bounds(rule)

    def metric(self, rule: Rule, column: str, ctype: str) -> Metric | str:
        if not is_numeric(ctype):
            return f"{rule.assertion} needs a numeric column; {column} is {ctype}"
        return Metric(Measure.OUT_OF_RANGE, column, low=rule.min_value, high=rule.max_value)

    def datahub_shape(self, rule: Rule) -> Shape | None:
        return per_value_shape(rule, COLUMN, "IDENTITY")

    def datahub_native(self, rule: Rule) -> NativeAssertion | None:
        # SHACL's minInclusive / maxInclusive: FIELD_METRIC MIN / MAX (seed 000)
        metric = shacl_min_max(rule)
        if metric is not None:
            return metric
        # FIELD: each non-null value BETWEEN (>=, <=) its bounds, failing past the tolerance
        within = per_value_bounds(rule.min_value, rule.max_value)
        return field_values(rule, within, "NUMBER")
