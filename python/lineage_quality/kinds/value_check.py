"""valueCheck: the predefined-rules RFC's "Optional A" (seed 003): an operator with no rule on a
numeric property compares every value, `- mustBeGreaterThan: 1.0` meaning each non-null price is
above 1.0. Counted as the rows whose value fails the comparison; the rule passes with none.

The RFC lists it as optional; this project reads it (docs/rules.md, "Seed 003"). A null is no
value to compare: `nullValues` (or `required`) covers it."""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import attrs

from lineage_quality.engine.types import is_numeric
from lineage_quality.kinds.datahub_mapping import allows_no_offence
from lineage_quality.rules.model import Kind, KindOptions, Rule
from lineage_quality.rules.threshold import Operator, Threshold
from lineage_quality.values.datahub_shape import COLUMN, NATIVE, Param, Shape
from lineage_quality.values.metric import Metric

if TYPE_CHECKING:
    from lineage_quality.engine.analyzers.values import FailedValueCheck


def _number(value: Any) -> int | float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"a value check compares numbers, not {value!r}")
    return value


def _optional_number(value: Any) -> int | float | None:
    return None if value is None else _number(value)


@attrs.frozen
class ValueCheckOptions(KindOptions):
    """The comparison every value must meet: `check` is the ODCS operator, `value` (and `upTo`
    for the range operators) its number(s)."""

    check: str
    value: int | float = attrs.field(converter=_number)
    upTo: int | float | None = attrs.field(default=None, converter=_optional_number)

    def __attrs_post_init__(self) -> None:
        Threshold(Operator(self.check), self.value, self.upTo)  # ValueError: not a comparison

    @classmethod
    def of(cls, threshold: Threshold) -> ValueCheckOptions:
        return cls(threshold.operator.value, threshold.value, threshold.high)

    def describe(self) -> str:
        return Threshold(Operator(self.check), self.value, self.upTo).describe()


_DATAHUB = {
    "mustBe": "EQUAL_TO",
    "mustNotBe": "NOT_EQUAL_TO",
    "mustBeGreaterThan": "GREATER_THAN",
    "mustBeGreaterOrEqualTo": "GREATER_THAN_OR_EQUAL_TO",
    "mustBeLessThan": "LESS_THAN",
    "mustBeLessOrEqualTo": "LESS_THAN_OR_EQUAL_TO",
}


class ValueCheck(Kind):
    value = "valueCheck"
    # one valid rule of the kind (Rule(...) keywords; mustBe 0 unless given) and its DataHub type
    sample = MappingProxyType(
        {"columns": ("amount",), "options": ValueCheckOptions("mustBeGreaterThan", 1.0)}
    )
    datahub_type = "CUSTOM"
    assertion_name = "value_check"
    counts_rows = True  # the rows whose value fails the comparison

    def validate(self, rule: Rule) -> None:
        if not isinstance(rule.options, ValueCheckOptions):
            raise ValueError("a value check needs the comparison (an operator and its value)")

    def assertion(self, rule: Rule) -> str:
        return "value_check"

    def expected(self, rule: Rule) -> str | None:
        options = rule.options
        assert isinstance(options, ValueCheckOptions)
        return f"every value {options.describe()}"

    def metric(self, rule: Rule, column: str, ctype: str) -> Metric | str:
        if not is_numeric(ctype):
            return f"a value check compares numbers; {column} is {ctype}"
        options = rule.options
        assert isinstance(options, ValueCheckOptions)
        return Metric(
            self.value,
            column,
            arg=options.check,
            low=float(options.value),
            high=None if options.upTo is None else float(options.upTo),
        )

    def datahub_shape(self, rule: Rule) -> Shape | None:
        """Each value compared, when the rule allows no failing row; else the metric."""
        if not allows_no_offence(rule):
            return None
        options = rule.options
        assert isinstance(options, ValueCheckOptions)
        if options.check == "mustBeBetween" and options.upTo is not None:
            low, high = Param(str(options.value), "NUMBER"), Param(str(options.upTo), "NUMBER")
            return Shape(COLUMN, "IDENTITY", "BETWEEN", None, low, high, on_metric=False)
        operator = _DATAHUB.get(options.check)
        if operator is None:  # mustNotBeBetween: no DataHub operator says it
            return Shape(COLUMN, "IDENTITY", NATIVE, on_metric=False)
        value = Param(str(options.value), "NUMBER")
        return Shape(COLUMN, "IDENTITY", operator, value, on_metric=False)

    def analyzer(self) -> FailedValueCheck:
        from lineage_quality.engine.analyzers.values import FailedValueCheck

        return FailedValueCheck()
