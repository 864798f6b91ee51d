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
    DataQuality,
    OpenDataContractStandard,
    SchemaObject,
    SchemaProperty,
    Server,
)

from lineage_quality.contracts.binding import BoundRules, DatasetPattern, pattern_from_location
from lineage_quality.contracts.yaml_lines import line_of, load_yaml
from lineage_quality.errors import ContractError
from lineage_quality.rules import Operator, Rule, RuleKind, Threshold, Unit

# Metric names (and the 3.0 spellings) -> kind.
_METRICS: dict[str, RuleKind] = {
    "rowCount": RuleKind.ROW_COUNT,
    "nullValues": RuleKind.NULL_VALUES,
    "missingValues": RuleKind.MISSING_VALUES,
    "invalidValues": RuleKind.INVALID_VALUES,
    "duplicateValues": RuleKind.DUPLICATE_VALUES,
    "duplicateCount": RuleKind.DUPLICATE_VALUES,
}
_NAMESPACE_KEYS = ("openlineage.namespace", "openlineageNamespace")
_NAME_KEYS = ("openlineage.name", "openlineageName")
_LOCATION_SERVER_KEYS = ("location", "path")


class _Where:
    """Builds `schema[0].properties[2].quality[1] (line 27)` style locations."""

    def __init__(self, raw: Any, path: str = "") -> None:
        self.raw = raw
        self.path = path

    def child(self, key: str | int) -> _Where:
        raw: Any = None
        if isinstance(key, int) and isinstance(self.raw, list) and key < len(self.raw):
            raw = self.raw[key]
        elif isinstance(key, str) and isinstance(self.raw, Mapping):
            raw = self.raw.get(key)
        path = (
            f"{self.path}[{key}]"
            if isinstance(key, int)
            else (f"{self.path}.{key}" if self.path else key)
        )
        return _Where(raw, path)

    def __str__(self) -> str:
        line = line_of(self.raw)
        return f"{self.path} (line {line})" if line else self.path


