"""duplicateValues: extra occurrences of a non-null key (`columns`: one, or a compound key),
counted in its own grouped pass (engine/key_sets.py)."""

from __future__ import annotations

from types import MappingProxyType

from lineage_quality.kinds.datahub_mapping import field_spec
from lineage_quality.rules.model import Kind, Rule
from lineage_quality.rules.threshold import Operator
from lineage_quality.values.datahub_shape import Bounds, FieldMetric, NativeAssertion, Param


class DuplicateValues(Kind):
    value = "duplicateValues"
    # one valid rule of the kind (Rule(...) keywords; mustBe 0 unless given) and its DataHub type
    sample = MappingProxyType({"columns": ("order_id",)})
    datahub_type = "FIELD"
    assertion_name = "unique"
    counts_rows = True
    scan = "grouped"
    odcs_metrics = ("duplicateValues", "duplicateCount")
    odcs_verbs = (
        ("isUnique", "mustBe", 0),
        ("isCompoundUnique", "mustBe", 0),
    )

    def assertion(self, rule: Rule) -> str:
        return "unique_combination" if len(rule.columns) > 1 else "unique"

    def datahub_native(self, rule: Rule) -> NativeAssertion | None:
        # no duplicate in one column: FIELD_METRIC UNIQUE_PERCENTAGE == 100, as DataHub's own
        # ODCS source has it; a compound key or some duplicates allowed: CUSTOM
        t = rule.threshold
        if len(rule.columns) != 1 or t.operator is not Operator.MUST_BE or t.value != 0:
            return None
        return FieldMetric(field_spec(rule), "UNIQUE_PERCENTAGE", Bounds("EQUAL_TO", Param("100")))
