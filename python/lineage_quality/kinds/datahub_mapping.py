"""Rule -> the standard shape of a DataHub dataset assertion (scope, aggregation, operator,
parameters) and its native parameters. Pure: enum values are DataHub's symbol names as strings.

Each rule kind declares its native DataHub type (`Kind.datahub_native`, VOLUME, FRESHNESS,
DATA_SCHEMA, FIELD, SQL) and the shape of its CUSTOM assertion when it has none
(`Kind.datahub_shape`), in kinds/; the builders are here (`native`, `shape`, and the helpers the
kinds call: `bounds`, `fail_threshold`, `field_values`, ...). The CUSTOM shape has two forms
(docs/datahub.md has the table for every kind):

- metric form: `aggregation(metric) operator threshold`, the rule's own verdict. The aggregation
  is the standard one where DataHub has it (ROW_COUNT, NULL_COUNT, MEAN, ...) and `_NATIVE_`
  otherwise; `actualAggValue` of the run events is the measured metric.
- per-value form, for rules that allow no offending row at all (e.g. `invalidValues mustBe 0`)
  and whose row condition is a standard operator: `IDENTITY IN [a, b]`, `IDENTITY BETWEEN 0 and
  9`, `COLUMNS CONTAIN id`... The offending rows go into the run events' `unexpectedCount`.

Percent thresholds stay percent, except for the `*_PROPORTION` aggregations, which DataHub
defines as fractions (divided by 100); `nativeParameters` always keep the contract's numbers.

A history rule (`Rule.history`) compares its measurement with earlier runs: its native type is the
kind's `datahub_native_history` (a row count's change: VOLUME ROW_COUNT_CHANGE), else CUSTOM with
a shape that says what is compared (`history_shape`): never the measured metric against the
threshold of the comparison.
"""

from __future__ import annotations

import json
import math
from typing import Any

import attrs

from lineage_quality.rules import Operator, Rule, Threshold, Unit
from lineage_quality.rules.history import Compare
from lineage_quality.values.datahub_shape import (
    COLUMN,
    NATIVE,
    ROWS,
    Bounds,
    FieldMetric,
    FieldSpec,
    FieldValues,
    NativeAssertion,
    Param,
    Shape,
    Volume,
    number,
)

