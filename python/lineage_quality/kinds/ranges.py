"""What the kinds checking a per-row [min, max] share (valueRange, lengthRange, cardinality)."""

from __future__ import annotations

import attrs

from lineage_quality.engine.types import is_array
from lineage_quality.kinds.datahub_mapping import allows_no_offence, bounds_shape
from lineage_quality.rules.model import BuiltInOptions, Rule
from lineage_quality.values.datahub_shape import Shape
from lineage_quality.values.metric import Measure, Metric


@attrs.frozen
class BoundsOptions(BuiltInOptions):
    """The [min_value, max_value] a value (valueRange), a length (lengthRange) or a value count
    (cardinality) must lie in; either end may be open."""

    min_value: float | None = None
    max_value: float | None = None


def validate_bounds(rule: Rule) -> None:
    value = rule.kind.value
    if rule.min_value is None and rule.max_value is None:
        raise ValueError(f"{value} needs a minimum and/or a maximum")
    if (
        rule.min_value is not None
        and rule.max_value is not None
        and rule.min_value > rule.max_value
    ):
        raise ValueError(
            f"{value}: minimum {rule.min_value:g} is greater than maximum {rule.max_value:g}"
        )


def per_value_shape(rule: Rule, scope: str, aggregation: str) -> Shape | None:
    """Each value within its bounds, when the rule allows no offending row; else the metric."""
    return bounds_shape(rule, scope, aggregation) if allows_no_offence(rule) else None


def per_row_metric(kind: Measure, rule: Rule, column: str, ctype: str) -> Metric:
    """The rows whose per-row count (a length, a number of values) is outside the rule's range;
    an array column counts its elements."""
    return Metric(kind, column, low=rule.min_value, high=rule.max_value, array=is_array(ctype))
