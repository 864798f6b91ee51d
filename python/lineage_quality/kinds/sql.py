"""sql: the single number a read-only `query` returns (engine/sql.py runs it, sandboxed)."""

from __future__ import annotations

from types import MappingProxyType

import attrs

from lineage_quality.kinds.datahub_mapping import bounds, change_bounds
from lineage_quality.rules.model import BuiltInOptions, Kind, Rule
from lineage_quality.values.datahub_shape import NativeAssertion, SqlMetric


@attrs.frozen
class SqlOptions(BuiltInOptions):
    """The read-only query whose single number is judged."""

    query: str | None = None


class Sql(Kind):
    value = "sql"
    # one valid rule of the kind (Rule(...) keywords; mustBe 0 unless given) and its DataHub type
    sample = MappingProxyType({"query": "SELECT COUNT(*) FROM orders WHERE amount < 0"})
    datahub_type = "SQL"
    options_type = SqlOptions
    assertion_name = "custom_sql"
    columns = "optional"
    scan = "sql"
    needs_operator = True

    def validate(self, rule: Rule) -> None:
        if not (rule.query or "").strip():
            raise ValueError("a sql rule needs a query")

    def datahub_native(self, rule: Rule) -> NativeAssertion | None:
        found = bounds(rule.threshold, numeric=True)  # SQL: METRIC
        return None if found is None else SqlMetric(rule.query or "", found)

    def datahub_native_history(self, rule: Rule) -> NativeAssertion | None:
        change = change_bounds(rule)  # SQL: METRIC_CHANGE
        if change is None:
            return None
        return SqlMetric(rule.query or "", change[1], change=change[0])
