"""The canonical rule model every contract format compiles to. No Spark here."""

from __future__ import annotations

import enum
from typing import Any

import attrs

from lineage_quality.rules.threshold import Threshold


class RuleKind(enum.Enum):
    """What a rule measures. The value is the ODCS library metric name."""

    ROW_COUNT = "rowCount"
    NULL_VALUES = "nullValues"
    MISSING_VALUES = "missingValues"
    INVALID_VALUES = "invalidValues"
    DUPLICATE_VALUES = "duplicateValues"

    @property
    def is_grouped(self) -> bool:
        """Grouped kinds need their own group-by pass; the others fuse into one aggregation."""
        return self is RuleKind.DUPLICATE_VALUES

    @property
    def counts_rows(self) -> bool:
        """Kinds whose metric is a count of offending rows (so `unit: percent` applies)."""
        return self is not RuleKind.ROW_COUNT


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
    source: str = ""

    def __attrs_post_init__(self) -> None:
        if self.unit is Unit.PERCENT and not self.kind.counts_rows:
            raise ValueError(f"{self.kind.value} cannot use unit: percent")
        if self.kind is RuleKind.INVALID_VALUES and not (self.valid_values or self.pattern):
            raise ValueError("invalidValues needs validValues and/or pattern")
        if self.kind is RuleKind.ROW_COUNT and self.columns:
            raise ValueError("rowCount is a schema-level rule and takes no column")
        if self.kind is not RuleKind.ROW_COUNT and not self.columns:
            raise ValueError(f"{self.kind.value} needs a column")

    @property
    def column(self) -> str | None:
        """The single column of a property rule; None for dataset-level or compound rules."""
        return self.columns[0] if len(self.columns) == 1 else None

    @property
    def assertion(self) -> str:
        """dbt-style assertion name used in the OpenLineage facet."""
        if self.kind is RuleKind.INVALID_VALUES:
            return "accepted_values" if self.valid_values else "matches_regex"
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
        if self.dimension is not None:
            out["dimension"] = self.dimension
        out["ruleId"] = self.id
        return out


_ASSERTION = {
    RuleKind.ROW_COUNT: "row_count",
    RuleKind.NULL_VALUES: "not_null",
    RuleKind.MISSING_VALUES: "not_missing",
    RuleKind.DUPLICATE_VALUES: "unique",
}
