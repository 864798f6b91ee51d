import logging

import pytest

from lineage_quality.contracts.schema_json import parse_schema_json
from lineage_quality.errors import ContractError
from lineage_quality.kinds import RuleKind


def test_decomposition_defaults_and_dependencies(caplog: pytest.LogCaptureFixture) -> None:
    text = """{
  "table": "users",
  "rules": [
    {"field": "id", "type": "integer", "required": true, "unique": true},
    {"field": "age", "type": "integer", "min": 0, "max": 120},
    {"field": "status", "enum": ["NEW", "PAID"], "severity": "high", "action": "block"},
    {"field": "email", "type": "string", "regex": "^.+@.+$", "max_length": 255},
    {"field": "day", "type": "string", "date_format": "%Y-%m-%d"},
    {"field": "price", "type": "float", "precision": 10, "scale": 2}
  ]
}"""
    with caplog.at_level(logging.WARNING):
        bound = parse_schema_json(text, "users.json")
    assert "`table` is ignored" in caplog.text
    rules = {r.id: r for r in bound.rules}
    assert list(rules) == [
        "schema_id",
        "not_null_id",
        "unique_id",
        "schema_age",
        "range_age",
        "schema_status",
        "enum_status",
        "schema_email",
        "regex_email",
        "max_length_email",
        "schema_day",
        "date_format_day",
        "schema_price",
    ]
    assert rules["schema_status"].expected_type is None  # no type: existence only
    assert rules["range_age"].min_value == 0 and rules["range_age"].max_value == 120
    assert rules["range_age"].depends_on == ("schema_age",)
    assert (rules["enum_status"].severity, rules["enum_status"].action) == ("HIGH", "BLOCK")
    defaults = rules["not_null_id"]
    assert (defaults.severity, defaults.action, defaults.category) == (
        "MEDIUM",
        "ALERT",
        "COMPLETENESS",
    )
    assert rules["unique_id"].category == "UNIQUENESS"
    assert rules["schema_id"].category == "SCHEMA"
    assert rules["regex_email"].category == "VALIDITY"
    assert rules["max_length_email"].kind is RuleKind.LENGTH_RANGE
    assert (rules["schema_price"].precision, rules["schema_price"].scale) == (10, 2)
    assert rules["schema_id"].case_sensitive  # case_insensitive defaults to false


def test_zero_is_a_bound_and_strict_mode_adds_a_rule() -> None:
    bound = parse_schema_json(
        '{"strict_mode": true, "case_insensitive": true, "rules": [{"field": "n", "max": 0}]}',
        "x.json",
    )
    rules = {r.id: r for r in bound.rules}
    assert rules["range_n"].max_value == 0 and rules["range_n"].min_value is None
    extra = rules["schema_extra_columns"]
    assert extra.kind is RuleKind.EXTRA_COLUMNS and extra.valid_values == ("n",)
    assert not extra.case_sensitive


@pytest.mark.parametrize(
    ("text", "message", "where"),
    [
        ('{"rules": [', "invalid JSON", "line 1, column 12"),
        ('{"rules": []}', "non-empty array", "rules"),
        ('{"rules": [{"type": "string"}]}', "missing `field`", "rules[0]"),
        ('{"rules": [{"field": "a", "type": "strin"}]}', "unknown type 'strin'", "rules[0].type"),
        (
            '{"rules": [{"field": "a", "min": 5, "max": 1}]}',
            "min 5 is greater than max 1",
            "rules[0].min",
        ),
        ('{"rules": [{"field": "a", "min": "0"}]}', "min must be a number", "rules[0].min"),
        (
            '{"rules": [{"field": "a", "enum": []}]}',
            "enum must be a non-empty array",
            "rules[0].enum",
        ),
        (
            '{"rules": [{"field": "a", "date_format": "%Q"}]}',
            "%Q is not supported",
            "rules[0].date_format",
        ),
        (
            '{"rules": [{"field": "a", "colour": 1}]}',
            "unsupported key(s): colour",
            "rules[0].colour",
        ),
        ('{"rulez": []}', "unsupported key(s): rulez", "rulez"),
        (
            '{"rules": [{"field": "a", "type": "integer", "max_length": 3}]}',
            "max_length applies",
            "rules[0].max_length",
        ),
    ],
)
def test_invalid_files_name_the_place(text: str, message: str, where: str) -> None:
    with pytest.raises(ContractError) as info:
        parse_schema_json(text, "bad.json")
    assert message in info.value.detail
    assert info.value.where is not None and info.value.where.startswith(where)


def test_item_errors_carry_the_line() -> None:
    text = '{\n  "rules": [\n    {"field": "a"},\n    {"field": "b", "type": "blob"}\n  ]\n}'
    with pytest.raises(ContractError) as info:
        parse_schema_json(text, "bad.json")
    assert info.value.where == "rules[1].type (line 4)"


# -- seed 002's rule model and its examples as written (issue 41) -----------------------------

MODEL = """{
  "id": "6f1c2b0e-0000-4000-8000-000000000001",
  "name": "enum_status",
  "description": "orders have a known status",
  "type": "ENUM",
  "target": {
    "entities": [
      { "database": "sales", "table": "orders", "column": "status", "connection_id": null,
        "alias": null }
    ],
    "relationship_type": "single_table",
    "join_conditions": []
  },
  "parameters": { "allowed_values": ["NEW", "PAID"], "filter_condition": "deleted_at IS NULL" },
  "cross_db_config": null,
  "threshold": 99.5,
  "category": "VALIDITY",
  "severity": "HIGH",
  "action": "BLOCK",
  "is_active": false,
  "tags": ["orders", "sla"],
  "template_id": "6f1c2b0e-0000-4000-8000-000000000002",
  "validation_error": null
}"""


