"""rowCount: the dataset's rows (slot 0 of every plan: every verdict needs the row count)."""

from __future__ import annotations

from types import MappingProxyType

from lineage_quality.kinds.datahub_mapping import bounds, change_bounds, metric_shape
from lineage_quality.rules.history import Compare
from lineage_quality.rules.model import Kind, Rule
from lineage_quality.rules.threshold import Operator, Threshold
from lineage_quality.values.datahub_shape import (
    ROWS,
    FreshnessWindow,
    NativeAssertion,
    Shape,
    Volume,
)


class RowCount(Kind):
    value = "rowCount"
    # one valid rule of the kind (Rule(...) keywords; mustBe 0 unless given) and its DataHub type
    sample = MappingProxyType({"threshold": Threshold(Operator.BETWEEN, 1, 1000)})
    datahub_type = "VOLUME"
    assertion_name = "row_count"
    columns = "none"
    scan = "rows"
    implied = ("mustBeGreaterThan", 0)  # at least one row
    odcs_metrics = ("rowCount",)
    odcs_verbs = (
        ("hasRowCountGreaterThan", "mustBeGreaterThan", "value"),
        ("hasRowCountLessThan", "mustBeLessThan", "value"),
    )

    def datahub_shape(self, rule: Rule) -> Shape:
        return metric_shape(rule, ROWS, "ROW_COUNT")

    def datahub_native(self, rule: Rule) -> NativeAssertion | None:
        found = bounds(rule.threshold, numeric=True)  # VOLUME ROW_COUNT_TOTAL
        return None if found is None else Volume(found)

    def datahub_native_history(self, rule: Rule) -> NativeAssertion | None:
        change = change_bounds(rule)  # VOLUME ROW_COUNT_CHANGE
        if change is not None:
            return Volume(change[1], change=change[0])
        t = rule.threshold  # no new rows for at most N seconds: FRESHNESS, fixed interval N
        history = rule.history
        if (
            history is not None
            and history.compare is Compare.FRESHNESS
            and t.operator is Operator.LESS_OR_EQUAL
            and float(t.value).is_integer()
        ):
            return FreshnessWindow(int(t.value))
        return None
