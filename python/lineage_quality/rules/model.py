"""The canonical rule model every contract format compiles to, and `Kind`, what a rule
measures (the kinds themselves are in kinds/). No Spark here."""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from types import MappingProxyType
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
    # One valid rule of the kind, as `Rule(...)` keywords besides id and kind (the threshold is
    # mustBe 0 unless given), and the DataHub assertion type it becomes: the every-kind tests
    # build their tables from these, so a new kind is its own module (docs/architecture.md).
    sample: Mapping[str, Any] = MappingProxyType({})
    datahub_type: str = "CUSTOM"

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
        if self.options_type is None or issubclass(self.options_type, BuiltInOptions):
            return {}  # a built-in kind's: the contract reader gives them by name
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


def optional_tuple(value: Any) -> tuple[Any, ...] | None:
    """A list of values as a tuple (None stays None): an options' value list, hashable."""
    return None if value is None else tuple(value)


# The parameters of the built-in kinds, as `Rule(...)` takes them and `Rule.x` reads them: each
# kind declares those it takes in its own options class (`Kind.options_type`, kinds/), held in
# `Rule.options`; none of them is a field of `Rule`.
PARAMETERS = (
    "valid_values", "pattern", "missing_values", "min_value", "max_value", "statistic",
    "date_format", "min_age_seconds", "max_age_seconds", "query", "expected_type", "exact_type",
    "max_length", "precision", "scale",
)  # fmt: skip


class BuiltInOptions(KindOptions):
    """The options of a built-in kind: taken as `Rule(...)` keywords (`PARAMETERS`), read as
    `Rule` properties, carried into the facet's `params` by `Rule.params` under their
    established names (so not by `params()` here)."""

    def params(self) -> dict[str, Any]:
        return {}


@attrs.frozen
class Declared:
    """How a rule was declared, beside what it checks: its words and metadata (to the facet and
    DataHub) and, from the schema-rules JSON's rule model, its tags and declared target."""

    description: str | None = None
    dimension: str | None = None
    constraint: str | None = None  # the constraint's own name in its format
    category: str | None = None
    tags: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    target: tuple[tuple[str, Any], ...] = attrs.field(default=(), converter=_tuple)


_DECLARED = tuple(f.name for f in attrs.fields(Declared))


