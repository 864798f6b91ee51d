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
