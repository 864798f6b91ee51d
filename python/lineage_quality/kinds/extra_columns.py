"""extraColumns: columns present but not declared (`valid_values`); decided from the schema."""

from __future__ import annotations

import json
from types import MappingProxyType

import attrs

from lineage_quality.kinds.datahub_mapping import allows_no_offence, metric_shape
from lineage_quality.rules.model import BuiltInOptions, Kind, Rule, optional_tuple
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
class ExtraColumnsOptions(BuiltInOptions):
    """The declared columns (`valid_values`): any other column present is extra."""

    valid_values: tuple[object, ...] | None = attrs.field(default=None, converter=optional_tuple)




class ExtraColumns(Kind):
    value = "extraColumns"
    # one valid rule of the kind (Rule(...) keywords; mustBe 0 unless given) and its DataHub type
    sample = MappingProxyType({"valid_values": ("order_id", "status", "amount")})
    datahub_type = "DATA_SCHEMA"
    options_type = ExtraColumnsOptions
    assertion_name = "no_extra_columns"
    columns = "none"
    scan = "schema"

    def datahub_shape(self, rule: Rule) -> Shape:
        if allows_no_offence(rule) and rule.valid_values:
            declared = Param(json.dumps(list(rule.valid_values), default=str), "SET")
            return Shape(SCHEMA, "COLUMNS", "IN", declared, on_metric=False)
        return metric_shape(rule, SCHEMA, NATIVE)

    def datahub_native(self, rule: Rule) -> NativeAssertion | None:
        # DATA_SCHEMA: no field but the declared ones (the dataset's fields a SUBSET of them)
        if not allows_no_offence(rule) or not rule.valid_values:
            return None
        return ExpectedSchema(tuple(FieldSpec(str(c)) for c in rule.valid_values), "SUBSET")
