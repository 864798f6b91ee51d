"""statistic: avg | sum | stddev | median | min | max of a numeric column, judged as a value."""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import attrs

from lineage_quality.engine.plan import stat_metric
from lineage_quality.engine.types import is_numeric
from lineage_quality.kinds.datahub_mapping import bounds, field_spec, metric_shape
from lineage_quality.rules.model import STATISTICS, BuiltInOptions, Kind, Rule
from lineage_quality.rules.threshold import Operator, Threshold
from lineage_quality.values.datahub_shape import COLUMN, NATIVE, FieldMetric, NativeAssertion, Shape
from lineage_quality.values.metric import Metric

# The predefined-rules RFC's verbs: hasAvgGreaterThan, hasMaxLessOrEqualTo...
_VERB = re.compile(
    r"^has(Avg|Sum|Stddev|Median|Min|Max)"
    r"(GreaterThan|LessThan|EqualTo|NotEqualTo|GreaterOrEqualTo|LessOrEqualTo)$"
)
_VERB_OPERATOR = {
    "GreaterThan": Operator.GREATER_THAN,
    "LessThan": Operator.LESS_THAN,
    "EqualTo": Operator.MUST_BE,
    "NotEqualTo": Operator.MUST_NOT_BE,
    "GreaterOrEqualTo": Operator.GREATER_OR_EQUAL,
    "LessOrEqualTo": Operator.LESS_OR_EQUAL,
}
_AGGREGATION = {
    "avg": "MEAN",
    "sum": "SUM",
    "stddev": "STDDEV",
    "median": "MEDIAN",
    "min": "MIN",
    "max": "MAX",
}
# DataHub's FieldMetricType of each statistic (it has no SUM: a sum is CUSTOM)
_FIELD_METRIC = {"avg": "MEAN", "stddev": "STDDEV", "median": "MEDIAN", "min": "MIN", "max": "MAX"}


@attrs.frozen
class StatisticOptions(BuiltInOptions):
    """Which statistic of the column: avg, sum, stddev, median, min, max."""

    statistic: str | None = None


class Statistic(Kind):
    value = "statistic"
    # one valid rule of the kind (Rule(...) keywords; mustBe 0 unless given) and its DataHub type
    sample = MappingProxyType(
        {
            "columns": ("amount",),
            "statistic": "avg",
            "threshold": Threshold(Operator.GREATER_THAN, 0),
        }
    )
    datahub_type = "FIELD"
    options_type = StatisticOptions
    assertion_name = "column_statistic"
    needs_operator = True
    odcs_metrics = STATISTICS

    def validate(self, rule: Rule) -> None:
        if rule.statistic not in STATISTICS:
            raise ValueError(f"statistic must be one of {', '.join(STATISTICS)}")

    def assertion(self, rule: Rule) -> str:
        return f"column_{rule.statistic}"

    def reads_odcs(self, name: str) -> bool:
        return name in STATISTICS or _VERB.match(name) is not None

    def odcs(
        self, name: str, arguments: Mapping[str, Any]
    ) -> tuple[Threshold | None, dict[str, Any]]:
        if name in STATISTICS:
            return None, {"statistic": name}
        verb = _VERB.match(name)
        assert verb is not None
        value = arguments.get("value")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{name} needs a numeric arguments.value")
        threshold = Threshold(_VERB_OPERATOR[verb.group(2)], value)
        return threshold, {"statistic": verb.group(1).lower()}

    def metric(self, rule: Rule, column: str, ctype: str) -> Metric | str:
        if not is_numeric(ctype):
            return f"{rule.assertion} needs a numeric column; {column} is {ctype}"
        return stat_metric(column, ctype, rule.statistic or "")

    def datahub_shape(self, rule: Rule) -> Shape:
        return metric_shape(rule, COLUMN, _AGGREGATION.get(rule.statistic or "", NATIVE))

    def datahub_native(self, rule: Rule) -> NativeAssertion | None:
        metric = _FIELD_METRIC.get(rule.statistic or "")
        found = bounds(rule.threshold)
        if metric is None or found is None:
            return None
        return FieldMetric(field_spec(rule, "NUMBER"), metric, found)  # FIELD: FIELD_METRIC
