"""Rule -> the standard shape of a DataHub dataset assertion (scope, aggregation, operator,
parameters) and its native parameters. Pure: enum values are DataHub's symbol names as strings.

Two forms (docs/datahub.md has the table for every RuleKind):

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
import math
from typing import Any

import attrs

from lineage_quality.rules import Operator, Rule, Threshold, Unit

# DatasetAssertionScope
COLUMN, ROWS, SCHEMA = "DATASET_COLUMN", "DATASET_ROWS", "DATASET_SCHEMA"
NATIVE = "_NATIVE_"

_STATISTIC_AGGREGATION = {
    "avg": "MEAN",
    "sum": "SUM",
    "stddev": "STDDEV",
    "median": "MEDIAN",
    "min": "MIN",
    "max": "MAX",
}

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


def number(value: int | float) -> str:
    """A number as DataHub parameters and native parameters carry it: `0`, `2.5`; integers
    exactly, whatever their size."""
    if isinstance(value, int):
        return str(value)
    value = float(value)
    if math.isfinite(value) and value.is_integer():
        return str(int(value))
    return repr(value)


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return number(value)
    return json.dumps(value, default=str)


@attrs.frozen
class Param:
    """An AssertionStdParameter: `type` is NUMBER, STRING, LIST or SET."""

    value: str
    type: str = "NUMBER"


@attrs.frozen
class Shape:
    scope: str
    aggregation: str
    operator: str
    value: Param | None = None
    min_value: Param | None = None
    max_value: Param | None = None
    on_metric: bool = True  # the operator applies to the rule's metric (else: to each value)
    scale: float = 1.0  # rule metric -> aggregation value (0.01 for percent -> proportion)


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


def _metric(rule: Rule, scope: str, aggregation: str, scale: float = 1.0) -> Shape:
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


def _bounds(rule: Rule, scope: str, aggregation: str) -> Shape:
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


def _counted(rule: Rule, scope: str, std_rows: str, std_proportion: str) -> Shape:
    if rule.unit is Unit.PERCENT:
        return _metric(rule, scope, std_proportion, scale=0.01)
    return _metric(rule, scope, std_rows)


def shape(rule: Rule) -> Shape:
    """The standard assertion shape of `rule` (see the module docstring)."""
    kind = rule.kind.value  # by value: kinds added later fall through to the native shape
    strict = allows_no_offence(rule)
    column_scope = COLUMN if rule.columns else ROWS
    if rule.history is not None:  # compared with the past: no standard shape holds it
        return Shape(column_scope, NATIVE, NATIVE)
    if kind == "rowCount":
        return _metric(rule, ROWS, "ROW_COUNT")
    if kind == "nullValues" or (kind == "missingValues" and not rule.missing_values):
        return _counted(rule, COLUMN, "NULL_COUNT", "NULL_PROPORTION")
    if kind == "invalidValues" and strict:
        if rule.valid_values and not rule.pattern:
            values = Param(json.dumps(list(rule.valid_values), default=str), "SET")
            return Shape(COLUMN, "IDENTITY", "IN", values, on_metric=False)
        if rule.pattern and not rule.valid_values:
            return Shape(
                COLUMN, "IDENTITY", "REGEX_MATCH", Param(rule.pattern, "STRING"), on_metric=False
            )
        return Shape(COLUMN, "IDENTITY", NATIVE, on_metric=False)
    if kind == "valueRange" and strict:
        return _bounds(rule, COLUMN, "IDENTITY")
    if kind in ("lengthRange", "cardinality") and strict:
        return _bounds(rule, COLUMN, NATIVE)  # the value's length / size, per row
    if kind == "statistic":
        return _metric(rule, COLUMN, _STATISTIC_AGGREGATION.get(rule.statistic or "", NATIVE))
    if kind == "columnType":
        if not strict:
            return _metric(rule, SCHEMA, NATIVE)
        if rule.expected_type:
            expected = Param(rule.expected_type, "STRING")
            return Shape(SCHEMA, NATIVE, "EQUAL_TO", expected, on_metric=False)
        column = Param(rule.columns[0] if rule.columns else "", "STRING")
        return Shape(SCHEMA, "COLUMNS", "CONTAIN", column, on_metric=False)
    if kind == "extraColumns":
        if strict and rule.valid_values:
            declared = Param(json.dumps(list(rule.valid_values), default=str), "SET")
            return Shape(SCHEMA, "COLUMNS", "IN", declared, on_metric=False)
        return _metric(rule, SCHEMA, NATIVE)
    # duplicateValues, dateFormat, freshness, sql, missingValues with a list, and every
    # non-strict row-counting rule: the metric, with a native aggregation.
    return _metric(rule, column_scope, NATIVE)
