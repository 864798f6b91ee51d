"""The canonical rule model every contract format compiles to. No Spark here."""

from __future__ import annotations

import enum
from typing import Any

import attrs

from lineage_quality.rules.actions import Action, effective_action, parse_action
from lineage_quality.rules.history import HistoryCheck
from lineage_quality.rules.threshold import Threshold


class RuleKind(enum.Enum):
    """What a rule measures. The value is the ODCS library metric name where there is one."""

    ROW_COUNT = "rowCount"  # rows in the dataset
    NULL_VALUES = "nullValues"  # rows where the column is null
    MISSING_VALUES = "missingValues"  # rows where the column is null or one of `missing_values`
    INVALID_VALUES = "invalidValues"  # non-null rows not in `valid_values` / not matching `pattern`
    DUPLICATE_VALUES = "duplicateValues"  # extra occurrences of a non-null key (`columns`)
    VALUE_RANGE = "valueRange"  # non-null rows outside [min_value, max_value]
    LENGTH_RANGE = "lengthRange"  # non-null rows whose string length is outside [min, max]
    CARDINALITY = (
        "cardinality"  # rows whose value count (array size; 0/1 for scalars) is out of range
    )
    DATE_FORMAT = "dateFormat"  # non-null rows that do not parse with `date_format`
    STATISTIC = "statistic"  # avg | sum | stddev | median | min | max of the column
    FRESHNESS = "freshness"  # rows younger than `min_age_seconds` / older than `max_age_seconds`
    SQL = "sql"  # the single number a read-only `query` returns
    COLUMN_TYPE = "columnType"  # the column exists (and has `expected_type`): 0 or 1 mismatch
    EXTRA_COLUMNS = "extraColumns"  # columns present but not declared (`valid_values`)

    @property
    def is_grouped(self) -> bool:
        """Grouped kinds need their own group-by pass; the others fuse into one aggregation."""
        return self is RuleKind.DUPLICATE_VALUES

    @property
    def counts_rows(self) -> bool:
        """Kinds whose metric is a count of offending rows (so `unit: percent` applies)."""
        return self in _ROW_COUNTING

    @property
    def is_schema(self) -> bool:
        """Kinds decided from the schema alone, without a scan."""
        return self in (RuleKind.COLUMN_TYPE, RuleKind.EXTRA_COLUMNS)


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
    kind: RuleKind
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

    def __attrs_post_init__(self) -> None:
        kind = self.kind
        if self.unit is Unit.PERCENT and not kind.counts_rows:
            raise ValueError(f"{kind.value} cannot use unit: percent")
        if kind is RuleKind.INVALID_VALUES and not (self.valid_values or self.pattern):
            raise ValueError("invalidValues needs validValues and/or pattern")
        if kind in _DATASET_LEVEL and self.columns:
            raise ValueError(f"{kind.value} is a schema-level rule and takes no column")
        if kind not in _DATASET_LEVEL and kind is not RuleKind.SQL and not self.columns:
            raise ValueError(f"{kind.value} needs a column")
        if kind in (RuleKind.VALUE_RANGE, RuleKind.LENGTH_RANGE, RuleKind.CARDINALITY):
            if self.min_value is None and self.max_value is None:
                raise ValueError(f"{kind.value} needs a minimum and/or a maximum")
            if (
                self.min_value is not None
                and self.max_value is not None
                and self.min_value > self.max_value
            ):
                raise ValueError(
                    f"{kind.value}: minimum {self.min_value:g} is greater than "
                    f"maximum {self.max_value:g}"
                )
        if kind is RuleKind.STATISTIC and self.statistic not in STATISTICS:
            raise ValueError(f"statistic must be one of {', '.join(STATISTICS)}")
        if kind is RuleKind.DATE_FORMAT and not self.date_format:
            raise ValueError("dateFormat needs a format")
        if (
            kind is RuleKind.FRESHNESS
            and self.min_age_seconds is None
            and (self.max_age_seconds is None)
        ):
            raise ValueError("freshness needs a minimum or maximum age")
        if kind is RuleKind.SQL and not (self.query or "").strip():
            raise ValueError("a sql rule needs a query")
        if self.action is not None:
            parse_action(self.action)
        if self.history is not None and kind.is_schema:
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
        if self.kind is RuleKind.INVALID_VALUES:
            return "accepted_values" if self.valid_values else "matches_regex"
        if self.kind is RuleKind.STATISTIC:
            return f"column_{self.statistic}"
        if self.kind is RuleKind.COLUMN_TYPE and self.expected_type is None:
            return "column_exists"
        if self.kind is RuleKind.DUPLICATE_VALUES and len(self.columns) > 1:
            return "unique_combination"
        return _ASSERTION[self.kind]

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
        return out


STATISTICS = ("avg", "sum", "stddev", "median", "min", "max")

_DATASET_LEVEL = frozenset({RuleKind.ROW_COUNT, RuleKind.EXTRA_COLUMNS})

_ROW_COUNTING = frozenset(
    {
        RuleKind.NULL_VALUES,
        RuleKind.MISSING_VALUES,
        RuleKind.INVALID_VALUES,
        RuleKind.DUPLICATE_VALUES,
        RuleKind.VALUE_RANGE,
        RuleKind.LENGTH_RANGE,
        RuleKind.CARDINALITY,
        RuleKind.DATE_FORMAT,
        RuleKind.FRESHNESS,
    }
)

_ASSERTION = {
    RuleKind.ROW_COUNT: "row_count",
    RuleKind.NULL_VALUES: "not_null",
    RuleKind.MISSING_VALUES: "not_missing",
    RuleKind.DUPLICATE_VALUES: "unique",
    RuleKind.VALUE_RANGE: "accepted_range",
    RuleKind.LENGTH_RANGE: "value_length_between",
    RuleKind.CARDINALITY: "cardinality",
    RuleKind.DATE_FORMAT: "date_format",
    RuleKind.FRESHNESS: "freshness",
    RuleKind.SQL: "custom_sql",
    RuleKind.COLUMN_TYPE: "column_type",
    RuleKind.EXTRA_COLUMNS: "no_extra_columns",
}
