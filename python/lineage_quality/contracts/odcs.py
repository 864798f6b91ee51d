"""ODCS v3 data contracts (YAML) -> rules bound to OpenLineage datasets.

The document is validated with the `open-data-contract-standard` Pydantic model; the raw YAML is
kept alongside to report the line of anything at fault.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pydantic
from open_data_contract_standard.model import (
    OpenDataContractStandard,
    SchemaObject,
    SchemaProperty,
    Server,
)

from lineage_quality.contracts.binding import BoundRules, DatasetPattern, pattern_from_location
from lineage_quality.contracts.files import read_contract
from lineage_quality.contracts.odcs_quality import QualityReader, Where
from lineage_quality.contracts.odcs_samples import sample_policy
from lineage_quality.contracts.yaml_lines import LineDict, line_of, load_yaml
from lineage_quality.errors import ContractError
from lineage_quality.rules import Rule

_NAMESPACE_KEYS = ("openlineage.namespace", "openlineageNamespace")
_NAME_KEYS = ("openlineage.name", "openlineageName")
# Catalog table identities (`db.table`, `catalog.db.table`; comma-separated), matched against the
# `symlinks` facet the listener gives tables.
_TABLE_KEYS = ("openlineage.table", "openlineageTable")
_LOCATION_SERVER_KEYS = ("location", "path")
_SCHEMA_RULES_KEYS = ("lineageQuality.schemaRules", "lineage-quality.schemaRules")
_PROFILE_KEYS = ("lineageQuality.profile", "lineage-quality.profile")
_TRUE = ("true", "yes", "on", "1")
_FALSE = ("false", "no", "off", "0")


def load_odcs(path: str | os.PathLike[str], column: str | None = None) -> list[BoundRules]:
    """Read one ODCS contract file; raise ContractError naming the file and key at fault.
    `column`: the property a bare `quality:` fragment belongs to (`_as_contract`)."""
    text, source = read_contract(path)
    return parse_odcs(text, source, column)


def parse_odcs(text: str, source: str, column: str | None = None) -> list[BoundRules]:
    raw = load_yaml(text, source)
    if not isinstance(raw, Mapping):
        raise ContractError(source, "an ODCS contract must be a YAML mapping at the top level")
    fragment = is_fragment(raw)
    if column is not None and not (fragment and set(raw) == {"quality"}):
        raise ContractError(
            source, "a column is given only for a fragment that is a bare `quality:` list"
        )
    if fragment:
        raw = _as_contract(raw, source, column)
    root = Where(raw, line_of=line_of)
    try:
        doc = OpenDataContractStandard.model_validate(dict(raw))
    except pydantic.ValidationError as exc:
        err = exc.errors()[0]
        where = root
        for part in err["loc"]:
            where = where.child(part if isinstance(part, int) else str(part))
        raise ContractError(
            source, f"{err['msg']} (value: {err.get('input')!r})", str(where)
        ) from exc
    contract_id = doc.id or Path(source).stem
    reader = QualityReader(contract_id, source, fragment)
    seen_ids: dict[str, str] = {}
    base_dir = Path(source).resolve().parent
    objects = doc.schema_ or []
    bindings: list[BoundRules] = []
    for i, obj in enumerate(objects):
        where = root.child("schema").child(i)
        entries: list[tuple[Rule, Any]] = []
        rules = _object_rules(doc, obj, reader, where, entries)
        for rule in rules:
            if rule.id in seen_ids:
                raise ContractError(
                    source,
                    f"rule id {rule.id!r} is used twice (also at {seen_ids[rule.id]})",
                    rule.source.partition(": ")[2] or None,
                )
            seen_ids[rule.id] = rule.source.partition(": ")[2]
        patterns = _patterns(obj, doc.servers or [], len(objects), base_dir, source)
        tables = tuple(
            t.strip()
            for t in (_custom(obj.customProperties, _TABLE_KEYS) or "").split(",")
            if t.strip()
        )
        if fragment and not patterns and not tables and obj.name:
            tables = (obj.name,)  # a fragment names no location: it binds by its name
        fmt = next((s.format for s in doc.servers or [] if s.format), None)
        bindings.append(
            BoundRules(
                contract=contract_id,
                object_name=obj.name or f"schema[{i}]",
                patterns=tuple(patterns),
                rules=tuple(rules),
                format=fmt,
                source=f"{source}: {where}",
                tables=tables,
                profile=_profile(doc, obj, reader, where, root),
                scope=_scope(doc, obj, reader, where, root),
                critical=_critical(doc, obj),
                samples=sample_policy(doc, obj, entries, reader, where, root),
            )
        )
    return bindings


FRAGMENT_KEYS = frozenset({"schema", "properties", "quality"})


def is_fragment(raw: Mapping[str, Any]) -> bool:
    """An ODCS fragment, as the predefined-rules RFC (seed 003) writes its examples: only
    `schema:`, `properties:` or `quality:` at the top, no `apiVersion`/`kind`."""
    return bool(raw) and set(raw) <= FRAGMENT_KEYS


def _as_contract(raw: Mapping[str, Any], source: str, column: str | None) -> dict[str, Any]:
    """The contract a fragment stands for: its `schema`, else one object named after the file
    holding its `properties` and/or `quality`. It binds by name (a catalog table). With
    `column`, a bare `quality:` list is that property's, as the predefined-rules RFC (seed 003)
    shows a property's list without its property."""
    stem = Path(source).stem
    head: dict[str, Any] = {
        "apiVersion": "v3.0.2",
        "kind": "DataContract",
        "id": stem,
        "version": "0.0.0",
        "status": "draft",
    }
    if "schema" in raw:
        if set(raw) != {"schema"}:
            extra = ", ".join(sorted(set(raw) - {"schema"}))
            raise ContractError(
                source, f"a fragment with `schema:` takes no top-level {extra}: put it in an object"
            )
        return {**head, "schema": raw["schema"]}
    if column is not None:
        prop = LineDict({"name": column, "quality": raw["quality"]})
        prop.line = 1
        raw = {"properties": [prop]}
    obj = LineDict({"name": stem, **raw})
    obj.line = 1
    return {**head, "schema": [obj]}


