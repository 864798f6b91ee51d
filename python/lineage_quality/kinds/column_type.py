"""columnType: the column exists (and has `expected_type`); decided from the schema, no scan."""

from __future__ import annotations

from types import MappingProxyType

import attrs

from lineage_quality.kinds.datahub_mapping import allows_no_offence, metric_shape, standard_type
from lineage_quality.rules.model import BuiltInOptions, Kind, Rule
from lineage_quality.values.datahub_shape import (
    NATIVE,
    SCHEMA,
    ExpectedSchema,
    FieldSpec,
    NativeAssertion,
    Param,
    Shape,
)


@attrs.frozen
class ColumnTypeOptions(BuiltInOptions):
    """The type the column must have (`exact_type`: a physical type, compared exactly, not by
    family) and its declared length, precision and scale."""

    expected_type: str | None = None
    exact_type: bool = False
    max_length: int | None = None
    precision: int | None = None
    scale: int | None = None


class ColumnType(Kind):
    value = "columnType"
    # one valid rule of the kind (Rule(...) keywords; mustBe 0 unless given) and its DataHub type
    sample = MappingProxyType({"columns": ("amount",), "expected_type": "double"})
    datahub_type = "DATA_SCHEMA"
    options_type = ColumnTypeOptions
    assertion_name = "column_type"
    scan = "schema"
    priority = 0

    def assertion(self, rule: Rule) -> str:
        return "column_type" if rule.expected_type is not None else "column_exists"

    def expected(self, rule: Rule) -> str:
        return rule.expected_type or "present"

    def datahub_shape(self, rule: Rule) -> Shape:
        if not allows_no_offence(rule):
            return metric_shape(rule, SCHEMA, NATIVE)
        if rule.expected_type:
            expected = Param(rule.expected_type, "STRING")
            return Shape(SCHEMA, NATIVE, "EQUAL_TO", expected, on_metric=False)
        column = Param(rule.columns[0] if rule.columns else "", "STRING")
        return Shape(SCHEMA, "COLUMNS", "CONTAIN", column, on_metric=False)

    def datahub_native(self, rule: Rule) -> NativeAssertion | None:
        # DATA_SCHEMA: the dataset has (at least) this field, of this type when one is declared
        if not allows_no_offence(rule) or len(rule.columns) != 1:
            return None
        expected = rule.expected_type or ""
        field = FieldSpec(rule.columns[0], standard_type(expected), expected)
        return ExpectedSchema((field,), "SUPERSET")
