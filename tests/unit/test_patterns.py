"""Which patterns are refused before a scan (issue 9.3): nested or overlapping repetition that
java.util.regex would backtrack through for hours, ignoring cancellation."""

from __future__ import annotations

import pytest

from lineage_quality.rules.patterns import backtracking_problem, pattern_refusal


@pytest.mark.parametrize(
    "pattern",
    ["(a+)+$", "^(a|aa)+$", r"(\w+\s?)*$", "([a-z]+)*x", "(a*)*", r"(\d+)+", "([ab]+)+",
     "(?:x+x+)+y", "(?<n>a+)+"],
)  # fmt: skip
def test_catastrophic_patterns_are_refused(pattern: str) -> None:
    assert backtracking_problem(pattern) is not None
    refusal = pattern_refusal(pattern)
    assert refusal is not None and "possessive" in refusal


@pytest.mark.parametrize(
    "pattern",
    [r"^[a-z]+@[a-z]+\.[a-z]{2,}$", "(?:ab)+", "(a+)++", "(?>a+)+", r"^(\d|-)+$",
     r"^\d{3}-\d{4}$", r"\Q(a+)+\E", "[(a+)+]", r"^\p{Upper}+$"],
)  # fmt: skip
def test_ordinary_patterns_pass(pattern: str) -> None:
    assert pattern_refusal(pattern) is None


def test_a_pattern_that_does_not_compile_says_so() -> None:
    assert (pattern_refusal("(x") or "").startswith("pattern '(x' does not compile")
