"""ODCS `quality` entries (and the schema itself) -> rules.

Reads the library metrics of ODCS v3.0-v3.2 (`metric:`, or `rule:` in 3.0), the verb-style names of
the predefined-rules RFC (`hasNoNullValues`, `isUnique`, `hasAvgGreaterThan`...), the statistics,
and `type: sql`. Every rule carries where it was declared, for messages.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from open_data_contract_standard.model import DataQuality, SchemaProperty

from lineage_quality.engine.types import known_type
from lineage_quality.errors import ContractError
from lineage_quality.kinds import Kind, RuleKind, ValueCheckOptions, odcs_names, reading_odcs
from lineage_quality.kinds.reconcile import ReconcileOptions
from lineage_quality.rules import Operator, Rule, Threshold, Unit, parse_action
from lineage_quality.rules.history import HistoryCheck, parse_history
from lineage_quality.rules.patterns import pattern_refusal

log = logging.getLogger(__name__)

HISTORY_KEY = "lineageQuality.history"  # a quality entry's custom property: compare with the past

# Arguments ODCS 3.0 wrote at the entry's top level (3.1 moved them under `arguments`).
_TOP_LEVEL_ARGUMENTS = (
    "validValues",
    "pattern",
    "missingValues",
    "properties",
    "value",
    "days",
    "seconds",
)
# The keys of an ODCS quality entry.
_ENTRY_KEYS = frozenset(DataQuality.model_fields) | set(_TOP_LEVEL_ARGUMENTS)
# Custom property of a quality entry naming what a failure does.
_ACTION_KEYS = ("action", "lineageQuality.action")
_UNITS = {"rows": Unit.ROWS, "absolute": Unit.ROWS, "percent": Unit.PERCENT}
_NOT_EXECUTABLE = ("text", "custom")
ENGINE = "lineage-quality"  # a `type: custom` entry for this engine: a reconciliation


def _exact(value: Any) -> int | float:
    """A bound as written: integers stay integers (no rounding above 2^53)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"must be a number, not {value!r}")
    return value


def _written(threshold: Threshold) -> str:
    if threshold.high is not None:
        return f"[{threshold.value}, {threshold.high}]"
    return str(threshold.value)


class Where:
    """Builds `schema[0].properties[2].quality[1] (line 27)` style locations."""

    def __init__(
        self, raw: Any, path: str = "", line_of: Callable[[Any], int | None] | None = None
    ):
        self.raw = raw
        self.path = path
        self._line_of = line_of or (lambda _: None)

    def child(self, key: str | int) -> Where:
        raw: Any = None
        if isinstance(key, int) and isinstance(self.raw, list) and key < len(self.raw):
            raw = self.raw[key]
        elif isinstance(key, str) and isinstance(self.raw, Mapping):
            raw = self.raw.get(key)
        if isinstance(key, int):
            path = f"{self.path}[{key}]"
        else:
            path = f"{self.path}.{key}" if self.path else key
        return Where(raw, path, self._line_of)

    @property
    def line(self) -> int | None:
        return self._line_of(self.raw)

    def __str__(self) -> str:
        line = self.line
        return f"{self.path} (line {line})" if line else self.path


