"""dateFormat: non-null rows that do not parse with `date_format`."""

from __future__ import annotations

from types import MappingProxyType

import attrs

from lineage_quality.engine.dates import java_pattern
from lineage_quality.engine.types import spark_type
from lineage_quality.rules.model import BuiltInOptions, Kind, Rule
from lineage_quality.values.metric import Measure, Metric


@attrs.frozen
class DateFormatOptions(BuiltInOptions):
    """The format a string value must parse with (Spark's datetime pattern)."""

    date_format: str | None = None


class DateFormat(Kind):
    value = "dateFormat"
    # one valid rule of the kind (Rule(...) keywords; mustBe 0 unless given) and its DataHub type
    sample = MappingProxyType({"columns": ("day",), "date_format": "yyyy-MM-dd"})
    datahub_type = "CUSTOM"
    options_type = DateFormatOptions
    assertion_name = "date_format"
    counts_rows = True

    def validate(self, rule: Rule) -> None:
        if not rule.date_format:
            raise ValueError("dateFormat needs a format")

    def metric(self, rule: Rule, column: str, ctype: str) -> Metric | str:
        family = spark_type(ctype).family
        if family not in ("string", "date", "timestamp"):
            return f"dateFormat needs a string column; {column} is {ctype}"
        try:
            pattern = java_pattern(rule.date_format or "")
        except ValueError as exc:
            return str(exc)
        return Metric(Measure.BAD_DATE, column, arg=pattern, typed=family != "string")