def _custom(props: Sequence[Any] | None, keys: Sequence[str]) -> str | None:
    for p in props or []:
        if p.property in keys and p.value is not None:
            return str(p.value)
    return None


def _patterns(
    obj: SchemaObject, servers: Sequence[Server], n_objects: int, base_dir: Path, source: str
) -> list[DatasetPattern]:
    ns = _custom(obj.customProperties, _NAMESPACE_KEYS)
    name = _custom(obj.customProperties, _NAME_KEYS)
    if not (ns or name) and _custom(obj.customProperties, _TABLE_KEYS):
        return []  # bound by table identity only
    if ns or name:
        if not ns:
            # Never an implicit namespace glob: it would let any filesystem or host match.
            if name and name.startswith("/"):
                ns = "file"
            else:
                raise ContractError(
                    source,
                    f"{obj.name or 'schema object'}: openlineage.name {name!r} needs "
                    "openlineage.namespace (e.g. file, s3://bucket, hdfs://host:8020)",
                    "customProperties",
                )
        return [DatasetPattern(ns, name or "*")]
    out: list[DatasetPattern] = []
    table = obj.physicalName or obj.name or ""
    for server in servers:
        location = next(
            (getattr(server, k) for k in _LOCATION_SERVER_KEYS if getattr(server, k)), None
        )
        if not location:
            continue
        if "{model}" in location:
            location = location.replace("{model}", table)
        elif n_objects > 1:
            location = location.rstrip("/") + "/" + table
        if "://" not in location and not location.startswith("/"):
            location = str((base_dir / location).resolve())
        out.append(pattern_from_location(location))
    return out


def _schema_rules_enabled(doc: OpenDataContractStandard, obj: SchemaObject) -> bool:
    for props in (obj.customProperties, doc.customProperties):
        value = _custom(props, _SCHEMA_RULES_KEYS)
        if value is not None:
            return value.strip().lower() not in ("false", "no", "off", "0")
    return True


