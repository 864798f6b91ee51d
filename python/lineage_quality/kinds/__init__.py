"""The rule kinds: one module per kind, each registered once (registry.py). `RuleKind` names the
built-in ones as code spells them (`RuleKind.NULL_VALUES`); `RuleKind("nullValues")` finds any
registered kind by value, one added later included.

    row_count.py  null_values.py  missing_values.py  invalid_values.py  duplicate_values.py
    value_range.py  length_range.py  cardinality.py  date_format.py  statistic.py
    freshness.py  sql.py  column_type.py  extra_columns.py  count.py  value_check.py
    reconcile.py

A new kind: one module with a `Kind` subclass, and `register(...)` of an instance
(docs/architecture.md, "Add a metric kind").
"""

from __future__ import annotations

from collections.abc import Iterator

from lineage_quality.kinds.cardinality import Cardinality
from lineage_quality.kinds.column_type import ColumnType
from lineage_quality.kinds.count import Count
from lineage_quality.kinds.date_format import DateFormat
from lineage_quality.kinds.duplicate_values import DuplicateValues
from lineage_quality.kinds.extra_columns import ExtraColumns
from lineage_quality.kinds.freshness import Freshness
from lineage_quality.kinds.invalid_values import InvalidValues
from lineage_quality.kinds.length_range import LengthRange
from lineage_quality.kinds.missing_values import MissingValues
from lineage_quality.kinds.null_values import NullValues
from lineage_quality.kinds.reconcile import Reconcile, ReconcileOptions
from lineage_quality.kinds.registry import (
    kind_named,
    odcs_names,
    reading_json,
    reading_odcs,
    register,
    registered,
    unregister,
)
from lineage_quality.kinds.row_count import RowCount
from lineage_quality.kinds.sql import Sql
from lineage_quality.kinds.statistic import Statistic
from lineage_quality.kinds.value_check import ValueCheck, ValueCheckOptions
from lineage_quality.kinds.value_range import ValueRange
from lineage_quality.rules.model import Kind, KindOptions


class _BuiltIn(type):
    """`RuleKind` iterates over the built-in kinds and finds any registered one by value."""

    _members: tuple[Kind, ...]

    def __iter__(cls) -> Iterator[Kind]:
        return iter(cls._members)

    def __call__(cls, value: str) -> Kind:
        return kind_named(value)


class RuleKind(metaclass=_BuiltIn):
    """The built-in kinds, in the order `check` and the docs list them."""

    ROW_COUNT = register(RowCount())
    NULL_VALUES = register(NullValues())
    MISSING_VALUES = register(MissingValues())
    INVALID_VALUES = register(InvalidValues())
    DUPLICATE_VALUES = register(DuplicateValues())
    VALUE_RANGE = register(ValueRange())
    LENGTH_RANGE = register(LengthRange())
    CARDINALITY = register(Cardinality())
    DATE_FORMAT = register(DateFormat())
    STATISTIC = register(Statistic())
    FRESHNESS = register(Freshness())
    SQL = register(Sql())
    COLUMN_TYPE = register(ColumnType())
    EXTRA_COLUMNS = register(ExtraColumns())
    COUNT = register(Count())
    VALUE_CHECK = register(ValueCheck())
    RECONCILE = register(Reconcile())


RuleKind._members = registered()

__all__ = [
    "Kind",
    "KindOptions",
    "ReconcileOptions",
    "RuleKind",
    "ValueCheckOptions",
    "kind_named",
    "odcs_names",
    "reading_json",
    "reading_odcs",
    "register",
    "registered",
    "unregister",
]
