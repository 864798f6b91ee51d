"""Issue 41: seed 002's rule-model fields travel to DataHub: id, name, description, tags and the
declared target, in the assertion's native parameters and description."""

from __future__ import annotations

import json

from samples import DATASET_URN

from lineage_quality.contracts.schema_json import parse_schema_json
from lineage_quality.datahub.assertion_info import assertion_info

MODEL = """{"id": "r-1", "name": "not_null_email", "description": "email is required",
 "type": "NOT_NULL", "tags": ["pii"],
 "target": {"entities": [{"database": "sales", "table": "users", "column": "email"}]},
 "parameters": {"filter_condition": "deleted_at IS NULL"}}"""


def test_rule_model_fields_reach_datahub() -> None:
    (rule,) = parse_schema_json(MODEL, "users.json").rules
    info = assertion_info(rule, DATASET_URN, contract="users")
    assert info.description is not None and info.description.startswith("email is required")
    assert info.customProperties["ruleId"] == "r-1"
    # a native FIELD assertion (issue 40) has no native parameters: the rule model's fields are
    # custom properties, and the filter is the field assertion's own SQL filter
    props = info.customProperties
    assert json.loads(props["tags"]) == ["pii"]
    assert json.loads(props["target"]) == {
        "database": "sales",
        "table": "users",
        "column": "email",
    }
    assert props["filterCondition"] == "deleted_at IS NULL"
    assert info.type == "FIELD" and info.fieldAssertion is not None
    assert info.fieldAssertion.filter is not None
    assert info.fieldAssertion.filter.sql == "deleted_at IS NULL"


def test_a_logical_dataset_has_the_logical_platform() -> None:
    """Seed 000: a dataset with no platform of its own is on the `logical` platform."""
    from lineage_quality.contracts.shacl import ShaclOptions, parse_shacl
    from lineage_quality.datahub.naming import platform_and_name

    text = "ex:TradeDataset a dcat:Dataset ;\n    sh:property [ sh:path ex:tradeId ] .\n"
    (bound,) = parse_shacl(text, "trades.ttl", ShaclOptions())
    (pattern,) = bound.patterns
    assert platform_and_name(pattern.namespace, pattern.name) == ("logical", "TradeDataset")
