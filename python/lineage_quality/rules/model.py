"""The canonical rule model every contract format compiles to, and `Kind`, what a rule
measures (the kinds themselves are in kinds/). No Spark here."""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

import attrs

from lineage_quality.rules.actions import Action, effective_action, parse_action
from lineage_quality.rules.history import HistoryCheck
from lineage_quality.rules.threshold import Operator, Threshold

if TYPE_CHECKING:  # plain values, importing nothing of the rules
    from lineage_quality.values.datahub_shape import NativeAssertion, Shape
    from lineage_quality.values.metric import Metric


Columns = Literal["none", "one", "optional"]
# "across": judged across a run's datasets by the evaluator (a reconciliation), not by one scan
Scan = Literal["rows", "fused", "grouped", "schema", "sql", "across"]


@attrs.frozen
class KindOptions:
    """The typed parameters of a kind that brings its own (`Kind.options_type`); the fields of
    `Rule` hold those of the built-in kinds."""

    def params(self) -> dict[str, Any]:
        """As carried into the facet's `params` (and DataHub's native parameters)."""
        return {k: v for k, v in attrs.asdict(self).items() if v is not None}


class Kind:
    """What a rule measures: one instance per kind, registered by value (kinds/registry.py).

    A kind declares its contract names, what it needs (a column, an operator), its assertion
    name, whether it counts rows, how the plan measures it (`scan`, `metric`), its DataHub
    shape, and, when it measures something no built-in metric does, its analyzer. The layers
    above ask the kind; none of them lists the kinds (docs/architecture.md, "Add a metric kind").
    """

    value: str = ""  # the canonical name: the ODCS library metric where there is one
    assertion_name: str = ""  # the facet's `assertion` (dbt style)
    counts_rows: bool = False  # a count of offending rows: `unit: percent` applies, `failures`
    relative: bool = False  # `unit: percent` applies: relative to a number of its own
    columns: Columns = "one"  # "none": dataset-level; "one": on a column (or a key set)
    scan: Scan = "fused"  # how it is measured: the row count, the fused scan, its own pass...
    needs_operator: bool = False  # no implied threshold: the contract must give one
    implied: tuple[str, int | float] = ("mustBe", 0)  # the threshold when none is given
    priority: int = 2  # per field in `check`'s table: 0 existence, 1 completeness, 2 values
    odcs_metrics: tuple[str, ...] = ()  # ODCS `metric:` names (and 3.0 / RFC spellings)
    # verb-style ODCS names: (name, operator, the implied number or the argument holding it)
    odcs_verbs: tuple[tuple[str, str, int | float | str], ...] = ()
    json_key: str | None = None  # its key on a field of the schema-rules JSON format
    options_type: type[KindOptions] | None = None  # its typed parameters, if it has its own

    @property
    def name(self) -> str:
        """`nullValues` -> `NULL_VALUES`, as the kinds are spelt in code."""
        return re.sub(r"(?<!^)(?=[A-Z])", "_", self.value).upper()

    def __repr__(self) -> str:
        return f"<Kind {self.value}>"

    def __copy__(self) -> Kind:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Kind:
        return self  # one instance per kind: rules compare kinds by identity

    def validate(self, rule: Rule) -> None:
        """Raise ValueError, with the text a contract's author reads, for a rule that cannot
        be measured as declared."""

    def assertion(self, rule: Rule) -> str:
        return self.assertion_name

    def expected(self, rule: Rule) -> str | None:
        """What `check` shows as expected, when it is not the threshold."""
        return None

    def reads_odcs(self, name: str) -> bool:
        return name in self.odcs_metrics or any(verb[0] == name for verb in self.odcs_verbs)

    def odcs(
        self, name: str, arguments: Mapping[str, Any]
    ) -> tuple[Threshold | None, dict[str, Any]]:
        """The threshold an ODCS name implies (None: the entry's operator, or `implied`) and the
        rule's fields from the entry's `arguments`. ValueError names what is wrong."""
        threshold = None
        for verb, operator, implied in self.odcs_verbs:
            if verb == name:
                number = (
                    _argument_number(arguments, implied, name)
                    if isinstance(implied, str)
                    else implied
                )
                threshold = Threshold(Operator(operator), number)
        return threshold, self.options(arguments)

    def options(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """`{"options": ...}` of a kind with its own parameters, built from `arguments` (their
        validation is the options class's: a ValueError or TypeError names the argument)."""
        if self.options_type is None:
            return {}
        known = {f.name for f in attrs.fields(self.options_type)}
        given = {k: v for k, v in arguments.items() if k in known}
        try:
            return {"options": self.options_type(**given)}
        except TypeError as exc:
            raise ValueError(f"{self.value}: {exc}") from exc

    def json_rule(self, value: Any) -> tuple[Threshold, dict[str, Any]]:
        """The threshold and fields of a schema-rules JSON field's `json_key: value`."""
        raise ValueError(f"{self.value} has no schema-rules JSON key")

    def metric(self, rule: Rule, column: str, ctype: str) -> Metric | str:
        """The fused-scan metric this rule needs on `column` (Spark type `ctype`), or why it
        cannot run there (the rule becomes an ERROR, the others still run)."""
        return f"no fused metric for {self.value}"

    def datahub_shape(self, rule: Rule) -> Shape | None:
        """The structured fields of its CUSTOM DataHub assertion (scope, aggregation, operator,
        parameters), or None for the metric form with a native aggregation."""
        return None

    def datahub_native(self, rule: Rule) -> NativeAssertion | None:
        """Its DataHub native assertion type (VOLUME, FRESHNESS, DATA_SCHEMA, FIELD, SQL:
        values/datahub_shape.py) for a rule without history, or None: a CUSTOM assertion carrying
        `datahub_shape`. Pure: plain values, no SDK."""
        return None

    def datahub_native_history(self, rule: Rule) -> NativeAssertion | None:
        """The native type of a history rule (`rule.history`: a change from the previous run, a
        freshness across runs), where DataHub has one; None: CUSTOM, described by its history."""
        return None

    def analyzer(self) -> object:
        """The engine analyzer (engine/analyzers/base.py) of a metric named by this kind's value:
        only for a kind that measures what no built-in Measure does."""
        raise LookupError(f"{self.value} brings no analyzer")


def _argument_number(arguments: Mapping[str, Any], key: str, name: str) -> int | float:
    value = arguments.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} needs a numeric arguments.{key}")
    return value


