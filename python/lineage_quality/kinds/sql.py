"""sql: the single number a read-only `query` returns (engine/sql.py runs it, sandboxed)."""

from __future__ import annotations

from lineage_quality.rules.model import Kind, Rule


class Sql(Kind):
    value = "sql"
    assertion_name = "custom_sql"
    columns = "optional"
    scan = "sql"
    needs_operator = True

    def validate(self, rule: Rule) -> None:
        if not (rule.query or "").strip():
            raise ValueError("a sql rule needs a query")