class QualityReader:
    """Translates the quality entries of one contract; raises ContractError at the first fault."""

    def __init__(self, contract_id: str, source: str, fragment: bool = False) -> None:
        self.contract_id = contract_id
        self.source = source
        self.fragment = fragment  # a fragment (odcs.is_fragment): say how to place a rule

    def _placement(self) -> str:
        if not self.fragment:
            return ""
        return (
            " (a bare `quality:` list is the object's; the RFC shows a property's list without "
            "its property: put it under `properties: - name: <column>`, or name it with "
            "`check --column <column>`)"
        )

    def fail(self, message: str, where: Where) -> ContractError:
        return ContractError(self.source, message, str(where))

    # -- thresholds ---------------------------------------------------------------------------

    def threshold(self, q: DataQuality, where: Where) -> Threshold | None:
        given = [(op, getattr(q, op.value)) for op in Operator if getattr(q, op.value) is not None]
        if len(given) > 1:
            names = ", ".join(op.value for op, _ in given)
            raise self.fail(f"one operator per quality entry, found: {names}", where)
        if not given:
            return None
        op, value = given[0]
        try:
            if op.is_range:
                low, high = value
                return Threshold(op, _exact(low), _exact(high))
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(f"must be a number, not {value!r}")
            return Threshold(op, value)
        except (TypeError, ValueError) as exc:
            raise self.fail(f"{op.value}: {exc}", where.child(op.value)) from exc

    # -- one entry ----------------------------------------------------------------------------

    def rule(
        self,
        q: DataQuality,
        prop: SchemaProperty | None,
        object_name: str,
        where: Where,
        index: int,
    ) -> Rule | None:
        """The rule of one entry, or None for entries that are not executable (type text)."""
        qtype = (q.type or "library").lower()
        if qtype == "custom" and (q.engine or "").strip().lower() == ENGINE:
            qtype = "reconcile"  # our own custom entry: a reconciliation with the run's inputs
        if qtype in _NOT_EXECUTABLE:
            log.info(
                "%s: %s: quality type %s is not executable; skipped", self.source, where, qtype
            )
            return None
        if qtype not in ("library", "sql", "reconcile"):
            raise self.fail(f"unknown quality type {q.type!r} (library, sql, text, custom)", where)
        raw: Mapping[str, Any] = where.raw if isinstance(where.raw, Mapping) else {}
        unknown = sorted(str(k) for k in raw if k not in _ENTRY_KEYS)
        if unknown:
            # A misspelt operator must not fall back to the implied threshold unnoticed.
            raise self.fail(
                f"unknown key(s) {', '.join(unknown)} (operators: "
                f"{', '.join(op.value for op in Operator)})",
                where,
            )
        args: dict[str, Any] = dict(q.arguments or {})
        for key in _TOP_LEVEL_ARGUMENTS:
            if key not in args and key in raw:
                args[key] = raw[key]
        column = (prop.physicalName or prop.name) if prop is not None else None
        if prop is not None and not column:
            raise self.fail("property has no name", where)

        fields: dict[str, Any] = {}
        threshold = self.threshold(q, where)
        if qtype == "sql":
            name = "sql"
            kind = RuleKind.SQL
            if not (q.query or "").strip():
                raise self.fail("type: sql needs a `query`", where)
            fields["query"] = q.query
        elif qtype == "reconcile":
            name, kind = "reconcile", RuleKind.RECONCILE
            implementation = q.implementation
            try:
                fields["options"] = ReconcileOptions.of(implementation)
            except (ValueError, TypeError) as exc:
                raise self.fail(str(exc), where.child("implementation")) from exc
            given = implementation.get("column") if isinstance(implementation, dict) else None
            if given is not None:
                if not isinstance(given, str) or not given:
                    raise self.fail("column must be a column name", where.child("implementation"))
                if column is not None and given != column:
                    raise self.fail(
                        f"implementation.column {given!r} differs from the property {column!r}",
                        where.child("implementation"),
                    )
                column = given
        else:
            name = q.metric or q.rule or ""
            if not name and threshold is not None and prop is not None:
                # the RFC's Optional A: the operator compares each value (kinds/value_check.py)
                name, kind = "valueCheck", RuleKind.VALUE_CHECK
                fields = {"options": ValueCheckOptions.of(threshold)}
                threshold = None
            elif not name:
                if threshold is not None:
                    raise self.fail(
                        "a value check (an operator without a rule) compares the values of a "
                        "property: declare it under the property, or add `metric:`",
                        where,
                    )
                raise self.fail("quality entry needs `metric` (or `rule`)", where)
            else:
                kind, implied, fields = self._kind(name, args, where)
                if implied is not None:
                    # `noInvalidValues` + `mustBe: 0` (the RFC's IBAN example) says it twice
                    if threshold is not None and threshold != implied:
                        raise self.fail(
                            f"{name} implies {implied.operator.value}: {_written(implied)}; "
                            "the entry says "
                            f"{threshold.operator.value}: {_written(threshold)}",
                            where,
                        )
                    threshold = implied
        history = self._history(q, where)
        if history is not None:
            explicit = self.threshold(q, where)
            if history.compare.uses_threshold and explicit is None:
                raise self.fail(
                    f"a {history.compare.value} history rule needs an operator for the compared "
                    "quantity (e.g. mustBeBetween: [0.7, 1.3] for relativeChange)",
                    where,
                )
            if not history.compare.uses_threshold and explicit is not None:
                raise self.fail(
                    f"a {history.compare.value} history rule takes its band from k, not from "
                    f"{explicit.operator.value}",
                    where,
                )
        if threshold is None and history is not None and not history.compare.uses_threshold:
            # a stddev or seasonal band comes from k: the metric needs no operator of its own
            # (this one is never applied: the history verdict replaces the engine's)
            threshold = Threshold(Operator.GREATER_OR_EQUAL, 0)
        if threshold is None:
            if kind.needs_operator:
                raise self.fail(f"{name} needs an operator such as mustBeGreaterThan", where)
            # The threshold the kind implies: no offending rows; at least one row.
            operator, value = kind.implied
            threshold = Threshold(Operator(operator), value)

        columns: tuple[str, ...] = (column,) if column else ()
        if kind.scan == "grouped" and prop is None:
            keys = args.get("properties")
            if not isinstance(keys, list) or not keys or not all(isinstance(k, str) for k in keys):
                raise self.fail(
                    f"schema-level {name} needs arguments.properties: a list of column names"
                    + self._placement(),
                    where,
                )
            columns = tuple(keys)
        elif kind.columns == "one" and prop is None:
            raise self.fail(f"{name} must be declared on a property{self._placement()}", where)
        elif kind.columns == "none" and prop is not None:
            raise self.fail(f"{name} is a schema-level rule; declare it on the object", where)

        pattern = args.get("pattern")
        if pattern is not None:
            if not isinstance(pattern, str):
                raise self.fail("pattern must be a string", where)
            problem = pattern_refusal(pattern)
            if problem:  # one ERROR result at evaluation; the contract's other rules still run
                log.warning("%s: %s: %s", self.source, where, problem)
        action = self._action(q, where)
        unit = _UNITS.get((q.unit or "rows").lower())
        if unit is None:
            raise self.fail(f"unit must be rows or percent, not {q.unit!r}", where.child("unit"))
        rule_id = q.id or ".".join(
            x
            for x in (self.contract_id, object_name, prop.name if prop else None, name, str(index))
            if x
        )
        try:
            return Rule(
                id=rule_id,
                kind=kind,
                threshold=threshold,
                columns=columns,
                unit=unit,
                severity=q.severity,
                action=action,
                name=q.name,
                description=q.description,
                dimension=q.dimension,
                valid_values=args.get("validValues"),
                pattern=args.get("pattern"),
                missing_values=args.get("missingValues"),
                source=f"{self.source}: {where}",
                origin="odcs",
                constraint=name,
                history=history,
                **fields,
            )
        except ValueError as exc:
            raise self.fail(str(exc), where) from exc

    def _action(self, q: DataQuality, where: Where) -> str | None:
        """The entry's `action` custom property (seed 002's LOG/ALERT/BLOCK/QUARANTINE...)."""
        for i, prop in enumerate(q.customProperties or []):
            if prop.property in _ACTION_KEYS:
                try:
                    return parse_action(prop.value).value
                except ValueError as exc:
                    raise self.fail(str(exc), where.child("customProperties").child(i)) from exc
        return None

    def _history(self, q: DataQuality, where: Where) -> HistoryCheck | None:
        """The entry's `lineageQuality.history` custom property: compare with the past."""
        for i, prop in enumerate(q.customProperties or []):
            if prop.property == HISTORY_KEY:
                try:
                    return parse_history(prop.value)
                except ValueError as exc:
                    raise self.fail(str(exc), where.child("customProperties").child(i)) from exc
        return None

    def _kind(
        self, name: str, args: Mapping[str, Any], where: Where
    ) -> tuple[Kind, Threshold | None, dict[str, Any]]:
        """Kind, implied threshold (verb style) and extra rule fields of a metric name: the
        registered kind that reads the name says (kinds/)."""
        kind = reading_odcs(name)
        if kind is None:
            known = ", ".join(sorted([*odcs_names(), "has<Stat><Comparison>"]))
            raise self.fail(f"unknown metric {name!r}; known: {known}", where)
        try:
            implied, fields = kind.odcs(name, args)
        except ValueError as exc:
            raise self.fail(str(exc), where) from exc
        return kind, implied, fields

    # -- the schema itself ------------------------------------------------------------------

    def schema_rules(self, prop: SchemaProperty, object_name: str, where: Where) -> list[Rule]:
        """The property exists with its type; `required` means not null; `unique` unique."""
        column = prop.physicalName or prop.name
        if not column:
            raise self.fail("property has no name", where)
        base = f"{self.contract_id}.{object_name}.{prop.name}.schema"
        expected = None
        exact = False
        if prop.logicalType:
            if not known_type(prop.logicalType):
                raise self.fail(
                    f"unknown logicalType {prop.logicalType!r}", where.child("logicalType")
                )
            expected = prop.logicalType
        if prop.physicalType:
            if known_type(prop.physicalType):
                expected = prop.physicalType  # the more precise of the two
                exact = True
            else:
                log.warning(
                    "%s: %s: physicalType %r is not a Spark type; checking %s",
                    self.source,
                    where,
                    prop.physicalType,
                    expected or "existence only",
                )
        zero = Threshold(Operator.MUST_BE, 0)
        common: dict[str, Any] = {
            "columns": (column,),
            "threshold": zero,
            "origin": "odcs",
            "source": f"{self.source}: {where}",
        }
        rules = [
            Rule(
                id=f"{base}.type",
                kind=RuleKind.COLUMN_TYPE,
                expected_type=expected,
                exact_type=exact,
                name=f"{column}_{'type' if expected else 'exists'}",
                constraint="schema",
                description=f"{column} is present" + (f" with type {expected}" if expected else ""),
                **common,
            )
        ]
        for flag, kind, what in (
            (prop.required, RuleKind.NULL_VALUES, "required"),
            (prop.unique, RuleKind.DUPLICATE_VALUES, "unique"),
        ):
            if flag:
                rules.append(
                    Rule(
                        id=f"{base}.{what}",
                        kind=kind,
                        constraint=what,
                        name=f"{column}_{what}",
                        **common,
                    )
                )
        return rules