def _profile(
    doc: OpenDataContractStandard,
    obj: SchemaObject,
    reader: QualityReader,
    where: Where,
    root: Where,
) -> bool:
    """`lineageQuality.profile` of the object, else of the contract; off unless asked for. Not
    a flag read leniently: a misspelt value must not quietly add (or drop) a scan's worth of
    aggregates."""
    for props, at in ((obj.customProperties, where), (doc.customProperties, root)):
        value = _custom(props, _PROFILE_KEYS)
        if value is None:
            continue
        word = value.strip().lower()
        if word in _TRUE or word in _FALSE:
            return word in _TRUE
        raise reader.fail(
            f"lineageQuality.profile must be true or false, not {value!r}",
            at.child("customProperties"),
        )
    return False


SCOPES = ("table", "write", "exact")
_SCOPE_KEYS = ("lineageQuality.scope", "lineage-quality.scope")


def _scope(
    doc: OpenDataContractStandard,
    obj: SchemaObject,
    reader: QualityReader,
    where: Where,
    root: Where,
) -> str:
    """`lineageQuality.scope` of the object, else of the contract: what an append's verdicts
    judge (docs/evaluation.md, "Scopes"): `table` (the default: the table, from kept states
    merged with the run's rows), `write` (the run's rows only) or `exact` (the table, read
    whole every time)."""
    for props, at in ((obj.customProperties, where), (doc.customProperties, root)):
        value = _custom(props, _SCOPE_KEYS)
        if value is None:
            continue
        word = value.strip().lower()
        if word in SCOPES:
            return word
        raise reader.fail(
            f"lineageQuality.scope must be one of {', '.join(SCOPES)}, not {value!r}",
            at.child("customProperties"),
        )
    return "table"


CRITICAL_TAG = "critical"


def _critical(doc: OpenDataContractStandard, obj: SchemaObject) -> bool:
    """`tags: [critical]` on the contract or on the schema object (any case)."""
    tags = [*(doc.tags or []), *(obj.tags or [])]
    return any(t.strip().lower() == CRITICAL_TAG for t in tags)


def _refuse_nested_rules(prop: SchemaProperty, reader: QualityReader, where: Where) -> None:
    """Rules on nested properties (a struct's fields, array items) are not evaluated yet: say so
    instead of dropping them."""
    nested = [("properties", c) for c in prop.properties or []]
    if prop.items is not None:
        nested.append(("items", prop.items))
    for i, (key, child) in enumerate(nested):
        cwhere = where.child(key).child(i) if key == "properties" else where.child(key)
        if child.quality or child.required or child.unique:
            raise reader.fail(
                f"rules on nested property {prop.name}.{child.name or key} are not supported; "
                "declare them with `type: sql` on the object",
                cwhere,
            )
        _refuse_nested_rules(child, reader, cwhere)


def _object_rules(
    doc: OpenDataContractStandard,
    obj: SchemaObject,
    reader: QualityReader,
    where: Where,
    entries: list[tuple[Rule, Any]],
) -> list[Rule]:
    """The object's rules; `entries` gets each quality entry's rule with its entry."""
    rules: list[Rule] = []
    obj_name = obj.name or "schema"
    schema_rules = _schema_rules_enabled(doc, obj)
    for j, q in enumerate(obj.quality or []):
        rule = reader.rule(q, None, obj_name, where.child("quality").child(j), j)
        if rule is not None:
            rules.append(rule)
            entries.append((rule, q))
    for k, prop in enumerate(obj.properties or []):
        pwhere = where.child("properties").child(k)
        _refuse_nested_rules(prop, reader, pwhere)
        if schema_rules:
            rules.extend(reader.schema_rules(prop, obj_name, pwhere))
        for j, q in enumerate(prop.quality or []):
            rule = reader.rule(q, prop, obj_name, pwhere.child("quality").child(j), j)
            if rule is not None:
                rules.append(rule)
                entries.append((rule, q))
    return rules
