"""The schema-rules JSON format (seed 002) -> atomic rules.

    {"rules": [{"field": "age", "type": "integer", "required": true, "min": 0, "max": 120}, ...],
     "strict_mode": false, "case_insensitive": false,
     "dataset": {"namespace": "file", "name": "*/users"}}      # optional, for `serve`

Each field decomposes into SCHEMA (exists, has the type), NOT_NULL, UNIQUE, RANGE, ENUM, REGEX,
DATE_FORMAT and MAX_LENGTH rules; the value rules depend on the field's SCHEMA rule, so a missing
field (FIELD_MISSING) or a wrong type (TYPE_MISMATCH) SKIPs them. `table` is ignored, with a
warning: the dataset comes from the command line or from `dataset`; without `dataset`, `serve`
binds the file by name: the catalog tables its rule-model targets name, else the file's name.

Seed 002's rule model (`{"name", "type": "NOT_NULL", "target": ..., "parameters": ...}`) is read
by schema_json_model.py, in `rules` or as the whole file; so is one field item alone.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from lineage_quality.contracts.binding import BoundRules, DatasetPattern
from lineage_quality.contracts.files import read_contract
from lineage_quality.contracts.schema_json_history import history_rules
from lineage_quality.contracts.schema_json_model import CATEGORY, is_rule_model, model_rules
from lineage_quality.contracts.yaml_lines import LineDict, load_yaml
from lineage_quality.engine.dates import java_pattern
from lineage_quality.errors import ContractError
from lineage_quality.kinds import Kind, RuleKind, reading_json
from lineage_quality.rules import Operator, Rule, Threshold
from lineage_quality.rules.patterns import pattern_refusal
from lineage_quality.samples import tagged_personal

log = logging.getLogger(__name__)

TYPES = ("string", "integer", "float", "boolean", "date", "datetime")
_FIELD_KEYS = frozenset(
    {
        "field",
        "type",
        "required",
        "unique",
        "enum",
        "min",
        "max",
        "regex",
        "date_format",
        "max_length",
        "precision",
        "scale",
        "description",
        "severity",
        "action",
        "table",
    }
)
_TOP_KEYS = frozenset({"rules", "strict_mode", "case_insensitive", "table", "dataset", "history"})
_SEVERITIES = ("LOW", "MEDIUM", "HIGH", "CRITICAL")
_ACTIONS = ("LOG", "ALERT", "BLOCK", "QUARANTINE", "CORRECT", "IGNORE")
_ZERO = Threshold(Operator.MUST_BE, 0)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


class _Reader:
    def __init__(self, source: str, lines: Any) -> None:
        self.source = source
        self.lines = lines  # the same document read as YAML, for line numbers

    def where(self, index: int | None, key: str | None = None) -> str:
        path = "rules" if index is None else f"rules[{index}]"
        if key:
            path += f".{key}"
        line = None
        items = self.lines.get("rules") if isinstance(self.lines, Mapping) else None
        if index is not None and isinstance(items, list) and index < len(items):
            item = items[index]
            line = item.line if isinstance(item, LineDict) else None
        return f"{path} (line {line})" if line else path

    def fail(self, message: str, index: int | None = None, key: str | None = None) -> ContractError:
        return ContractError(self.source, message, self.where(index, key))


def load_schema_json(path: str | os.PathLike[str]) -> BoundRules:
    text, source = read_contract(path)
    return parse_schema_json(text, source)


def parse_schema_json(text: str, source: str) -> BoundRules:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ContractError(
            source, f"invalid JSON: {exc.msg}", f"line {exc.lineno}, column {exc.colno}"
        ) from exc
    except RecursionError as exc:
        raise ContractError(source, "invalid JSON: nested too deep") from exc
    except ValueError as exc:  # an integer over Python's 4,300-digit limit
        huge = re.search(r"\d{4300,}", text)
        where = f"line {text.count(chr(10), 0, huge.start()) + 1}" if huge else None
        raise ContractError(source, "invalid JSON: integer too large", where) from exc
    try:
        lines = load_yaml(text, source)
    except ContractError:
        lines = None
    if isinstance(doc, list):
        doc = {"rules": doc}
    elif isinstance(doc, dict) and "rules" not in doc and ("field" in doc or is_rule_model(doc)):
        # one field item or one rule-model object, as seed 002 writes its examples
        doc = {"rules": [doc]}
        lines = {"rules": [lines]}
    reader = _Reader(source, lines)
    if not isinstance(doc, dict):
        raise ContractError(source, "a rules file is a JSON object with a `rules` array")
    unknown = sorted(set(doc) - _TOP_KEYS)
    if unknown:
        raise ContractError(source, f"unsupported key(s): {', '.join(unknown)}", unknown[0])
    if "table" in doc:
        log.warning("%s: `table` is ignored: the dataset comes from --dataset", source)
    items = doc.get("rules")
    if not isinstance(items, list) or not items:
        raise reader.fail("`rules` must be a non-empty array of field rules")
    strict = doc.get("strict_mode", False)
    insensitive = doc.get("case_insensitive", False)
    for key, value in (("strict_mode", strict), ("case_insensitive", insensitive)):
        if not isinstance(value, bool):
            raise ContractError(source, f"{key} must be true or false", key)
    rules: list[Rule] = []
    declared: list[str] = []
    for i, item in enumerate(items):
        if isinstance(item, dict) and is_rule_model(item):
            rules.extend(_model_rules(reader, i, item))
            continue
        field_rules = _field_rules(reader, i, item, case_sensitive=not insensitive)
        declared.append(field_rules[0].columns[0])
        rules.extend(field_rules)
    rules = _after_schema(rules)
    if "history" in doc:
        rules.extend(history_rules(doc["history"], source, case_sensitive=not insensitive))
    if strict:
        rules.append(
            Rule(
                id="schema_extra_columns",
                kind=RuleKind.EXTRA_COLUMNS,
                threshold=_ZERO,
                valid_values=declared,
                case_sensitive=not insensitive,
                name="schema_strict_mode",
                description="no columns beyond the declared ones (strict_mode)",
                origin="schema-json",
                constraint="SCHEMA",
                category="SCHEMA",
                severity="MEDIUM",
                action="ALERT",
                source=f"{source}: strict_mode",
            )
        )
    patterns = _patterns(doc.get("dataset"), source)
    tables: tuple[str, ...] = ()
    if not patterns:
        # bound by name: the rule-model targets' tables, else the file's name (a catalog table)
        named = {f"{t['database']}.{t['table']}" for r in rules for t in [dict(r.target)] if t}
        tables = tuple(sorted(named)) or (Path(source).stem,)
    return BoundRules(
        contract=Path(source).stem,
        object_name=Path(source).stem,
        patterns=patterns,
        rules=tuple(rules),
        source=source,
        tables=tables,
        samples=tagged_personal(rules),
    )


def _model_rules(reader: _Reader, i: int, item: dict[str, Any]) -> list[Rule]:
    def fail(message: str, key: str | None) -> ContractError:
        return reader.fail(message, i, key)

    return model_rules(item, f"{reader.source}: {reader.where(i)}", fail)


def _after_schema(rules: list[Rule]) -> list[Rule]:
    """A rule-model rule on a column that a SCHEMA rule declares is SKIPPED when that column is
    missing or of another type (the seed's skip semantics, as for field items)."""
    schema = {
        r.columns[0].lower(): r.id
        for r in rules
        if r.kind is RuleKind.COLUMN_TYPE and r.columns and r.active
    }
    out = []
    for r in rules:
        found = schema.get(r.columns[0].lower()) if len(r.columns) == 1 else None
        if found is not None and r.target and not r.depends_on and r.kind.scan != "schema":
            r = attrs.evolve(r, depends_on=(found,))
        out.append(r)
    return out


def _patterns(dataset: Any, source: str) -> tuple[DatasetPattern, ...]:
    if dataset is None:
        return ()
    if (
        not isinstance(dataset, dict)
        or not isinstance(dataset.get("namespace"), str)
        or not isinstance(dataset.get("name"), str)
    ):
        raise ContractError(source, "dataset must be {namespace: string, name: string}", "dataset")
    return (DatasetPattern(dataset["namespace"], dataset["name"]),)


def _field_rules(reader: _Reader, i: int, item: Any, case_sensitive: bool) -> list[Rule]:
    if not isinstance(item, dict):
        raise reader.fail("each rule is an object with a `field`", i)
    unknown = sorted(k for k in set(item) - _FIELD_KEYS if reading_json(k) is None)
    if unknown:
        raise reader.fail(f"unsupported key(s): {', '.join(unknown)}", i, unknown[0])
    if "table" in item:
        log.warning("%s: %s: `table` is ignored", reader.source, reader.where(i, "table"))
    field = item.get("field")
    if not isinstance(field, str) or not field.strip():
        raise reader.fail("missing `field` (a column name)", i)
    severity = str(item.get("severity", "MEDIUM")).upper()
    if severity not in _SEVERITIES:
        raise reader.fail(f"severity must be one of {', '.join(_SEVERITIES)}", i, "severity")
    action = str(item.get("action", "ALERT")).upper()
    if action not in _ACTIONS:
        raise reader.fail(f"action must be one of {', '.join(_ACTIONS)}", i, "action")
    ftype = item.get("type")
    if ftype is not None and (not isinstance(ftype, str) or ftype.lower() not in TYPES):
        raise reader.fail(f"unknown type {ftype!r}; known: {', '.join(TYPES)}", i, "type")
    for key in ("max_length", "precision", "scale"):
        value = item.get(key)
        if value is not None and (
            not isinstance(value, int) or isinstance(value, bool) or value < 0
        ):
            raise reader.fail(f"{key} must be a non-negative integer", i, key)
    if (item.get("precision") is not None or item.get("scale") is not None) and (
        (ftype or "").lower() != "float"
    ):
        raise reader.fail("precision/scale apply to type float", i, "precision")
    if item.get("max_length") is not None and (ftype or "string").lower() != "string":
        raise reader.fail("max_length applies to type string", i, "max_length")

    where = f"{reader.source}: {reader.where(i)}"
    schema_id = f"schema_{field}"

    def make(kind: Kind, rtype: str, threshold: Threshold = _ZERO, **kw: Any) -> Rule:
        return Rule(
            id=f"{rtype.lower()}_{field}" if rtype != "SCHEMA" else schema_id,
            kind=kind,
            threshold=threshold,
            columns=(field,),
            name=f"{rtype.lower()}_{field}",
            description=item.get("description"),
            severity=severity,
            action=action,
            origin="schema-json",
            constraint=rtype,
            category=CATEGORY.get(rtype, "VALIDITY"),
            case_sensitive=case_sensitive,
            source=where,
            depends_on=() if rtype == "SCHEMA" else (schema_id,),
            **kw,
        )

    rules = [
        make(
            RuleKind.COLUMN_TYPE,
            "SCHEMA",
            expected_type=ftype.lower() if ftype else None,
            max_length=item.get("max_length"),
            precision=item.get("precision"),
            scale=item.get("scale"),
        )
    ]
    required = item.get("required", False)
    if not isinstance(required, bool):
        raise reader.fail("required must be true or false", i, "required")
    if required:
        rules.append(make(RuleKind.NULL_VALUES, "NOT_NULL"))
    unique = item.get("unique", False)
    if not isinstance(unique, bool):
        raise reader.fail("unique must be true or false", i, "unique")
    if unique:
        rules.append(make(RuleKind.DUPLICATE_VALUES, "UNIQUE"))
    low, high = item.get("min"), item.get("max")
    if low is not None or high is not None:
        for key, value in (("min", low), ("max", high)):
            if value is not None and not _is_number(value):
                raise reader.fail(f"{key} must be a number", i, key)
        if low is not None and high is not None and low > high:
            raise reader.fail(f"min {low} is greater than max {high}", i, "min")
        rules.append(make(RuleKind.VALUE_RANGE, "RANGE", min_value=low, max_value=high))
    if "enum" in item:
        values = item["enum"]
        if not isinstance(values, list) or not values:
            raise reader.fail("enum must be a non-empty array", i, "enum")
        rules.append(make(RuleKind.INVALID_VALUES, "ENUM", valid_values=values))
    if "regex" in item:
        pattern = item["regex"]
        if not isinstance(pattern, str):
            raise reader.fail("regex must be a string", i, "regex")
        problem = pattern_refusal(pattern)
        if problem:  # seed 002: the pattern must compile; the rules file is bad (exit 2)
            raise reader.fail(f"rule regex_{field}: {problem}", i, "regex")
        rules.append(make(RuleKind.INVALID_VALUES, "REGEX", pattern=pattern))
    if "date_format" in item:
        fmt = item["date_format"]
        if not isinstance(fmt, str) or not fmt:
            raise reader.fail("date_format must be a non-empty string", i, "date_format")
        try:
            java_pattern(fmt)
        except ValueError as exc:
            raise reader.fail(str(exc), i, "date_format") from exc
        rules.append(make(RuleKind.DATE_FORMAT, "DATE_FORMAT", date_format=fmt))
    if item.get("max_length") is not None:
        # The SCHEMA rule compares a declared char/varchar length; Spark keeps none for other
        # columns, so the values' lengths are checked too.
        rules.append(make(RuleKind.LENGTH_RANGE, "MAX_LENGTH", max_value=item["max_length"]))
    for key in sorted(k for k in item if k not in _FIELD_KEYS):  # keys of registered kinds
        kind = reading_json(key)
        assert kind is not None  # unknown keys were refused above
        try:
            threshold, fields = kind.json_rule(item[key])
            rules.append(make(kind, key.upper(), threshold, **fields))
        except ValueError as exc:
            raise reader.fail(str(exc), i, key) from exc
    return rules