class Unit(enum.Enum):
    ROWS = "rows"
    PERCENT = "percent"


def _tuple(value: Any) -> tuple[Any, ...]:
    return tuple(value)


def _optional_tuple(value: Any) -> tuple[Any, ...] | None:
    return None if value is None else tuple(value)


@attrs.frozen
class Rule:
    """One declared expectation on one dataset.

    `columns` is empty for dataset-level rules, one name for property rules, several for a
    compound key. `source` says where the rule was declared (file and key path), for messages.
    """

    id: str
    kind: Kind
    threshold: Threshold
    columns: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    unit: Unit = Unit.ROWS
    severity: str | None = None
    name: str | None = None
    description: str | None = None
    dimension: str | None = None
    valid_values: tuple[Any, ...] | None = attrs.field(default=None, converter=_optional_tuple)
    pattern: str | None = None
    missing_values: tuple[Any, ...] | None = attrs.field(default=None, converter=_optional_tuple)
    min_value: float | None = None
    max_value: float | None = None
    statistic: str | None = None
    date_format: str | None = None
    min_age_seconds: float | None = None
    max_age_seconds: float | None = None
    query: str | None = None
    expected_type: str | None = None
    exact_type: bool = False  # expected_type is a physical type: compared exactly, not by family
    max_length: int | None = None
    precision: int | None = None
    scale: int | None = None
    case_sensitive: bool = False  # column names match exactly (else as Spark: ignoring case)
    # Where the rule came from, for messages and stable ids: format ("odcs", "schema-json",
    # "shacl"), the constraint's own name in that format, and rules this one depends on (a rule
    # is SKIPPED when one of them fails, as in the schema-rules JSON format).
    origin: str = "odcs"
    constraint: str | None = None
    category: str | None = None
    action: str | None = None
    depends_on: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    source: str = ""
    # A history rule: its measurement is compared with its own earlier ones (rules/history.py)
    history: HistoryCheck | None = None
    # The typed parameters of a kind that brings its own (Kind.options_type)
    options: KindOptions | None = None
    # Seed 002's rule model: an inactive rule is not evaluated (SKIPPED); a filter condition (a
    # SQL predicate, sandboxed as `type: sql`) limits the rows the rule counts; tags and the
    # declared target (database, table, column) travel to the facet and DataHub.
    active: bool = True
    filter_condition: str | None = None
    tags: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    target: tuple[tuple[str, Any], ...] = attrs.field(default=(), converter=_tuple)

    def __attrs_post_init__(self) -> None:
        kind = self.kind
        if self.unit is Unit.PERCENT and not (kind.counts_rows or kind.relative):
            raise ValueError(f"{kind.value} cannot use unit: percent")
        if kind.columns == "none" and self.columns:
            raise ValueError(f"{kind.value} is a schema-level rule and takes no column")
        if kind.columns == "one" and not self.columns:
            raise ValueError(f"{kind.value} needs a column")
        kind.validate(self)
        if self.action is not None:
            parse_action(self.action)
        if self.history is not None and kind.scan == "schema":
            raise ValueError(f"{kind.value} measures no number to compare with the past")

    @property
    def effective_action(self) -> Action:
        """What a failure of this rule makes happen: the declared action, else by severity."""
        return effective_action(self.action, self.severity)

    @property
    def column(self) -> str | None:
        """The single column of a property rule; None for dataset-level or compound rules."""
        return self.columns[0] if len(self.columns) == 1 else None

    @property
    def assertion(self) -> str:
        """dbt-style assertion name used in the OpenLineage facet."""
        return self.kind.assertion(self)

    def params(self) -> dict[str, Any]:
        """The rule's parameters, as carried into the facet's `params`."""
        out: dict[str, Any] = {"metric": self.kind.value, "unit": self.unit.value}
        if len(self.columns) > 1:
            out["columns"] = list(self.columns)
        if self.valid_values is not None:
            out["validValues"] = list(self.valid_values)
        if self.pattern is not None:
            out["pattern"] = self.pattern
        if self.missing_values is not None:
            out["missingValues"] = list(self.missing_values)
        for key, value in (
            ("minValue", self.min_value),
            ("maxValue", self.max_value),
            ("statistic", self.statistic),
            ("dateFormat", self.date_format),
            ("minAgeSeconds", self.min_age_seconds),
            ("maxAgeSeconds", self.max_age_seconds),
            ("query", self.query),
            ("expectedType", self.expected_type),
            ("maxLength", self.max_length),
            ("precision", self.precision),
            ("scale", self.scale),
            ("dimension", self.dimension),
            ("constraint", self.constraint),
            ("category", self.category),
        ):
            if value is not None:
                out[key] = value
        if self.exact_type:
            out["exactType"] = True
        out["action"] = self.effective_action.value
        if self.case_sensitive:
            out["caseSensitive"] = True
        out["origin"] = self.origin
        out["ruleId"] = self.id
        if self.history is not None:
            out["history"] = self.history.params()
        if self.options is not None:
            out.update(self.options.params())
        if not self.active:
            out["isActive"] = False
        if self.filter_condition is not None:
            out["filterCondition"] = self.filter_condition
        if self.tags:
            out["tags"] = list(self.tags)
        if self.target:
            out["target"] = dict(self.target)
        return out


STATISTICS = ("avg", "sum", "stddev", "median", "min", "max")
