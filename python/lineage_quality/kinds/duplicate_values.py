"""duplicateValues: extra occurrences of a non-null key (`columns`: one, or a compound key),
counted in its own grouped pass (engine/key_sets.py)."""

from __future__ import annotations

from lineage_quality.rules.model import Kind, Rule


class DuplicateValues(Kind):
    value = "duplicateValues"
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
