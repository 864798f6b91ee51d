"""One evaluation's results as JSON text and back, for the verdicts kept per dataset version
(versions.py): every field of `RuleResult` but the rule, which is named by its id (and which
of several rules of that id) and found again among the rules of the same rule set. Only
values: no code is ever read back from the store (a shared database anyone may write).

A text that does not read back as written here (another version's shape, a rule not found,
a wrong type) is None: the version is evaluated again, never a guess taken for a verdict.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from lineage_quality.measures import ColumnMeasures, DatasetMeasures
from lineage_quality.results import Cause, Quarantined, RuleResult, Status
from lineage_quality.rules import Rule

SHAPE = 1  # the text's shape: another one is not read (evaluated again)

# Fields kept as they are (None, a number, a text); the others are converted below.
_PLAIN = (
    "actual", "failing_rows", "row_count", "message", "skip_reason", "code", "observed",
    "scope", "expected_text", "measured",
)  # fmt: skip
_PAIRS = ("baseline", "compared")  # tuples of (key, value) pairs
# Every field of RuleResult is one of these (tests/unit/test_version_verdicts.py checks it: a
# new field must be kept here, or say why not).
HANDLED = frozenset(
    {*_PLAIN, *_PAIRS, "rule", "status", "cause", "quarantine", "measures", "reused_from"}
    | {"batches", "samples"}  # samples: failing rows are not copied to the shared store
)


def results_text(results: Sequence[RuleResult]) -> str:
    """The results as JSON (non-finite numbers as NaN/Infinity, read back as such)."""
    seen: dict[str, int] = {}
    out = []
    for r in results:
        nth = seen.get(r.rule.id, 0)
        seen[r.rule.id] = nth + 1
        item: dict[str, Any] = {"rule": r.rule.id, "nth": nth, "status": r.status.value}
        for name in _PLAIN:
            value = getattr(r, name)
            if value is not None:
                item[name] = value
        for name in _PAIRS:
            pairs = getattr(r, name)
            if pairs is not None:
                item[name] = [[k, _plain(v)] for k, v in pairs]
        if r.cause is not None:
            item["cause"] = r.cause.value
        if r.quarantine is not None:
            item["quarantine"] = attrs.asdict(r.quarantine)
        if r.batches is not None:
            item["batches"] = list(r.batches)
        out.append(item)
    measures = next((r.measures for r in results if r.measures is not None), None)
    body = {"shape": SHAPE, "results": out, "measures": _measures_json(measures)}
    return json.dumps(body, separators=(",", ":"), allow_nan=True)


def results_of(text: str, rules: Sequence[Rule]) -> list[RuleResult] | None:
    """The results `results_text` wrote, each with its rule among `rules`; None when the text
    is not that (or names a rule that is not there)."""
    try:
        body = json.loads(text)
        if not isinstance(body, dict) or body.get("shape") != SHAPE:
            return None
        by_id: dict[tuple[str, int], Rule] = {}
        counts: dict[str, int] = {}
        for rule in rules:
            nth = counts.get(rule.id, 0)
            counts[rule.id] = nth + 1
            by_id[(rule.id, nth)] = rule
        measures = _measures_of(body.get("measures"))
        return [_result(item, by_id, measures) for item in body["results"]]
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def _result(
    item: Mapping[str, Any], rules: Mapping[tuple[str, int], Rule], measures: Any
) -> RuleResult:
    rule = rules[(str(item["rule"]), int(item["nth"]))]
    fields: dict[str, Any] = {name: item.get(name) for name in _PLAIN}
    for name in ("actual", "measured"):
        _number(fields[name])
    for name in ("failing_rows", "row_count"):
        if fields[name] is not None and not isinstance(fields[name], int):
            raise TypeError(name)
    for name in _PAIRS:
        pairs = item.get(name)
        fields[name] = None if pairs is None else tuple((str(k), v) for k, v in pairs)
    cause = item.get("cause")
    quarantine = item.get("quarantine")
    batches = item.get("batches")
    return RuleResult(
        rule=rule,
        status=Status(item["status"]),
        cause=None if cause is None else Cause(cause),
        quarantine=None if quarantine is None else Quarantined(**quarantine),
        measures=measures,
        batches=None if batches is None else tuple(int(b) for b in batches),
        **fields,
    )


def _number(value: Any) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
        raise TypeError("not a number")


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


def _measures_json(measures: DatasetMeasures | None) -> Any:
    if measures is None:
        return None
    columns = [[name, attrs.asdict(m)] for name, m in measures.columns]
    return {"rows": measures.rows, "columns": columns, "profiled": measures.profiled}


def _measures_of(value: Any) -> DatasetMeasures | None:
    if value is None:
        return None
    columns = []
    for name, numbers in value["columns"]:
        for number in numbers.values():
            _number(number)
        columns.append((str(name), ColumnMeasures(**numbers)))
    rows = value["rows"]
    if not isinstance(rows, int):
        raise TypeError("rows")
    return DatasetMeasures(rows, tuple(columns), bool(value["profiled"]))
