"""Every measuring rule can compare over time, in ODCS and in the JSON rules format (issue 42):
statistics, counts, percentages and `type: sql`; stddev and seasonal need no operator of their
own, change rules take the operator as the bounds of the change, a bad combination is refused
naming the entry; the facet and DataHub describe a band as a band."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from lineage_quality.contracts.odcs import parse_odcs
from lineage_quality.contracts.schema_json import parse_schema_json
from lineage_quality.datahub.assertion_info import describe
from lineage_quality.errors import ContractError
from lineage_quality.facets.assertions import properties
from lineage_quality.kinds import RuleKind
from lineage_quality.kinds.datahub_mapping import shape
from lineage_quality.results import RuleResult, Status
from lineage_quality.rules import Operator, Threshold, Unit

HEAD = """apiVersion: v3.0.2
kind: DataContract
id: hist
version: 1.0.0
status: active
schema:
  - name: orders
    quality:
      - type: sql
        name: revenue_usual
        query: SELECT SUM(amount) FROM {object}
        customProperties:
          - property: lineageQuality.history
            value: {compare: stddev, runs: 14}
      - type: sql
        name: revenue_vs_yesterday
        query: SELECT SUM(amount) FROM {object}
        mustBeBetween: [0.5, 2]
        customProperties:
          - property: lineageQuality.history
            value: {compare: relativeChange}
    properties:
      - name: amount
        quality:
