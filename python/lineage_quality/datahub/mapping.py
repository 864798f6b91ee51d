"""Rule -> the standard shape of a DataHub dataset assertion (scope, aggregation, operator,
parameters) and its native parameters. Pure: enum values are DataHub's symbol names as strings.

Each rule kind declares its shape (`Kind.datahub_shape`, kinds/); the builders are here. Two
forms (docs/datahub.md has the table for every kind):

- metric form: `aggregation(metric) operator threshold`, the rule's own verdict. The aggregation
  is the standard one where DataHub has it (ROW_COUNT, NULL_COUNT, MEAN, ...) and `_NATIVE_`
  otherwise; `actualAggValue` of the run events is the measured metric.
- per-value form, for rules that allow no offending row at all (e.g. `invalidValues mustBe 0`)
  and whose row condition is a standard operator: `IDENTITY IN [a, b]`, `IDENTITY BETWEEN 0 and
  9`, `COLUMNS CONTAIN id`... The offending rows go into the run events' `unexpectedCount`.

Percent thresholds stay percent, except for the `*_PROPORTION` aggregations, which DataHub
defines as fractions (divided by 100); `nativeParameters` always keep the contract's numbers.
"""

from __future__ import annotations

import json
from typing import Any

from lineage_quality.datahub.shape import COLUMN, NATIVE, ROWS, Param, Shape, number
from lineage_quality.rules import Operator, Rule, Threshold, Unit

__all__ = [
    "DESCRIPTIVE_PARAMS",
    "Param",
    "Shape",
    "allows_no_offence",
    "bounds_shape",
    "counted_shape",
    "identity_parameters",
    "metric_shape",
    "native_parameters",
    "number",
    "shape",
    "threshold_key",
]

_OPERATOR = {
    Operator.MUST_BE: "EQUAL_TO",
    Operator.MUST_NOT_BE: "NOT_EQUAL_TO",
    Operator.GREATER_THAN: "GREATER_THAN",
    Operator.GREATER_OR_EQUAL: "GREATER_THAN_OR_EQUAL_TO",
    Operator.LESS_THAN: "LESS_THAN",
    Operator.LESS_OR_EQUAL: "LESS_THAN_OR_EQUAL_TO",
    Operator.BETWEEN: "BETWEEN",
    Operator.NOT_BETWEEN: NATIVE,  # no standard "outside" operator
}

# Keys of Rule.params() that describe a rule but do not change what it checks: they stay out of
# the assertion's identity (a renamed rule keeps its assertion and its history).
DESCRIPTIVE_PARAMS = frozenset(
    {"ruleId", "origin", "dimension", "category", "action", "constraint"}
)


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return number(value)
    return json.dumps(value, default=str)


def threshold_key(threshold: Threshold) -> tuple[str, str]:
    """The threshold as the contract spells it: (`mustBe`, `0`), (`mustBeBetween`, `[1, 5]`)."""
    if threshold.operator.is_range:
        assert threshold.high is not None
        return threshold.operator.value, f"[{number(threshold.value)}, {number(threshold.high)}]"
    return threshold.operator.value, number(threshold.value)


def native_parameters(rule: Rule) -> dict[str, str]:
    """`Rule.params()` as strings, plus the threshold (`mustBe: 0` -> `{"mustBe": "0"}`)."""
    out = {k: _text(v) for k, v in rule.params().items() if v is not None}
    key, value = threshold_key(rule.threshold)
    out[key] = value
    return out


def identity_parameters(rule: Rule) -> dict[str, str]:
    """The native parameters that make an assertion what it is (see DESCRIPTIVE_PARAMS)."""
    return {k: v for k, v in native_parameters(rule).items() if k not in DESCRIPTIVE_PARAMS}


def allows_no_offence(rule: Rule) -> bool:
    """Whether the threshold tolerates no offending row: mustBe 0, <= 0, < 1 (rows)."""
    smallest = 1.0 if rule.unit is Unit.ROWS else 1e-9
    return rule.threshold.holds(0.0) and not rule.threshold.holds(smallest)


def metric_shape(rule: Rule, scope: str, aggregation: str, scale: float = 1.0) -> Shape:
    """The metric form: `aggregation(metric) operator threshold` (`scale`: percent -> fraction)."""
    t = rule.threshold
    operator = _OPERATOR[t.operator]
    if t.operator.is_range:
        assert t.high is not None
        return Shape(
            scope,
            aggregation,
            operator,
            min_value=Param(number(t.value * scale)),
            max_value=Param(number(t.high * scale)),
            scale=scale,
        )
    return Shape(scope, aggregation, operator, value=Param(number(t.value * scale)), scale=scale)


def bounds_shape(rule: Rule, scope: str, aggregation: str) -> Shape:
    """The per-value form of a [min, max] rule: each value BETWEEN (or >=, <=) its bounds."""
    low, high = rule.min_value, rule.max_value
    if low is not None and high is not None:
        return Shape(
            scope,
            aggregation,
            "BETWEEN",
            min_value=Param(number(low)),
            max_value=Param(number(high)),
            on_metric=False,
        )
    if low is not None:
        return Shape(
            scope, aggregation, "GREATER_THAN_OR_EQUAL_TO", Param(number(low)), on_metric=False
        )
    assert high is not None
    return Shape(scope, aggregation, "LESS_THAN_OR_EQUAL_TO", Param(number(high)), on_metric=False)


def counted_shape(rule: Rule, scope: str, std_rows: str, std_proportion: str) -> Shape:
    """A count of rows in rows, or its proportion for `unit: percent`."""
    if rule.unit is Unit.PERCENT:
        return metric_shape(rule, scope, std_proportion, scale=0.01)
    return metric_shape(rule, scope, std_rows)


def shape(rule: Rule) -> Shape:
    """The standard assertion shape of `rule`: the one its kind declares (kinds/), else the
    metric form with a native aggregation. A rule compared with the past has no standard shape
    (its verdict comes from its history, not from a threshold)."""
    column_scope = COLUMN if rule.columns else ROWS
    if rule.history is not None:
        return Shape(column_scope, NATIVE, NATIVE)
    declared = rule.kind.datahub_shape(rule)
    if declared is not None:
        return declared
    return metric_shape(rule, column_scope, NATIVE)
