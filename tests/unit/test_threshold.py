import math

import pytest

from lineage_quality.rules import Operator, Threshold


@pytest.mark.parametrize(
    ("op", "value", "actual", "holds"),
    [
        (Operator.MUST_BE, 0, 0, True),
        (Operator.MUST_BE, 0, 1, False),
        (Operator.MUST_NOT_BE, 0, 1, True),
        (Operator.MUST_NOT_BE, 0, 0, False),
        (Operator.GREATER_THAN, 5, 5, False),
        (Operator.GREATER_THAN, 5, 6, True),
        (Operator.GREATER_OR_EQUAL, 5, 5, True),
        (Operator.LESS_THAN, 5, 5, False),
        (Operator.LESS_THAN, 5, 4.99, True),
        (Operator.LESS_OR_EQUAL, 5, 5, True),
        (Operator.LESS_OR_EQUAL, 5, 5.01, False),
    ],
)
def test_single_value_operators(op: Operator, value: float, actual: float, holds: bool) -> None:
    assert Threshold(op, value).holds(actual) is holds


def test_between_is_inclusive_and_not_between_is_its_negation() -> None:
    between = Threshold(Operator.BETWEEN, 1, 5)
    outside = Threshold(Operator.NOT_BETWEEN, 1, 5)
    for actual, inside in [(0.99, False), (1, True), (3, True), (5, True), (5.01, False)]:
        assert between.holds(actual) is inside
        assert outside.holds(actual) is not inside


def test_nan_never_holds() -> None:
    for op in (Operator.MUST_NOT_BE, Operator.LESS_THAN, Operator.GREATER_THAN):
        assert not Threshold(op, 0).holds(math.nan)
    assert not Threshold(Operator.NOT_BETWEEN, 0, 1).holds(math.nan)


def test_range_validation() -> None:
    with pytest.raises(ValueError, match="lower bound 5 is greater than upper bound 1"):
        Threshold(Operator.BETWEEN, 5, 1)
    with pytest.raises(ValueError, match="needs two bounds"):
        Threshold(Operator.BETWEEN, 5)
    with pytest.raises(ValueError, match="takes one value"):
        Threshold(Operator.LESS_THAN, 5, 6)


def test_describe() -> None:
    assert Threshold(Operator.MUST_BE, 0).describe() == "== 0"
    assert Threshold(Operator.LESS_THAN, 2.5).describe() == "< 2.5"
    assert Threshold(Operator.BETWEEN, 1, 5).describe() == "between 1 and 5"
    assert Threshold(Operator.NOT_BETWEEN, 1, 5).describe() == "not between 1 and 5"
