"""The JSON rules format's `history` array: rules that compare a measurement with the past.

    {"rules": [...],
     "history": [
       {"metric": "rowCount", "compare": "relativeChange", "min": 0.7, "max": 1.3},
       {"metric": "nullValues", "field": "email", "compare": "stddev", "runs": 7, "k": 3},
       {"metric": "avg", "field": "amount", "compare": "seasonal", "runs": 4},
       {"metric": "nullValues", "field": "email", "unit": "percent", "compare": "stddev"},
       {"metric": "invalidValues", "field": "status", "enum": ["a", "b"], "compare": "stddev"},
       {"metric": "sql", "query": "SELECT SUM(amount) FROM {dataset}", "compare": "stddev"}
     ]}

Every measuring metric compares over time: rowCount; nullValues, missingValues (optional
`missing`: the values counted as missing), invalidValues (`enum` and/or `regex`),
duplicateValues (`field`, or `fields` for a compound key), each counted in rows or, with
`unit: percent`, as a percentage of the rows; the statistics (avg, sum, stddev, median, min,
max); and `sql` (`query`: the number it returns). `min`/`max` bound the compared quantity
(changes, freshness); stddev and seasonal take `k` (and no min/max).
"""

from __future__ import annotations

from typing import Any

from lineage_quality.errors import ContractError
from lineage_quality.kinds import Kind, RuleKind
from lineage_quality.rules import STATISTICS, Operator, Rule, Threshold, Unit
from lineage_quality.rules.history import HISTORY_KEYS, parse_history

_METRICS = {
    "rowCount": RuleKind.ROW_COUNT,
    "nullValues": RuleKind.NULL_VALUES,
    "missingValues": RuleKind.MISSING_VALUES,
    "invalidValues": RuleKind.INVALID_VALUES,
    "duplicateValues": RuleKind.DUPLICATE_VALUES,
    "sql": RuleKind.SQL,
}
_KEYS = frozenset(
    {"metric", "field", "fields", "compare", "runs", "minRuns", "minHistory", "k", "baseline",
     "recoverAfter", "min", "max", "name", "severity", "action", "description", "unit", "enum",
     "regex", "missing", "query"}
)  # fmt: skip
_UNITS = {"rows": Unit.ROWS, "percent": Unit.PERCENT}
_HISTORY_KEYS = HISTORY_KEYS


def history_rules(items: Any, source: str, case_sensitive: bool) -> list[Rule]:
    if not isinstance(items, list):
        raise ContractError(source, "history must be an array of history rules", "history")
    return [_rule(item, source, f"history[{i}]", case_sensitive) for i, item in enumerate(items)]