def test_every_field_of_the_rule_model_is_read_with_its_meaning() -> None:
    bound = parse_schema_json(MODEL, "orders_rules.json")
    (rule,) = bound.rules
    assert rule.id == "6f1c2b0e-0000-4000-8000-000000000001"
    assert (rule.name, rule.description) == ("enum_status", "orders have a known status")
    assert rule.kind is RuleKind.INVALID_VALUES and rule.valid_values == ("NEW", "PAID")
    assert rule.columns == ("status",)
    assert (rule.severity, rule.action, rule.category) == ("HIGH", "BLOCK", "VALIDITY")
    assert rule.active is False
    assert rule.filter_condition == "deleted_at IS NULL"
    # threshold: the pass rate; at most 0.5 % of the rows may fail
    assert rule.unit.value == "percent"
    assert rule.threshold.describe() == "<= 0.5"
    params = rule.params()
    assert params["tags"] == ["orders", "sla"]
    assert params["target"] == {"database": "sales", "table": "orders", "column": "status"}
    assert params["filterCondition"] == "deleted_at IS NULL"
    assert params["isActive"] is False
    # serve binds the file by the target's table
    assert bound.tables == ("sales.orders",)


def test_a_schema_rule_model_checks_each_column_and_links_its_dependents() -> None:
    text = """{"rules": [
      {"name": "schema_users", "type": "SCHEMA",
       "target": {"entities": [{"database": "sales", "table": "users", "column": null}]},
       "parameters": {"columns": {"email": {"expected_type": "STRING", "max_length": 255},
                                  "price": {"expected_type": "FLOAT", "precision": 10,
                                            "scale": 2}},
                      "strict_mode": true}},
      {"name": "not_null_email", "type": "NOT_NULL",
       "target": {"entities": [{"database": "sales", "table": "users", "column": "email"}]},
       "parameters": {}}
    ]}"""
    rules = {r.id: r for r in parse_schema_json(text, "users.json").rules}
    assert list(rules) == [
        "schema_users.email",
        "schema_users.email.max_length",
        "schema_users.price",
        "schema_users.strict_mode",
        "not_null_email",
    ]
    assert rules["schema_users.email"].max_length == 255
    assert rules["schema_users.price"].precision == 10
    assert rules["schema_users.strict_mode"].valid_values == ("email", "price")
    assert rules["not_null_email"].depends_on == ("schema_users.email",)
    assert rules["not_null_email"].action == "LOG"  # the rule model's default action


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (('"name": "enum_status"', '"name": ""'), "name is required"),
        (('"type": "ENUM"', '"type": "ENUMS"'), "type must be one of SCHEMA"),
        (('"threshold": 99.5', '"threshold": 101'), "threshold must be a number from 0.0"),
        (('"is_active": false', '"is_active": "no"'), "is_active must be true or false"),
        (('"cross_db_config": null', '"cross_db_config": {}'), "cross_db_config is reserved"),
        (('"alias": null', '"alias": "o"'), "alias is reserved: null"),
        (('"join_conditions": []', '"join_conditions": [1]'), "join_conditions is reserved"),
        (('"tags": ["orders", "sla"]', '"tags": "orders"'), "tags must be an array"),
        (('"allowed_values": ["NEW", "PAID"]', '"allowed_values": []'), "non-empty array"),
        (('"severity": "HIGH"', '"severity": "URGENT"'), "severity must be one of LOW"),
        (('"template_id"', '"templateId"'), "unsupported key(s): templateId"),
        (('"filter_condition": "deleted_at IS NULL"', '"filter": 1'), "takes no parameter"),
    ],
)
def test_rule_model_errors_name_the_field(change: tuple[str, str], message: str) -> None:
    with pytest.raises(ContractError) as info:
        parse_schema_json(MODEL.replace(*change), "bad.json")
    assert message in info.value.detail
    assert info.value.where is not None and info.value.where.startswith("rules[0]")


def test_a_regex_that_does_not_compile_is_a_bad_rules_file_naming_the_rule() -> None:
    with pytest.raises(ContractError) as info:
        parse_schema_json('{"rules": [{"field": "code", "regex": "(unclosed"}]}', "r.json")
    assert "rule regex_code: pattern '(unclosed' does not compile" in info.value.detail
    assert info.value.where == "rules[0].regex (line 1)"
    model = (
        '{"name": "code_format", "type": "REGEX", "parameters": {"pattern": "[a-"},'
        ' "target": {"entities": [{"database": "d", "table": "t", "column": "code"}]}}'
    )
    with pytest.raises(ContractError) as info:
        parse_schema_json(model, "r.json")
    assert "rule 'code_format': pattern '[a-' does not compile" in info.value.detail


def test_one_field_item_is_a_rules_file_and_binds_by_name() -> None:
    bound = parse_schema_json('{"field": "name", "type": "string", "max_length": 100}', "u.json")
    assert [r.id for r in bound.rules] == ["schema_name", "max_length_name"]
    assert bound.rules[0].max_length == 100  # compared with a declared varchar length
    assert (bound.patterns, bound.tables) == ((), ("u",))


def test_the_engine_dictionary_template_is_not_json() -> None:
    text = '{\n  "parameters": { /* see canonical keys above */ }\n}'
    with pytest.raises(ContractError) as info:
        parse_schema_json(text, "engine.json")
    assert "invalid JSON" in info.value.detail
    assert info.value.where == "line 2, column 19"