"""
STATISTICS = ("avg", "sum", "median", "min", "max", "stddev")


def _entry(metric: str, compare: str, extra: str = "") -> str:
    return (
        f"          - metric: {metric}\n{extra}"
        "            customProperties:\n"
        "              - property: lineageQuality.history\n"
        f"                value: {{compare: {compare}}}\n"
    )


def test_odcs_statistics_counts_percentages_and_sql_compare_over_time() -> None:
    text = HEAD
    for stat in STATISTICS:
        text += _entry(stat, "stddev") + _entry(stat, "seasonal")
        text += _entry(stat, "absoluteChange", "            mustBeBetween: [-10, 10]\n")
    text += _entry("nullValues", "stddev", "            unit: percent\n")
    text += _entry("invalidValues", "stddev", "            arguments: {validValues: [1, 2]}\n")
    text += _entry("duplicateValues", "seasonal", "            unit: percent\n")
    (bound,) = parse_odcs(text, "hist.yaml")
    rules = [r for r in bound.rules if r.history is not None]
    assert len(rules) == 2 + 3 * len(STATISTICS) + 3
    sql_band, sql_change = rules[:2]
    assert sql_band.kind is RuleKind.SQL and sql_band.history is not None
    assert sql_change.threshold == Threshold(Operator.BETWEEN, 0.5, 2)
    assert {r.statistic for r in rules if r.kind is RuleKind.STATISTIC} == set(STATISTICS)
    nulls = next(r for r in rules if r.kind is RuleKind.NULL_VALUES)
    assert nulls.unit is Unit.PERCENT

    # a band is described as a band, not as the placeholder threshold
    avg = next(r for r in rules if r.statistic == "avg")
    assert properties(RuleResult(rule=avg, status=Status.PASSED, actual=1.0))["threshold"] == {
        "band": "within 3 sd of the last 7 runs"
    }
    # issue 40: DataHub's description names the window and the runs the band needs, and a band
    # keeps the metric's aggregation with a native operator (the band moves)
    assert describe(avg) == (
        "amount: statistic avg within 3 sd of the last 7 runs (from 7 earlier runs)"
    )
    assert (shape(avg).aggregation, shape(avg).operator) == ("MEAN", "_NATIVE_")
    assert describe(sql_change).endswith("ratio to the previous run between 0.5 and 2")


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (_entry("avg", "relativeChange"), "a relativeChange history rule needs an operator"),
        (
            _entry("avg", "stddev", "            mustBeGreaterThan: 0\n"),
            "a stddev history rule takes its band from k, not from mustBeGreaterThan",
        ),
        (_entry("avg", "stddev", "            unit: percent\n"), "cannot use unit: percent"),
        (
            _entry("hasNoNullValues", "relativeChange"),
            "a relativeChange history rule needs an operator",
        ),
    ],
)
def test_odcs_bad_combinations_are_refused_naming_the_entry(entry: str, message: str) -> None:
    with pytest.raises(ContractError, match=re.escape(message)) as caught:
        parse_odcs(HEAD + entry, "hist.yaml")
    assert "schema[0].properties[0].quality[0]" in str(caught.value)


def test_json_rules_every_measuring_metric() -> None:
    history = [
        {"metric": "nullValues", "field": "email", "unit": "percent", "compare": "stddev"},
        {"metric": "missingValues", "field": "email", "missing": ["", "n/a"],
         "compare": "seasonal"},
        {"metric": "invalidValues", "field": "status", "enum": ["a", "b"], "compare": "stddev"},
        {"metric": "invalidValues", "field": "code", "regex": "^[A-Z]+$",
         "compare": "relativeChange", "max": 2},
        {"metric": "duplicateValues", "fields": ["a", "b"], "compare": "stddev",
         "baseline": "all"},
        {"metric": "sql", "query": "SELECT SUM(amount) FROM {dataset}", "compare": "stddev",
         "recoverAfter": 5},
        {"metric": "median", "field": "amount", "compare": "absoluteChange", "min": -5, "max": 5},
    ]  # fmt: skip
    doc = {"rules": [{"field": "id"}], "history": history}
    bound = parse_schema_json(json.dumps(doc), "h.json")
    rules = [r for r in bound.rules if r.history is not None]
    kinds = [r.kind for r in rules]
    assert kinds == [
        RuleKind.NULL_VALUES, RuleKind.MISSING_VALUES, RuleKind.INVALID_VALUES,
        RuleKind.INVALID_VALUES, RuleKind.DUPLICATE_VALUES, RuleKind.SQL, RuleKind.STATISTIC,
    ]  # fmt: skip
    assert rules[0].unit is Unit.PERCENT and rules[1].missing_values == ("", "n/a")
    assert rules[2].valid_values == ("a", "b") and rules[3].pattern == "^[A-Z]+$"
    assert rules[4].columns == ("a", "b") and rules[4].params()["history"]["baseline"] == "all"
    assert rules[5].query and rules[5].history is not None and rules[5].history.recover_after == 5
    assert rules[6].threshold == Threshold(Operator.BETWEEN, -5, 5)


@pytest.mark.parametrize(
    ("item", "where", "message"),
    [
        ({"metric": "sql", "compare": "stddev"}, "history[0].query", "needs a `query`"),
        ({"metric": "nullValues", "field": "e", "regex": "x", "compare": "stddev"},
         "history[0].regex", "`regex` does not apply"),
        ({"metric": "nullValues", "fields": ["a"], "compare": "stddev"},
         "history[0].fields", "`fields` is for duplicateValues"),
        ({"metric": "rowCount", "unit": "percent", "compare": "stddev"}, "history[0]",
         "cannot use unit: percent"),
        ({"metric": "avg", "field": "a", "unit": "bytes", "compare": "stddev"},
         "history[0].unit", "unit must be rows or percent"),
        ({"metric": "sql", "query": "SELECT 1", "field": "a", "compare": "stddev"},
         "history[0].field", "sql takes no field"),
        ({"metric": "avg", "field": "a", "compare": "stddev", "min": 1}, "history[0]",
         "takes `k`, not min/max"),
    ],
)  # fmt: skip
def test_json_bad_combinations_are_refused_naming_the_entry(
    item: dict[str, Any], where: str, message: str
) -> None:
    with pytest.raises(ContractError, match=re.escape(message)) as caught:
        parse_schema_json(json.dumps({"rules": [{"field": "id"}], "history": [item]}), "h.json")
    assert where in str(caught.value)
