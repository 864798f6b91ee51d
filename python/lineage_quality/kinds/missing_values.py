"""missingValues: rows where the column is null or one of `missing_values`."""

from __future__ import annotations

from types import MappingProxyType

import attrs

from lineage_quality.kinds.datahub_mapping import counted_shape, not_null
from lineage_quality.rules.model import BuiltInOptions, Kind, Rule, optional_tuple
from lineage_quality.values.datahub_shape import COLUMN, NativeAssertion, Shape
from lineage_quality.values.metric import Measure, Metric


@attrs.frozen
class MissingValuesOptions(BuiltInOptions):
    """The values that count as missing besides null."""

    missing_values: tuple[object, ...] | None = attrs.field(default=None, converter=optional_tuple)




class MissingValues(Kind):
    value = "missingValues"
    # one valid rule of the kind (Rule(...) keywords; mustBe 0 unless given) and its DataHub type
    sample = MappingProxyType({"columns": ("status",), "missing_values": ("", "n/a")})
    datahub_type = "CUSTOM"
    options_type = MissingValuesOptions
    assertion_name = "not_missing"
    counts_rows = True
    priority = 1
    odcs_metrics = ("missingValues",)
    odcs_verbs = (
        ("noMissingValues", "mustBe", 0),
        ("hasNoMissingValues", "mustBe", 0),
    )

    def metric(self, rule: Rule, column: str, ctype: str) -> Metric:
        values = tuple(v for v in (rule.missing_values or ()) if v is not None)
        return Metric(Measure.MISSING, column, values=values)

    def datahub_shape(self, rule: Rule) -> Shape | None:
        if rule.missing_values:
            return None  # the count, with a native aggregation
        return counted_shape(rule, COLUMN, "NULL_COUNT", "NULL_PROPORTION")

    def datahub_native(self, rule: Rule) -> NativeAssertion | None:
        # nulls only: as nullValues; with listed values (null or one of them): CUSTOM
        return None if rule.missing_values else not_null(rule)
