"""The facet's `severity` is the OpenLineage spec's `error` or `warn` whatever word the contract
used (issue 49, item 10): the schema-rules JSON's CRITICAL and HIGH are `error`, its MEDIUM (the
default) and LOW are `warn` (they were lower-cased into the facet as `medium`, `low`); ODCS's
`info` and `warning`, and a word of no format, `warn`. `properties.severity` keeps the word as
written, and the metrics label is the facet's."""

from __future__ import annotations

import json

import pytest

from lineage_quality.contracts.schema_json import parse_schema_json
from lineage_quality.facets.assertions import assertion_json, facet_severity, facet_severity_of
from lineage_quality.results import RuleResult, Status


@pytest.mark.parametrize(
    ("word", "facet"),
    [
        ("CRITICAL", "error"), ("HIGH", "error"), ("error", "error"), ("blocker", "error"),
        ("MEDIUM", "warn"), ("LOW", "warn"), ("info", "warn"), ("warning", "warn"),
        ("warn", "warn"), ("minor", "warn"), (None, None), ("  ", None),
    ],
)  # fmt: skip
def test_each_word_is_error_or_warn(word: str | None, facet: str | None) -> None:
    assert facet_severity_of(word) == facet


def test_the_schema_rules_json_severities_reach_the_facet_as_error_or_warn() -> None:
    rules = [
        {"field": "id", "required": True, "severity": "CRITICAL"},
        {"field": "name", "required": True},  # MEDIUM, the format's default
        {"field": "age", "required": True, "severity": "LOW"},
        {"field": "email", "required": True, "severity": "HIGH"},
    ]
    bound = parse_schema_json(json.dumps({"rules": rules}), "people.json")
    seen = {}
    for rule in bound.rules:
        if rule.kind.value != "nullValues":
            continue
        result = RuleResult(rule=rule, status=Status.FAILED, actual=1, failing_rows=1)
        facet = assertion_json(result)
        seen[rule.columns[0]] = (facet["severity"], facet["properties"]["severity"])
        assert facet_severity(result) == facet["severity"]  # the metrics label
    assert seen == {
        "id": ("error", "CRITICAL"),
        "name": ("warn", "MEDIUM"),
        "age": ("warn", "LOW"),
        "email": ("error", "HIGH"),
    }
