"""Operators of ODCS quality entries and the threshold they express."""

from __future__ import annotations

import enum
import math

import attrs


class Operator(enum.Enum):
    """The ODCS v3 comparison operators, keyed by their YAML spelling."""

    MUST_BE = "mustBe"
    MUST_NOT_BE = "mustNotBe"
    GREATER_THAN = "mustBeGreaterThan"
    GREATER_OR_EQUAL = "mustBeGreaterOrEqualTo"
    LESS_THAN = "mustBeLessThan"
    LESS_OR_EQUAL = "mustBeLessOrEqualTo"
    BETWEEN = "mustBeBetween"
    NOT_BETWEEN = "mustNotBeBetween"

    @property
    def is_range(self) -> bool:
        return self in (Operator.BETWEEN, Operator.NOT_BETWEEN)


_SYMBOL = {
    Operator.MUST_BE: "==",
    Operator.MUST_NOT_BE: "!=",
    Operator.GREATER_THAN: ">",
    Operator.GREATER_OR_EQUAL: ">=",
    Operator.LESS_THAN: "<",
    Operator.LESS_OR_EQUAL: "<=",
}


Number = int | float  # integers stay integers: 2^53 + 1 must not become 2^53 through a float


def _number(value: Number) -> Number:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"a threshold must be a number, not {value!r}")
    return value


def _optional_number(value: Number | None) -> Number | None:
    return None if value is None else _number(value)


def _fmt(value: Number) -> str:
    if isinstance(value, int):
        return str(value)
    return str(int(value)) if value.is_integer() else repr(value)


@attrs.frozen
class Threshold:
    """`actual <operator> value` (or `low <= actual <= high` for the range operators).

    Bounds of mustBeBetween are inclusive, as in the ODCS text; mustNotBeBetween is its negation.
    """

    operator: Operator
    value: Number = attrs.field(default=0, converter=_number)
    high: Number | None = attrs.field(default=None, converter=_optional_number)

    def __attrs_post_init__(self) -> None:
        if self.operator.is_range:
            if self.high is None:
                raise ValueError(f"{self.operator.value} needs two bounds")
            if self.value > self.high:
                raise ValueError(
                    f"{self.operator.value}: lower bound {_fmt(self.value)} is greater than "
                    f"upper bound {_fmt(self.high)}"
                )
        elif self.high is not None:
            raise ValueError(f"{self.operator.value} takes one value, not a range")

    def holds(self, actual: Number) -> bool:
        """Whether `actual` meets the threshold. NaN never does. Python compares int with float
        exactly, so an integer measure is never rounded against an integer threshold."""
        if isinstance(actual, float) and math.isnan(actual):
            return False
        op, v = self.operator, self.value
        if op is Operator.MUST_BE:
            return actual == v
        if op is Operator.MUST_NOT_BE:
            return actual != v
        if op is Operator.GREATER_THAN:
            return actual > v
        if op is Operator.GREATER_OR_EQUAL:
            return actual >= v
        if op is Operator.LESS_THAN:
            return actual < v
        if op is Operator.LESS_OR_EQUAL:
            return actual <= v
        assert self.high is not None
        inside = v <= actual <= self.high
        return inside if op is Operator.BETWEEN else not inside

    def describe(self) -> str:
        """Human and facet form of the expectation, e.g. `== 0`, `between 1 and 5`."""
        if self.operator is Operator.BETWEEN:
            assert self.high is not None
            return f"between {_fmt(self.value)} and {_fmt(self.high)}"
        if self.operator is Operator.NOT_BETWEEN:
            assert self.high is not None
            return f"not between {_fmt(self.value)} and {_fmt(self.high)}"
        return f"{_SYMBOL[self.operator]} {_fmt(self.value)}"
