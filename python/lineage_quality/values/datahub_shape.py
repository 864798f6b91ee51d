"""The standard shape of a DataHub dataset assertion (scope, aggregation, operator, parameters):
plain values, so a rule kind can declare its own (kinds/) without importing the DataHub mapping.
Enum values are DataHub's symbol names as strings."""

from __future__ import annotations

import math

import attrs

# DatasetAssertionScope
COLUMN, ROWS, SCHEMA = "DATASET_COLUMN", "DATASET_ROWS", "DATASET_SCHEMA"
NATIVE = "_NATIVE_"


def number(value: int | float) -> str:
    """A number as DataHub parameters and native parameters carry it: `0`, `2.5`; integers
    exactly, whatever their size."""
    if isinstance(value, int):
        return str(value)
    value = float(value)
    if math.isfinite(value) and value.is_integer():
        return str(int(value))
    return repr(value)


@attrs.frozen
class Param:
    """An AssertionStdParameter: `type` is NUMBER, STRING, LIST or SET."""

    value: str
    type: str = "NUMBER"


@attrs.frozen
class Shape:
    scope: str
    aggregation: str
    operator: str
    value: Param | None = None
    min_value: Param | None = None
    max_value: Param | None = None
    on_metric: bool = True  # the operator applies to the rule's metric (else: to each value)
    scale: float = 1.0  # rule metric -> aggregation value (0.01 for percent -> proportion)


# -- native assertion types ------------------------------------------------------------------
# What a kind declares with `Kind.datahub_native` (kinds/): one of the value classes below, each
# one of DataHub's native assertion types. A kind that declares none gets a CUSTOM assertion
# carrying its `Shape`. native.py turns these into DataHub's classes.


@attrs.frozen
class Bounds:
    """An AssertionStdOperator and its AssertionStdParameters: `GREATER_THAN 0`,
    `BETWEEN 1 and 5`, `NOT_NULL`."""

    operator: str
    value: Param | None = None
    min_value: Param | None = None
    max_value: Param | None = None


@attrs.frozen
class FieldSpec:
    """A SchemaFieldSpec / SchemaField: the column, DataHub's standard type name (`NUMBER`,
    `STRING`, `DATE`, ... or `UNKNOWN`) and the type as the contract or Spark spells it."""

    path: str
    type: str = "UNKNOWN"
    native_type: str = ""


@attrs.frozen
class Volume:
    """VOLUME: ROW_COUNT_TOTAL (`change` None), or ROW_COUNT_CHANGE (`change` ABSOLUTE: rows
    more than the previous run; PERCENTAGE: percent more)."""

    bounds: Bounds
    change: str | None = None


@attrs.frozen
class FreshnessWindow:
    """FRESHNESS (DATASET_CHANGE): the dataset changed within a FIXED_INTERVAL of `seconds`."""

    seconds: int


@attrs.frozen
class ExpectedSchema:
    """DATA_SCHEMA: the expected fields; `compatibility` EXACT_MATCH, SUPERSET (the dataset has
    at least these) or SUBSET (the dataset has no others)."""

    fields: tuple[FieldSpec, ...]
    compatibility: str


@attrs.frozen
class FieldValues:
    """FIELD (FIELD_VALUES): each value of `field` (its LENGTH with `transform`) meets `bounds`;
    the assertion fails when more than `fail_value` rows (COUNT) or percent (PERCENTAGE) do not."""

    field: FieldSpec
    bounds: Bounds
    fail_type: str = "COUNT"
    fail_value: int = 0
    exclude_nulls: bool = True
    transform: str | None = None


@attrs.frozen
class FieldMetric:
    """FIELD (FIELD_METRIC): a FieldMetricType of `field` (NULL_COUNT, MEAN, ...) meets `bounds`."""

    field: FieldSpec
    metric: str
    bounds: Bounds


@attrs.frozen
class SqlMetric:
    """SQL: the number `statement` returns (METRIC), or its change from the previous run
    (METRIC_CHANGE, `change` ABSOLUTE or PERCENTAGE), meets `bounds`."""

    statement: str
    bounds: Bounds
    change: str | None = None


NativeAssertion = Volume | FreshnessWindow | ExpectedSchema | FieldValues | FieldMetric | SqlMetric

# DataHub's AssertionType of each native form.
NATIVE_TYPES: dict[type, str] = {
    Volume: "VOLUME",
    FreshnessWindow: "FRESHNESS",
    ExpectedSchema: "DATA_SCHEMA",
    FieldValues: "FIELD",
    FieldMetric: "FIELD",
    SqlMetric: "SQL",
}
