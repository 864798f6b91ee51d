"""Seed 002's rule model (`RuleSchema`) in the schema-rules JSON format -> rules.

    {"name": "enum_status", "type": "ENUM",
     "target": {"entities": [{"database": "sales", "table": "orders", "column": "status",
                              "connection_id": null, "alias": null}],
                "relationship_type": "single_table", "join_conditions": []},
     "parameters": {"allowed_values": ["NEW", "PAID"], "filter_condition": "deleted_at IS NULL"},
     "threshold": 99.5, "category": "VALIDITY", "severity": "HIGH", "action": "ALERT",
     "is_active": true, "tags": ["orders"]}

Every field of the seed has its meaning: `is_active: false` is declared but not evaluated
(SKIPPED); `filter_condition` limits the rows counted (engine/filters.py); `threshold` is the pass
rate in percent the rule needs (99.5: at most 0.5 % of the rows may fail); `id`, `name`,
`description`, `tags` and the target travel to the facet and DataHub. The target's database and
table do not choose the data `check`/`schema` read (the command line does, as the seed says of
`table`); `serve` binds a file without `dataset` to them. A SCHEMA rule checks each declared
column (existence, type, declared length, precision and scale) and, with `strict_mode`, that no
other column exists. A REGEX that does not compile is refused here (exit 2), naming the rule.
`template_id`, `validation_error` and the reserved `cross_db_config`, `connection_id`, `alias`
are accepted (the reserved ones must be null).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from lineage_quality.engine.dates import java_pattern
from lineage_quality.errors import ContractError
from lineage_quality.kinds import Kind, RuleKind
from lineage_quality.rules import Operator, Rule, Threshold, Unit
from lineage_quality.rules.patterns import pattern_refusal

log = logging.getLogger(__name__)

RULE_TYPES = ("SCHEMA", "NOT_NULL", "UNIQUE", "RANGE", "ENUM", "REGEX", "DATE_FORMAT")
DATA_TYPES = ("STRING", "INTEGER", "FLOAT", "BOOLEAN", "DATE", "DATETIME")
SEVERITIES = ("LOW", "MEDIUM", "HIGH", "CRITICAL")
ACTIONS = ("LOG", "ALERT", "BLOCK", "QUARANTINE", "CORRECT", "IGNORE")
CATEGORIES = (
    "SCHEMA",
    "COMPLETENESS",
    "UNIQUENESS",
    "VALIDITY",
    "FORMAT",
    "ACCURACY",
    "CONSISTENCY",
)
CATEGORY = {
    "SCHEMA": "SCHEMA",
    "NOT_NULL": "COMPLETENESS",
    "UNIQUE": "UNIQUENESS",
    "RANGE": "VALIDITY",
    "ENUM": "VALIDITY",
    "REGEX": "VALIDITY",
    "DATE_FORMAT": "VALIDITY",
    "MAX_LENGTH": "VALIDITY",
}
_KEYS = frozenset(
    {"id", "name", "description", "type", "target", "parameters", "cross_db_config",
     "threshold", "category", "severity", "action", "is_active", "tags", "template_id",
     "validation_error"}
)  # fmt: skip
_TARGET_KEYS = frozenset({"entities", "relationship_type", "join_conditions"})
_FLAT_TARGET_KEYS = frozenset({"database", "table", "column"})  # the engine dictionary's target
_ENTITY_KEYS = frozenset({"database", "table", "column", "connection_id", "alias"})
_PARAMETERS = {
    "SCHEMA": frozenset({"columns", "strict_mode", "case_insensitive"}),
    "NOT_NULL": frozenset(),
    "UNIQUE": frozenset(),
    "RANGE": frozenset({"min_value", "max_value"}),
    "ENUM": frozenset({"allowed_values"}),
    "REGEX": frozenset({"pattern"}),
    "DATE_FORMAT": frozenset({"format"}),
}
_COLUMN_KEYS = frozenset({"expected_type", "max_length", "precision", "scale"})
_ZERO = Threshold(Operator.MUST_BE, 0)

Fail = Callable[[str, str | None], ContractError]


def is_rule_model(item: Mapping[str, Any]) -> bool:
    """A rule-model object (it has a `target` or `parameters`), not a field item (`field`)."""
    return "field" not in item and ("target" in item or "parameters" in item)


def model_rules(item: Mapping[str, Any], where: str, fail: Fail) -> list[Rule]:
    """The rules of one rule-model object; `fail(message, key)` makes the error naming it."""
    unknown = sorted(set(item) - _KEYS)
    if unknown:
        raise fail(f"unsupported key(s): {', '.join(unknown)}", unknown[0])
    name = item.get("name")
    if not isinstance(name, str) or not 1 <= len(name) <= 100:
        raise fail("name is required: a string of 1 to 100 characters", "name")
    described = item.get("description")
    if described is not None and (not isinstance(described, str) or len(described) > 500):
        raise fail("description must be a string of at most 500 characters", "description")
    rtype = item.get("type")
    if rtype not in RULE_TYPES:
        raise fail(f"type must be one of {', '.join(RULE_TYPES)}, not {rtype!r}", "type")
    rule_id = _text(item, "id", fail) or name
    for key in ("template_id", "validation_error"):
        _text(item, key, fail)
    if item.get("cross_db_config") is not None:
        raise fail("cross_db_config is reserved: null", "cross_db_config")
    severity = _choice(item, "severity", SEVERITIES, "MEDIUM", fail)
    action = _choice(item, "action", ACTIONS, "LOG", fail)
    category = _choice(item, "category", CATEGORIES, CATEGORY[rtype], fail)
    active = item.get("is_active", True)
    if not isinstance(active, bool):
        raise fail("is_active must be true or false", "is_active")
    tags = item.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise fail("tags must be an array of strings", "tags")
    target = _target(item.get("target"), fail)
    params = item.get("parameters")
    if not isinstance(params, dict):
        raise fail("parameters is required: an object (may be empty)", "parameters")
    unknown = sorted(set(params) - _PARAMETERS[rtype] - {"filter_condition"})
    if unknown:
        raise fail(f"{rtype} takes no parameter(s) {', '.join(unknown)}", "parameters")
    condition = params.get("filter_condition")
    if condition is not None and (not isinstance(condition, str) or not condition.strip()):
        raise fail("filter_condition must be a SQL predicate (a string)", "parameters")
    threshold = item.get("threshold")
    if threshold is not None and (
        isinstance(threshold, bool)
        or not isinstance(threshold, (int, float))
        or not 0 <= threshold <= 100
    ):
        raise fail("threshold must be a number from 0.0 to 100.0 (a pass rate)", "threshold")
    if rtype != "SCHEMA" and "column" not in target:
        raise fail(f"{rtype} needs target.entities[0].column", "target")
    if target:
        log.info(
            "%s: target %s.%s: check/schema read the dataset named on the command line; serve "
            "binds this file to that table (unless the file has a `dataset`)",
            where,
            target.get("database"),
            target.get("table"),
        )

    def make(kind: Kind, columns: tuple[str, ...], suffix: str = "", **kw: Any) -> Rule:
        if threshold is not None and not kind.counts_rows:
            log.warning("%s: threshold applies to row counts; %s ignores it", where, rtype)
        counted = threshold is not None and kind.counts_rows
        return Rule(
            id=rule_id + suffix,
            kind=kind,
            # the pass rate: at most (100 - threshold) % of the rows may fail
            threshold=(
                Threshold(Operator.LESS_OR_EQUAL, round(100 - threshold, 10))
                if counted and threshold is not None
                else _ZERO
            ),
            unit=Unit.PERCENT if counted else Unit.ROWS,
            columns=columns,
            name=name if not suffix else f"{name}{suffix}",
            description=described,
            severity=severity,
            action=action,
            origin="schema-json",
            constraint=rtype,
            category=category,
            active=active,
            filter_condition=condition,
            tags=tuple(tags),
            target=tuple(sorted(target.items())),
            source=where,
            **kw,
        )

    column = target.get("column")
    one = (column,) if isinstance(column, str) else ()
    if rtype == "SCHEMA":
        return _schema(params, make, fail)
    if rtype == "NOT_NULL":
        return [make(RuleKind.NULL_VALUES, one)]
    if rtype == "UNIQUE":
        return [make(RuleKind.DUPLICATE_VALUES, one)]
    if rtype == "RANGE":
        low, high = params.get("min_value"), params.get("max_value")
        for key, value in (("min_value", low), ("max_value", high)):
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, (int, float))
            ):
                raise fail(f"{key} must be a number", "parameters")
        if low is None and high is None:
            raise fail("RANGE needs min_value and/or max_value", "parameters")
        if low is not None and high is not None and low > high:
            raise fail(f"min_value {low} is greater than max_value {high}", "parameters")
        return [make(RuleKind.VALUE_RANGE, one, min_value=low, max_value=high)]
    if rtype == "ENUM":
        values = params.get("allowed_values")
        if not isinstance(values, list) or not values:
            raise fail("allowed_values must be a non-empty array", "parameters")
        return [make(RuleKind.INVALID_VALUES, one, valid_values=values)]
    if rtype == "REGEX":
        pattern = params.get("pattern")
        if not isinstance(pattern, str):
            raise fail("REGEX needs parameters.pattern, a string", "parameters")
        refused = pattern_refusal(pattern)
        if refused:
            raise fail(f"rule {name!r}: {refused}", "parameters")
        return [make(RuleKind.INVALID_VALUES, one, pattern=pattern)]
    fmt = params.get("format")
    if not isinstance(fmt, str) or not fmt:
        raise fail("DATE_FORMAT needs parameters.format, a non-empty string", "parameters")
    try:
        java_pattern(fmt)
    except ValueError as exc:
        raise fail(str(exc), "parameters") from exc
    return [make(RuleKind.DATE_FORMAT, one, date_format=fmt)]


def _schema(params: Mapping[str, Any], make: Callable[..., Rule], fail: Fail) -> list[Rule]:
    columns = params.get("columns")
    if not isinstance(columns, dict) or not columns:
        raise fail("SCHEMA needs parameters.columns: {name: {expected_type: ...}}", "parameters")
    strict = params.get("strict_mode", False)
    insensitive = params.get("case_insensitive", False)
    for key, value in (("strict_mode", strict), ("case_insensitive", insensitive)):
        if not isinstance(value, bool):
            raise fail(f"{key} must be true or false", "parameters")
    rules: list[Rule] = []
    for column, spec in columns.items():
        if not isinstance(spec, dict):
            raise fail(f"columns.{column} must be an object with expected_type", "parameters")
        unknown = sorted(set(spec) - _COLUMN_KEYS)
        if unknown:
            raise fail(f"columns.{column}: unsupported key(s) {', '.join(unknown)}", "parameters")
        expected = spec.get("expected_type")
        if expected not in DATA_TYPES:
            raise fail(
                f"columns.{column}.expected_type must be one of {', '.join(DATA_TYPES)}",
                "parameters",
            )
        for key in ("max_length", "precision", "scale"):
            value = spec.get(key)
            if value is not None and (
                not isinstance(value, int) or isinstance(value, bool) or value < 0
            ):
                raise fail(f"columns.{column}.{key} must be a non-negative integer", "parameters")
        if spec.get("max_length") is not None and expected != "STRING":
            raise fail(f"columns.{column}: max_length applies to STRING", "parameters")
        if (spec.get("precision"), spec.get("scale")) != (None, None) and expected != "FLOAT":
            raise fail(f"columns.{column}: precision/scale apply to FLOAT", "parameters")
        schema_rule = make(
            RuleKind.COLUMN_TYPE,
            (column,),
            f".{column}",
            expected_type=expected.lower(),
            max_length=spec.get("max_length"),
            precision=spec.get("precision"),
            scale=spec.get("scale"),
            case_sensitive=not insensitive,
        )
        rules.append(schema_rule)
        if spec.get("max_length") is not None:
            # Spark keeps a declared length only for char/varchar catalog columns: where it has
            # none, the values' lengths are checked instead (docs/rules.md, "Seed 002").
            rules.append(
                make(
                    RuleKind.LENGTH_RANGE,
                    (column,),
                    f".{column}.max_length",
                    max_value=spec["max_length"],
                    case_sensitive=not insensitive,
                    depends_on=(schema_rule.id,),
                )
            )
    if strict:
        rules.append(
            make(
                RuleKind.EXTRA_COLUMNS,
                (),
                ".strict_mode",
                valid_values=list(columns),
                case_sensitive=not insensitive,
            )
        )
    return rules


def _target(target: Any, fail: Fail) -> dict[str, Any]:
    """The one target entity (database, table, column), from `target.entities[0]` or, as the
    engine dictionary writes it, from `target` itself."""
    if not isinstance(target, dict):
        raise fail("target is required: {entities: [{database, table, column}]}", "target")
    if "entities" not in target and set(target) <= _FLAT_TARGET_KEYS:
        entity: Any = target
    else:
        unknown = sorted(set(target) - _TARGET_KEYS)
        if unknown:
            raise fail(f"target: unsupported key(s) {', '.join(unknown)}", "target")
        if target.get("relationship_type", "single_table") != "single_table":
            raise fail("target.relationship_type must be single_table (v1)", "target")
        if target.get("join_conditions", []) != []:
            raise fail("target.join_conditions is reserved: []", "target")
        entities = target.get("entities")
        if not isinstance(entities, list) or len(entities) != 1:
            raise fail("target.entities must hold exactly one entity (v1)", "target")
        entity = entities[0]
    if not isinstance(entity, dict):
        raise fail("a target entity is an object {database, table, column}", "target")
    unknown = sorted(set(entity) - _ENTITY_KEYS)
    if unknown:
        raise fail(f"target entity: unsupported key(s) {', '.join(unknown)}", "target")
    for key in ("connection_id", "alias"):
        if entity.get(key) is not None:
            raise fail(f"target entity {key} is reserved: null", "target")
    out: dict[str, Any] = {}
    for key in ("database", "table", "column"):
        value = entity.get(key)
        if value is not None and not isinstance(value, str):
            raise fail(f"target entity {key} must be a string", "target")
        if value is None and key != "column":
            raise fail(f"target entity needs {key}", "target")
        if value is not None:
            out[key] = value
    return out


def _text(item: Mapping[str, Any], key: str, fail: Fail) -> str | None:
    value = item.get(key)
    if value is not None and not isinstance(value, str):
        raise fail(f"{key} must be a string", key)
    return value


def _choice(
    item: Mapping[str, Any], key: str, allowed: tuple[str, ...], default: str, fail: Fail
) -> str:
    value = item.get(key, default)
    if not isinstance(value, str) or value.upper() not in allowed:
        raise fail(f"{key} must be one of {', '.join(allowed)}", key)
    return value.upper()