__all__ = [
    "DESCRIPTIVE_PARAMS",
    "Param",
    "Shape",
    "allows_no_offence",
    "bounds",
    "bounds_shape",
    "change_bounds",
    "counted_shape",
    "fail_threshold",
    "field_spec",
    "field_values",
    "history_shape",
    "identity_parameters",
    "metric_shape",
    "native",
    "native_parameters",
    "not_null",
    "number",
    "per_value_bounds",
    "shacl_min_max",
    "shape",
    "standard_type",
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
    {"ruleId", "origin", "dimension", "category", "action", "constraint", "tags", "target"}
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


def _declared_shape(rule: Rule) -> Shape:
    declared = rule.kind.datahub_shape(rule)
    if declared is not None:
        return declared
    return metric_shape(rule, COLUMN if rule.columns else ROWS, NATIVE)


def shape(rule: Rule) -> Shape:
    """The standard shape of `rule`'s CUSTOM assertion: the one its kind declares (kinds/), else
    the metric form with a native aggregation; for a history rule, `history_shape`."""
    if rule.history is not None:
        return history_shape(rule)
    return _declared_shape(rule)


def history_shape(rule: Rule) -> Shape:
    """What a history rule compares: a change (`absoluteChange`, `relativeChange`) or an age
    (`freshness`) against the threshold, with a native aggregation (the compared quantity is
    not the metric); a band (`stddev`, `seasonal`) around the past values of the metric, with
    the metric's aggregation and a native operator (the band moves; `nativeParameters` say k and
    the window)."""
    assert rule.history is not None
    measured = rule.kind.datahub_shape(attrs.evolve(rule, history=None))
    scope = measured.scope if measured else (COLUMN if rule.columns else ROWS)
    if rule.history.compare.uses_threshold:
        return metric_shape(rule, scope, NATIVE)
    aggregation = measured.aggregation if measured and measured.on_metric else NATIVE
    return Shape(scope, aggregation, NATIVE, scale=measured.scale if measured else 1.0)


def native(rule: Rule) -> NativeAssertion | None:
    """The native DataHub assertion `rule`'s kind declares, or None (CUSTOM). A rule counting
    only the rows of its filter (seed 002's `filter_condition`) keeps a native type only where
    DataHub's type carries a filter (field and volume assertions: `filter.sql`)."""
    if rule.history is not None:
        found = rule.kind.datahub_native_history(rule)
    else:
        found = rule.kind.datahub_native(rule)
    if rule.filter_condition is not None and not isinstance(
        found, (FieldValues, FieldMetric, Volume)
    ):
        return None
    return found


# -- helpers for the kinds' native types ---------------------------------------------------------

_NUMERIC_ONLY = frozenset({"NOT_EQUAL_TO", NATIVE})  # VOLUME and SQL take numeric operators only


def _round(value: float) -> int | float:
    return value if isinstance(value, int) else round(value, 9)


def bounds(
    threshold: Threshold, scale: float = 1.0, shift: float = 0.0, numeric: bool = False
) -> Bounds | None:
    """The threshold as an operator and parameters (`value * scale + shift`); None when DataHub
    has no such operator (mustNotBeBetween; mustNotBe where only numeric operators are valid)."""
    operator = _OPERATOR[threshold.operator]
    if operator == NATIVE or (numeric and operator in _NUMERIC_ONLY):
        return None

    def param(v: int | float) -> Param:
        if scale == 1.0 and shift == 0.0:
            return Param(number(v))
        return Param(number(_round(v * scale + shift)))

    if threshold.operator.is_range:
        assert threshold.high is not None
        return Bounds(operator, min_value=param(threshold.value), max_value=param(threshold.high))
    return Bounds(operator, value=param(threshold.value))


def change_bounds(rule: Rule) -> tuple[str, Bounds] | None:
    """A change rule's (AssertionValueChangeType, bounds): `absoluteChange` is ABSOLUTE with the
    threshold's numbers; `relativeChange` (new / previous) is PERCENTAGE, DataHub's percent
    change: a ratio between 0.8 and 1.25 is a change between -20 and 25 percent."""
    if rule.history is None:
        return None
    if rule.history.compare is Compare.ABSOLUTE_CHANGE:
        found = bounds(rule.threshold, numeric=True)
        return None if found is None else ("ABSOLUTE", found)
    if rule.history.compare is Compare.RELATIVE_CHANGE:
        found = bounds(rule.threshold, scale=100.0, shift=-100.0, numeric=True)
        return None if found is None else ("PERCENTAGE", found)
    return None


def fail_threshold(rule: Rule) -> tuple[str, int] | None:
    """The offending rows a count rule tolerates, as DataHub's FieldValuesFailThreshold: (COUNT,
    n) for `<= n` rows (or `< n + 1`, `mustBe 0`), (PERCENTAGE, p) for `<= p` percent with a
    whole p. None when the threshold is no such upper bound (e.g. `> 5`)."""
    t = rule.threshold
    if t.operator is Operator.MUST_BE and t.value == 0:
        return "COUNT", 0
    if t.operator not in (Operator.LESS_OR_EQUAL, Operator.LESS_THAN) or t.value <= 0:
        return None
    if rule.unit is Unit.PERCENT:
        if t.operator is Operator.LESS_OR_EQUAL and float(t.value).is_integer():
            return "PERCENTAGE", int(t.value)
        return None
    if t.operator is Operator.LESS_OR_EQUAL:
        return "COUNT", math.floor(t.value)
    return "COUNT", math.ceil(t.value) - 1


def field_spec(rule: Rule, type_: str = "UNKNOWN", native_type: str = "") -> FieldSpec:
    return FieldSpec(rule.columns[0] if rule.columns else "", type_, native_type)


def field_values(
    rule: Rule,
    per_value: Bounds,
    type_: str = "UNKNOWN",
    exclude_nulls: bool = True,
    transform: str | None = None,
) -> FieldValues | None:
    """FIELD_VALUES: each value meets `per_value`, failing past the rule's tolerance; None for a
    rule on several columns or whose threshold is no upper bound on the offending rows."""
    tolerated = fail_threshold(rule)
    if tolerated is None or len(rule.columns) != 1:
        return None
    return FieldValues(
        field_spec(rule, type_),
        per_value,
        fail_type=tolerated[0],
        fail_value=tolerated[1],
        exclude_nulls=exclude_nulls,
        transform=transform,
    )


def shacl_min_max(rule: Rule) -> FieldMetric | None:
    """SHACL's `minInclusive` / `maxInclusive` as seed 000 maps them: FIELD_METRIC, the column's
    MIN >= the bound / its MAX <= the bound (every value within it, as the rule checks: the
    offending rows are the run event's `unexpectedCount`). None for any other rule."""
    if rule.origin != "shacl" or len(rule.columns) != 1 or fail_threshold(rule) != ("COUNT", 0):
        return None
    if rule.min_value is not None and rule.max_value is None:
        return FieldMetric(
            field_spec(rule, "NUMBER"),
            "MIN",
            Bounds("GREATER_THAN_OR_EQUAL_TO", Param(number(rule.min_value))),
        )
    if rule.max_value is not None and rule.min_value is None:
        return FieldMetric(
            field_spec(rule, "NUMBER"),
            "MAX",
            Bounds("LESS_THAN_OR_EQUAL_TO", Param(number(rule.max_value))),
        )
    return None


def per_value_bounds(low: float | None, high: float | None) -> Bounds:
    """Each value within [low, high] (either may be open)."""
    if low is not None and high is not None:
        return Bounds("BETWEEN", min_value=Param(number(low)), max_value=Param(number(high)))
    if low is not None:
        return Bounds("GREATER_THAN_OR_EQUAL_TO", value=Param(number(low)))
    assert high is not None
    return Bounds("LESS_THAN_OR_EQUAL_TO", value=Param(number(high)))


def not_null(rule: Rule) -> NativeAssertion | None:
    """A null count as DataHub has it: no null at all is FIELD_VALUES NOT_NULL (each value not
    null); SHACL's required field (seed 000: `minCount 1 ; maxCount 1` is FIELD_METRIC
    NOT_NULL) the field metric NULL_COUNT EQUAL_TO 0 (a metric is a number: "not null" is its
    count of nulls being 0); any other threshold, FIELD_METRIC NULL_COUNT (rows) or
    NULL_PERCENTAGE."""
    if len(rule.columns) != 1:
        return None
    none_at_all = rule.threshold.operator is Operator.MUST_BE and rule.threshold.value == 0
    if none_at_all and rule.origin == "shacl":
        return FieldMetric(field_spec(rule), "NULL_COUNT", Bounds("EQUAL_TO", Param("0")))
    if none_at_all:
        return field_values(rule, Bounds("NOT_NULL"), exclude_nulls=False)
    found = bounds(rule.threshold)
    if found is None:
        return None
    metric = "NULL_PERCENTAGE" if rule.unit is Unit.PERCENT else "NULL_COUNT"
    return FieldMetric(field_spec(rule), metric, found)


# A contract's or Spark's type name -> DataHub's standard field type (SchemaFieldDataType).
_STANDARD_TYPES = (
    (("tinyint", "smallint", "int", "integer", "bigint", "long", "short", "byte", "float",
      "double", "real", "decimal", "numeric", "number"), "NUMBER"),
    (("string", "varchar", "char", "text"), "STRING"),
    (("boolean", "bool"), "BOOLEAN"),
    (("date",), "DATE"),
    (("timestamp", "timestamp_ntz", "timestamp_ltz", "time", "datetime"), "TIME"),
    (("binary", "bytes"), "BYTES"),
    (("array",), "ARRAY"),
    (("map",), "MAP"),
    (("struct", "object", "record"), "STRUCT"),
)  # fmt: skip


def standard_type(native_type: str) -> str:
    """`decimal(12,2)` -> NUMBER, `array<string>` -> ARRAY; UNKNOWN for none or another."""
    base = native_type.strip().lower().split("(", 1)[0].split("<", 1)[0].strip()
    for names, standard in _STANDARD_TYPES:
        if base in names:
            return standard
    return "UNKNOWN"
