"""invalidValues: non-null rows not in `valid_values` and/or not matching `pattern`."""

from __future__ import annotations

import json
from types import MappingProxyType
from typing import Any

import attrs

from lineage_quality.engine.types import spark_type
from lineage_quality.kinds.datahub_mapping import allows_no_offence, field_values
from lineage_quality.rules.model import BuiltInOptions, Kind, Rule, optional_tuple
from lineage_quality.rules.patterns import pattern_refusal
from lineage_quality.values.datahub_shape import (
    COLUMN,
    NATIVE,
    Bounds,
    NativeAssertion,
    Param,
    Shape,
)
from lineage_quality.values.metric import Measure, Metric


def same_type(value: Any, ctype: str) -> bool:
    """Whether a listed value can equal a value of a column of Spark type `ctype` without a
    coercion: a string only a string, an integer only a number, a boolean only a boolean. Spark's
    `isin` would cast (`'01'` equal to `1` on a string column): seed 002 wants exact matching."""
    family = spark_type(ctype).family
    if isinstance(value, bool):
        return family == "boolean"
    if isinstance(value, int):
        return family in ("integer", "float", "decimal")
    if isinstance(value, float):
        return family in ("float", "decimal")
    if isinstance(value, str):
        return family == "string"
    return False


@attrs.frozen
class InvalidValuesOptions(BuiltInOptions):
    """The accepted values (`validValues`) and/or the pattern a value must match."""

    valid_values: tuple[object, ...] | None = attrs.field(default=None, converter=optional_tuple)
    pattern: str | None = None




class InvalidValues(Kind):
    value = "invalidValues"
    # one valid rule of the kind (Rule(...) keywords; mustBe 0 unless given) and its DataHub type
    sample = MappingProxyType({"columns": ("status",), "valid_values": ("pending", "shipped")})
    datahub_type = "FIELD"
    options_type = InvalidValuesOptions
    assertion_name = "accepted_values"
    counts_rows = True
    odcs_metrics = ("invalidValues",)
    odcs_verbs = (
        ("noInvalidValues", "mustBe", 0),
        ("hasValidValue", "mustBe", 0),
        ("hasValidValues", "mustBe", 0),
    )

    def validate(self, rule: Rule) -> None:
        if not (rule.valid_values or rule.pattern):
            raise ValueError("invalidValues needs validValues and/or pattern")

    def assertion(self, rule: Rule) -> str:
        return "accepted_values" if rule.valid_values else "matches_regex"

    def metric(self, rule: Rule, column: str, ctype: str) -> Metric | str:
        # A null is never invalid, so a null in the list changes nothing (and must not make
        # `value IN (..., NULL)` null for every value that is not listed).
        if rule.pattern is not None:
            refused = pattern_refusal(rule.pattern)
            if refused:
                return refused
        valid = None
        if rule.valid_values is not None:
            valid = tuple(v for v in rule.valid_values if v is not None)
            if rule.origin == "schema-json":  # seed 002: ints and strings match exactly
                valid = tuple(v for v in valid if same_type(v, ctype))
        return Metric(Measure.INVALID, column, values=valid, pattern=rule.pattern)

    def datahub_shape(self, rule: Rule) -> Shape | None:
        if not allows_no_offence(rule):
            return None
        if rule.valid_values and not rule.pattern:
            values = Param(json.dumps(list(rule.valid_values), default=str), "SET")
            return Shape(COLUMN, "IDENTITY", "IN", values, on_metric=False)
        if rule.pattern and not rule.valid_values:
            pattern = Param(rule.pattern, "STRING")
            return Shape(COLUMN, "IDENTITY", "REGEX_MATCH", pattern, on_metric=False)
        return Shape(COLUMN, "IDENTITY", NATIVE, on_metric=False)

    def datahub_native(self, rule: Rule) -> NativeAssertion | None:
        # FIELD: values IN the list or REGEX_MATCH the pattern (a null is never invalid);
        # both at once: CUSTOM
        if rule.valid_values and not rule.pattern:
            values = Param(json.dumps(list(rule.valid_values), default=str), "SET")
            return field_values(rule, Bounds("IN", values))
        if rule.pattern and not rule.valid_values:
            return field_values(rule, Bounds("REGEX_MATCH", Param(rule.pattern, "STRING")))
        return None