def load_odcs(path: str | os.PathLike[str]) -> list[BoundRules]:
    """Read one ODCS contract file; raise ContractError naming the file and key at fault."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise ContractError(str(file), f"cannot read contract: {exc.strerror or exc}") from exc
    return parse_odcs(text, str(file))


def parse_odcs(text: str, source: str) -> list[BoundRules]:
    raw = load_yaml(text, source)
    if not isinstance(raw, Mapping):
        raise ContractError(source, "an ODCS contract must be a YAML mapping at the top level")
    root = _Where(raw)
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
    base_dir = Path(source).resolve().parent
    objects = doc.schema_ or []
    bindings: list[BoundRules] = []
    for i, obj in enumerate(objects):
        where = root.child("schema").child(i)
        rules = _object_rules(obj, contract_id, source, where)
        patterns = _patterns(obj, doc.servers or [], len(objects), base_dir)
        if not patterns:
            raise ContractError(
                source,
                "schema object is bound to no dataset: add a `servers` entry with a `path` or "
                "`location`, or customProperties `openlineage.namespace` and `openlineage.name`",
                str(where),
            )
        fmt = next((s.format for s in doc.servers or [] if s.format), None)
        bindings.append(
            BoundRules(
                contract=contract_id,
                object_name=obj.name or f"schema[{i}]",
                patterns=tuple(patterns),
                rules=tuple(rules),
                format=fmt,
            )
        )
    return bindings


def _custom(props: Sequence[Any] | None, keys: Sequence[str]) -> str | None:
    for p in props or []:
        if p.property in keys and p.value is not None:
            return str(p.value)
    return None


def _patterns(
    obj: SchemaObject, servers: Sequence[Server], n_objects: int, base_dir: Path
) -> list[DatasetPattern]:
    ns = _custom(obj.customProperties, _NAMESPACE_KEYS)
    name = _custom(obj.customProperties, _NAME_KEYS)
    if ns or name:
        return [DatasetPattern(ns or "*", name or "*")]
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


def _object_rules(obj: SchemaObject, contract_id: str, source: str, where: _Where) -> list[Rule]:
    rules: list[Rule] = []
    obj_name = obj.name or "schema"
    for j, q in enumerate(obj.quality or []):
        rules.append(
            _rule(q, None, contract_id, obj_name, source, where.child("quality").child(j), j)
        )
    for k, prop in enumerate(obj.properties or []):
        pwhere = where.child("properties").child(k)
        for j, q in enumerate(prop.quality or []):
            rules.append(
                _rule(q, prop, contract_id, obj_name, source, pwhere.child("quality").child(j), j)
            )
    return rules


def _column(prop: SchemaProperty) -> str | None:
    return prop.physicalName or prop.name


def _threshold(q: DataQuality, kind: RuleKind, source: str, where: _Where) -> Threshold:
    given = [(op, getattr(q, op.value)) for op in Operator if getattr(q, op.value) is not None]
    if len(given) > 1:
        names = ", ".join(op.value for op, _ in given)
        raise ContractError(source, f"one operator per quality entry, found: {names}", str(where))
    if not given:
        # Thresholds implied by the metric: no offending rows; at least one row.
        if kind is RuleKind.ROW_COUNT:
            return Threshold(Operator.GREATER_THAN, 0)
        return Threshold(Operator.MUST_BE, 0)
    op, value = given[0]
    try:
        if op.is_range:
            low, high = value
            return Threshold(op, float(low), float(high))
        return Threshold(op, float(value))
    except (TypeError, ValueError) as exc:
        raise ContractError(source, f"{op.value}: {exc}", str(where.child(op.value))) from exc


def _rule(
    q: DataQuality,
    prop: SchemaProperty | None,
    contract_id: str,
    obj_name: str,
    source: str,
    where: _Where,
    index: int,
) -> Rule:
    qtype = (q.type or "library").lower()
    metric = q.metric or q.rule
    if qtype != "library":
        raise ContractError(
            source, f"quality type {q.type!r} is not supported yet (supported: library)", str(where)
        )
    if not metric:
        raise ContractError(source, "quality entry needs `metric` (or `rule`)", str(where))
    kind = _METRICS.get(metric)
    if kind is None:
        known = ", ".join(sorted(_METRICS))
        raise ContractError(source, f"unknown metric {metric!r}; known: {known}", str(where))
    args: dict[str, Any] = dict(q.arguments or {})
    extra: Mapping[str, Any] = where.raw if isinstance(where.raw, Mapping) else {}
    for key in ("validValues", "pattern", "missingValues", "properties"):
        if key not in args and key in extra:
            args[key] = extra[key]  # ODCS 3.0 put these at the entry's top level
    columns: tuple[str, ...] = ()
    if prop is not None:
        column = _column(prop)
        if not column:
            raise ContractError(source, "property has no name", str(where))
        columns = (column,)
    elif kind is RuleKind.DUPLICATE_VALUES:
        keys = args.get("properties")
        if not isinstance(keys, list) or not keys or not all(isinstance(k, str) for k in keys):
            raise ContractError(
                source,
                "schema-level duplicateValues needs arguments.properties: a list of column names",
                str(where),
            )
        columns = tuple(keys)
    elif kind is not RuleKind.ROW_COUNT:
        raise ContractError(source, f"{metric} must be declared on a property", str(where))
    unit_text = (q.unit or "rows").lower()
    unit = {"rows": Unit.ROWS, "absolute": Unit.ROWS, "percent": Unit.PERCENT}.get(unit_text)
    if unit is None:
        raise ContractError(
            source, f"unit must be rows or percent, not {q.unit!r}", str(where.child("unit"))
        )
    threshold = _threshold(q, kind, source, where)
    rule_id = q.id or ".".join(
        x for x in (contract_id, obj_name, prop.name if prop else None, metric, str(index)) if x
    )
    try:
        return Rule(
            id=rule_id,
            kind=kind,
            threshold=threshold,
            columns=columns,
            unit=unit,
            severity=q.severity,
            name=q.name,
            description=q.description,
            dimension=q.dimension,
            valid_values=args.get("validValues"),
            pattern=args.get("pattern"),
            missing_values=args.get("missingValues"),
            source=f"{source}: {where}",
        )
    except ValueError as exc:
        raise ContractError(source, str(exc), str(where)) from exc