@attrs.frozen(init=False)
class Rule:
    """One declared expectation on one dataset.

    `columns` is empty for dataset-level rules, one name for property rules, several for a
    compound key. `source` says where the rule was declared (file and key path), for messages.
    What a kind measures with (a value list, bounds, a query...) is in `options`, the kind's own
    class; `Rule(..., valid_values=...)` builds it, `rule.valid_values` reads it.
    """

    id: str
    kind: Kind
    threshold: Threshold
    columns: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    unit: Unit = Unit.ROWS
    severity: str | None = None
    name: str | None = None
    case_sensitive: bool = False  # column names match exactly (else as Spark: ignoring case)
    # Where the rule came from, for messages and stable ids: format ("odcs", "schema-json",
    # "shacl"), and rules this one depends on (a rule is SKIPPED when one of them fails, as in
    # the schema-rules JSON format).
    origin: str = "odcs"
    action: str | None = None
    depends_on: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    source: str = ""
    # A history rule: its measurement is compared with its own earlier ones (rules/history.py)
    history: HistoryCheck | None = None
    # The typed parameters of its kind (Kind.options_type)
    options: KindOptions | None = None
    # The schema-rules JSON's rule model: an inactive rule is not evaluated (SKIPPED); a filter
    # condition (a SQL predicate, sandboxed as `type: sql`) limits the rows the rule counts.
    active: bool = True
    filter_condition: str | None = None
    declared: Declared = attrs.field(factory=Declared)

    def __init__(
        self,
        id: str,
        kind: Kind,
        threshold: Threshold,
        columns: Any = (),
        unit: Unit = Unit.ROWS,
        severity: str | None = None,
        name: str | None = None,
        case_sensitive: bool = False,
        origin: str = "odcs",
        action: str | None = None,
        depends_on: Any = (),
        source: str = "",
        history: HistoryCheck | None = None,
        options: KindOptions | None = None,
        active: bool = True,
        filter_condition: str | None = None,
        declared: Declared | None = None,
        **parameters: Any,
    ) -> None:
        said = {k: parameters.pop(k) for k in _DECLARED if k in parameters}
        unknown = sorted(k for k in parameters if k not in PARAMETERS)
        if unknown:
            raise TypeError(f"Rule() got unexpected keyword argument(s) {', '.join(unknown)}")
        declared = declared or Declared()
        if said:  # as given, None included (`attrs.evolve(rule, constraint=None)` clears it)
            declared = attrs.evolve(declared, **said)
        options = _options(kind, options, parameters)
        self.__attrs_init__(
            id, kind, threshold, columns, unit, severity, name, case_sensitive, origin, action,
            depends_on, source, history, options, active, filter_condition, declared,
        )  # fmt: skip

    # -- the built-in kinds' parameters and the declaration, as they were always read ----------

    @property
    def valid_values(self) -> tuple[Any, ...] | None:
        return getattr(self.options, "valid_values", None)

    @property
    def pattern(self) -> str | None:
        return getattr(self.options, "pattern", None)

    @property
    def missing_values(self) -> tuple[Any, ...] | None:
        return getattr(self.options, "missing_values", None)

    @property
    def min_value(self) -> float | None:
        return getattr(self.options, "min_value", None)

    @property
    def max_value(self) -> float | None:
        return getattr(self.options, "max_value", None)

    @property
    def statistic(self) -> str | None:
        return getattr(self.options, "statistic", None)

    @property
    def date_format(self) -> str | None:
        return getattr(self.options, "date_format", None)

    @property
    def min_age_seconds(self) -> float | None:
        return getattr(self.options, "min_age_seconds", None)

    @property
    def max_age_seconds(self) -> float | None:
        return getattr(self.options, "max_age_seconds", None)

    @property
    def query(self) -> str | None:
        return getattr(self.options, "query", None)

    @property
    def expected_type(self) -> str | None:
        return getattr(self.options, "expected_type", None)

    @property
    def exact_type(self) -> bool:
        return bool(getattr(self.options, "exact_type", False))

    @property
    def max_length(self) -> int | None:
        return getattr(self.options, "max_length", None)

    @property
    def precision(self) -> int | None:
        return getattr(self.options, "precision", None)

    @property
    def scale(self) -> int | None:
        return getattr(self.options, "scale", None)

    @property
    def description(self) -> str | None:
        return self.declared.description

    @property
    def dimension(self) -> str | None:
        return self.declared.dimension

    @property
    def constraint(self) -> str | None:
        return self.declared.constraint

    @property
    def category(self) -> str | None:
        return self.declared.category

    @property
    def tags(self) -> tuple[str, ...]:
        return self.declared.tags

    @property
    def target(self) -> tuple[tuple[str, Any], ...]:
        return self.declared.target

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


def _options(
    kind: Kind, options: KindOptions | None, parameters: dict[str, Any]
) -> KindOptions | None:
    """`options` with the built-in parameters given (`PARAMETERS`) put in: the kind's own
    options class takes them; one it does not declare is a ValueError naming it."""
    given = {k: v for k, v in parameters.items() if v is not None and v is not False}
    if isinstance(options, BuiltInOptions):
        own = {f.name for f in attrs.fields(type(options))}
        if set(given) <= own:  # `attrs.evolve(rule, pattern=None)` clears it too
            return attrs.evolve(options, **{k: v for k, v in parameters.items() if k in own})
    if not given:
        return options
    wanted = kind.options_type
    known = set() if wanted is None else {f.name for f in attrs.fields(wanted)}
    extra = sorted(set(given) - known)
    if extra or wanted is None or not issubclass(wanted, BuiltInOptions):
        raise ValueError(f"{kind.value} takes no {', '.join(extra or sorted(given))}")
    if options is not None and not isinstance(options, BuiltInOptions):
        raise ValueError(f"{kind.value}: options given twice")
    return wanted(**given)


STATISTICS = ("avg", "sum", "stddev", "median", "min", "max")
