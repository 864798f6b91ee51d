"""freshness: rows younger than `min_age_seconds` or older than `max_age_seconds`."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import attrs

from lineage_quality.engine.types import is_temporal
from lineage_quality.kinds.datahub_mapping import allows_no_offence
from lineage_quality.rules.model import BuiltInOptions, Kind, Rule
from lineage_quality.rules.threshold import Operator, Threshold
from lineage_quality.values.datahub_shape import FreshnessWindow, NativeAssertion
from lineage_quality.values.metric import Measure, Metric


@attrs.frozen
class FreshnessOptions(BuiltInOptions):
    """How young (`min_age_seconds`) or old (`max_age_seconds`) a row's time may be."""

    min_age_seconds: float | None = None
    max_age_seconds: float | None = None


class Freshness(Kind):
    value = "freshness"
    # one valid rule of the kind (Rule(...) keywords; mustBe 0 unless given) and its DataHub type
    sample = MappingProxyType({"columns": ("updated_at",), "max_age_seconds": 86400})
    datahub_type = "FRESHNESS"
    options_type = FreshnessOptions
    assertion_name = "freshness"
    counts_rows = True
    odcs_verbs = (
        ("isOlderThan", "mustBe", 0),
        ("isNotOlderThan", "mustBe", 0),
    )

    def validate(self, rule: Rule) -> None:
        if rule.min_age_seconds is None and rule.max_age_seconds is None:
            raise ValueError("freshness needs a minimum or maximum age")

    def odcs(
        self, name: str, arguments: Mapping[str, Any]
    ) -> tuple[Threshold | None, dict[str, Any]]:
        key = "min_age_seconds" if name == "isOlderThan" else "max_age_seconds"
        return Threshold(Operator.MUST_BE, 0), {key: _age(arguments, name)}

    def metric(self, rule: Rule, column: str, ctype: str) -> Metric | str:
        if not is_temporal(ctype):
            return f"freshness needs a date or timestamp column; {column} is {ctype}"
        if rule.min_age_seconds is not None:
            return Metric(Measure.TOO_NEW, column, low=rule.min_age_seconds)
        return Metric(Measure.TOO_OLD, column, low=rule.max_age_seconds)

    def datahub_native(self, rule: Rule) -> NativeAssertion | None:
        # no row older than N seconds: FRESHNESS, fixed interval N (the column and the per-row
        # reading are in the description); rows too new, or some stale rows allowed: CUSTOM
        age = rule.max_age_seconds
        if age is None or rule.min_age_seconds is not None or not allows_no_offence(rule):
            return None
        return FreshnessWindow(max(1, round(age)))


def _age(arguments: Mapping[str, Any], name: str) -> float:
    days, seconds = arguments.get("days"), arguments.get("seconds")
    total = 0.0
    for value, factor in ((days, 86400.0), (seconds, 1.0)):
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise ValueError(f"{name}: days/seconds must be non-negative numbers")
        total += float(value) * factor
    if days is None and seconds is None:
        raise ValueError(f"{name} needs arguments.days and/or arguments.seconds")
    return total