def _rule(item: Any, source: str, where: str, case_sensitive: bool) -> Rule:
    if not isinstance(item, dict):
        raise ContractError(source, "a history rule is an object with a `metric`", where)
    unknown = sorted(set(item) - _KEYS)
    if unknown:
        raise ContractError(source, f"unsupported key(s): {', '.join(unknown)}", where)
    metric = item.get("metric")
    kind = _METRICS.get(metric) if isinstance(metric, str) else None
    if kind is None and metric not in STATISTICS:
        known = ", ".join([*_METRICS, *STATISTICS])
        raise ContractError(source, f"metric must be one of {known}", f"{where}.metric")
    fields = _columns(item, kind, str(metric), source, where)
    extra = _extra(item, kind, source, where)
    try:
        check = parse_history({k: item[k] for k in _HISTORY_KEYS if k in item})
    except ValueError as exc:
        raise ContractError(source, str(exc), where) from exc
    low, high = item.get("min"), item.get("max")
    for key, value in (("min", low), ("max", high)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise ContractError(source, f"{key} must be a number", f"{where}.{key}")
    if check.compare.uses_threshold and low is None and high is None:
        raise ContractError(
            source, f"a {check.compare.value} history rule needs `min` and/or `max`", where
        )
    if not check.compare.uses_threshold and (low is not None or high is not None):
        raise ContractError(
            source, f"a {check.compare.value} history rule takes `k`, not min/max", where
        )
    if low is not None and high is not None:
        threshold = Threshold(Operator.BETWEEN, low, high)
    elif low is not None:
        threshold = Threshold(Operator.GREATER_OR_EQUAL, low)
    elif high is not None:
        threshold = Threshold(Operator.LESS_OR_EQUAL, high)
    else:
        threshold = Threshold(Operator.GREATER_OR_EQUAL, 0)  # unused: the band comes from k
    unit = _UNITS.get(str(item.get("unit", "rows")))
    if unit is None or not isinstance(item.get("unit", "rows"), str):
        raise ContractError(source, "unit must be rows or percent", f"{where}.unit")
    label = "_".join(x for x in (metric, *fields, check.compare.value) if isinstance(x, str))
    try:
        return Rule(
            id=str(item.get("name") or f"history_{label}"),
            kind=kind or RuleKind.STATISTIC,
            threshold=threshold,
            columns=fields,
            unit=unit,
            statistic=None if kind is not None else str(metric),
            name=str(item.get("name") or f"history_{label}"),
            description=item.get("description"),
            severity=str(item.get("severity", "MEDIUM")).upper(),
            action=str(item.get("action", "ALERT")).upper(),
            origin="schema-json",
            constraint="HISTORY",
            category="HISTORY",
            case_sensitive=case_sensitive,
            source=f"{source}: {where}",
            history=check,
            **extra,
        )
    except ValueError as exc:
        raise ContractError(source, str(exc), where) from exc


def _columns(
    item: dict[str, Any], kind: Kind | None, metric: str, source: str, where: str
) -> tuple[str, ...]:
    """The columns the metric measures: none (rowCount, sql), `fields` (a compound duplicate
    key), else `field`."""
    field, fields = item.get("field"), item.get("fields")
    if kind in (RuleKind.ROW_COUNT, RuleKind.SQL):
        if field is not None or fields is not None:
            raise ContractError(source, f"{metric} takes no field", f"{where}.field")
        return ()
    if fields is not None:
        if kind is not RuleKind.DUPLICATE_VALUES or field is not None:
            raise ContractError(
                source, "`fields` is for duplicateValues, instead of `field`", f"{where}.fields"
            )
        if (
            not isinstance(fields, list)
            or not fields
            or not all(isinstance(f, str) and f for f in fields)
        ):
            raise ContractError(source, "fields must be a list of column names", f"{where}.fields")
        return tuple(fields)
    if not (isinstance(field, str) and field):
        raise ContractError(source, f"{metric} needs a `field`", f"{where}.field")
    return (field,)


def _extra(item: dict[str, Any], kind: Kind | None, source: str, where: str) -> dict[str, Any]:
    """The metric's own arguments: invalidValues' enum/regex, missingValues' missing, the query."""
    allowed = (
        {
            RuleKind.INVALID_VALUES: ("enum", "regex"),
            RuleKind.MISSING_VALUES: ("missing",),
            RuleKind.SQL: ("query",),
        }.get(kind, ())
        if kind is not None
        else ()
    )
    for key in ("enum", "regex", "missing", "query"):
        if key in item and key not in allowed:
            raise ContractError(source, f"`{key}` does not apply to this metric", f"{where}.{key}")
    out: dict[str, Any] = {}
    for key, name in (("enum", "valid_values"), ("missing", "missing_values")):
        if key in item:
            if not isinstance(item[key], list) or not item[key]:
                raise ContractError(source, f"{key} must be a non-empty list", f"{where}.{key}")
            out[name] = item[key]
    for key, name in (("regex", "pattern"), ("query", "query")):
        if key in item:
            if not isinstance(item[key], str) or not item[key].strip():
                raise ContractError(source, f"{key} must be a non-empty string", f"{where}.{key}")
            out[name] = item[key]
    if kind is RuleKind.SQL and "query" not in out:
        raise ContractError(source, "a sql history rule needs a `query`", f"{where}.query")
    return out
