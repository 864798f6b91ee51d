"""The pattern DFA compiler (pure): which patterns it translates, and that its tables answer
like a regex `search` on ASCII input. The JVM walk of the same tables is compared with Spark's
`rlike` in tests/spark/test_patterns_dfa.py."""

from __future__ import annotations

import random
import re

import pytest

from lineage_quality.engine.regex_dfa import compile_dfa, run_dfa

TRANSLATED = [
    r"^[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}$",
    r"^[A-Z]{2}-\d{4}$",
    r"\d{3}",
    r"(?:foo|bar)baz",
    r"^(?:x|yz)+$",
    r"[^a-z]",
    r"^\s*\S+?$",
    r"a.c",
    r"^\w{1,3}\W$",
    r"^$",
    r"colou?r",
    r"^a{2,3}?b",
    r"[-a]",
    r"[a-]",
    r"\.\*\+",
]

NOT_TRANSLATED = [
    r"(a)\1",  # backreference
    r"(?i)abc",  # flags
    r"a(?=b)",  # look-ahead
    r"a++",  # possessive
    r"\bword\b",  # word boundary
    r"\p{L}+",  # unicode property
    r"[a-z&&[^x]]",  # class intersection
    r"[a-c-e]",  # '-' in the middle of a class
    r"^a|b$",  # anchors around a top-level alternation
    r"a{100}",  # count above the limit
    "é+",  # a non-ASCII literal
    r"[a",  # unterminated class
    r"(ab",  # unbalanced group
    r"*a",  # nothing to repeat
    r"\Qa.b\E",  # quoting
]


@pytest.mark.parametrize("pattern", TRANSLATED)
def test_translated(pattern: str) -> None:
    assert compile_dfa(pattern) is not None


@pytest.mark.parametrize("pattern", NOT_TRANSLATED)
def test_not_translated(pattern: str) -> None:
    assert compile_dfa(pattern) is None


def test_a_pattern_whose_dfa_explodes_is_left_to_rlike() -> None:
    # (a|b)*a(a|b){n}: the DFA needs 2**(n+1) states
    assert compile_dfa(r"[ab]*a[ab]{12}") is None
    assert compile_dfa(r"[ab]*a[ab]{3}") is not None


# `\r` is left out: Python's `.` matches it, Java's does not (checked separately below).
ALPHABET = "abcxyz019AZ-_.@ \t\n%+*"


def _corpus(seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 10))) for _ in range(3000)]


@pytest.mark.parametrize("pattern", TRANSLATED)
def test_the_table_answers_like_search(pattern: str) -> None:
    table = compile_dfa(pattern)
    assert table is not None
    expected = re.compile(pattern, re.ASCII)
    answers = set()
    extra = ["a@b.de", "AB-1234", "foobaz", "xyzx", "aab", ".*+", "color", "colour"]
    for value in [*_corpus(7), *extra]:
        got = run_dfa(table, value)
        if got is None:  # a "$" pattern on a value ending in "\n": java.util.regex decides
            assert pattern.endswith("$") and value.endswith("\n")
            continue
        # Python's `$` also matches before a final "\n"; those values were handed over above
        assert got == bool(expected.search(value)), (pattern, value)
        answers.add(got)
    assert answers == {True, False}, pattern


def test_dot_excludes_carriage_return_as_in_java() -> None:
    table = compile_dfa("a.c")
    assert table is not None
    assert run_dfa(table, "abc") is True
    assert run_dfa(table, "a\rc") is False
    assert run_dfa(table, "a\nc") is False


def test_dollar_before_a_final_terminator_is_handed_to_java() -> None:
    table = compile_dfa("^ab$")
    assert table is not None
    assert run_dfa(table, "ab") is True
    assert run_dfa(table, "ab\n") is None
    assert run_dfa(table, "ab\r") is None
    assert run_dfa(table, "abc") is False


def test_non_ascii_values_are_handed_to_java() -> None:
    table = compile_dfa("[^a-z]")
    assert table is not None
    assert run_dfa(table, "abcé") is None
    assert run_dfa(table, "abc") is False
    assert run_dfa(table, "abC") is True
