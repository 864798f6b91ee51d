"""The JSON rules format's `history` array: rules that compare a measurement with the past.

    {"rules": [...],
     "history": [
       {"metric": "rowCount", "compare": "relativeChange", "min": 0.7, "max": 1.3},
       {"metric": "nullValues", "field": "email", "compare": "stddev", "runs": 7, "k": 3},
       {"metric": "avg", "field": "amount", "compare": "seasonal", "runs": 4}
     ]}

`min`/`max` bound the compared quantity (changes, freshness); stddev and seasonal take `k`.
"""

from __future__ import annotations

from typing import Any

from lineage_quality.errors import ContractError
from lineage_quality.kinds import RuleKind
from lineage_quality.rules import STATISTICS, Operator, Rule, Threshold
from lineage_quality.rules.history import parse_history

_METRICS = {"rowCount": RuleKind.ROW_COUNT, "nullValues": RuleKind.NULL_VALUES}
_KEYS = frozenset(
    {"metric", "field", "compare", "runs", "minRuns", "k", "min", "max", "name", "severity",
     "action", "description"}
)  # fmt: skip
_HISTORY_KEYS = ("compare", "runs", "minRuns", "k")


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
    field = item.get("field")
    if kind is RuleKind.ROW_COUNT and field is not None:
        raise ContractError(source, "rowCount takes no field", f"{where}.field")
    if kind is not RuleKind.ROW_COUNT and not (isinstance(field, str) and field):
        raise ContractError(source, f"{metric} needs a `field`", f"{where}.field")
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
    label = "_".join(x for x in (metric, field, check.compare.value) if isinstance(x, str))
    try:
        return Rule(
            id=str(item.get("name") or f"history_{label}"),
            kind=kind or RuleKind.STATISTIC,
            threshold=threshold,
            columns=(field,) if isinstance(field, str) else (),
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
        )
    except ValueError as exc:
        raise ContractError(source, str(exc), where) from exc
