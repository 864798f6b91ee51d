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
