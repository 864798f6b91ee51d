"""The pattern DFA (engine/regex_dfa.py run by the JVM helper) gives exactly `rlike`'s answer,
row by row, on a corpus built to hit its edges: line terminators under `$`, non-ASCII bytes,
empty strings, nulls, and values that only match late."""

from __future__ import annotations

import random
from typing import Any

import pytest
from pyspark.sql import functions as F

from lineage_quality.engine import patterns
from lineage_quality.engine.columns import col
from lineage_quality.engine.expressions import column
from lineage_quality.engine.patterns import pattern_matches
from lineage_quality.engine.regex_dfa import compile_dfa

PATTERNS = [
    r"^[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}$",
    r"^[A-Z]{2}-\d{4}$",
    r"\d{3}",
    r"^ab*c?$",
    r"(?:foo|bar)baz",
    r"^(?:x|yz)+$",
    r"[^a-z]",
    r"^\s*$",
    r"a.c",
    r"^\w+\.\w{1,3}$",
    r"^$",
    r"colou?r",
    r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$",
    r"\.",
    r"^a{2,3}?b",
    r"end$",
]

FIXED = [
    "",
    "a@b.de",
    "a@b.de\n",
    "a@b.de\r\n",
    "a@b.de\r",
    "a@b.de\n\n",
    "\r\n",
    "\n",
    "AB-1234",
    "AB-1234\n",
    "AB-12345",
    "ab-1234",
    "ümlaut@b.de",
    "a@b.dé",
    "x123é",
    "ÄÖ",
    "é",
    "abc",
    "ac",
    "abbbc",
    "foobaz",
    "barbaz!",
    "fobaz",
    "xyzx",
    "xyzy",
    "   ",
    " \t\n",
    "a\nc",
    "a.c",
    "name.txt",
    "name.text",
    "color",
    "colour\n",
    "aab",
    "aaab",
    "aaaab",
    "the end",
    "the end\n",
    "the end\r\n",
    "endless",
    "123e4567-e89b-12d3-a456-426614174000",
    "123e4567-e89b-12d3-a456-42661417400Z",
]

ALPHABET = "aAbBcxyz019-_.@ \t\n\r%+éü€"


def _corpus(seed: int, count: int) -> list[Any]:
    rng = random.Random(seed)
    values: list[Any] = [*FIXED, None]
    for _ in range(count):
        size = rng.randint(0, 12)
        values.append("".join(rng.choice(ALPHABET) for _ in range(size)))
    # mutate the fixed values too, so near misses of every pattern are present
    for value in FIXED:
        if value:
            i = rng.randrange(len(value))
            values.append(value[:i] + rng.choice(ALPHABET) + value[i + 1 :])
    return values


def test_every_pattern_here_is_within_the_dfa_subset() -> None:
    # otherwise the comparison below would compare rlike with itself
    assert [p for p in PATTERNS if compile_dfa(p) is None] == []


def test_the_session_has_the_helper(spark: Any) -> None:
    assert patterns._helper() is not None, "the engine jar is not on spark.jars: run `make jars`"


@pytest.mark.parametrize("seed", [1, 2])
def test_dfa_equals_rlike_row_by_row(spark: Any, seed: int) -> None:
    values = _corpus(seed, 400)
    frame = spark.createDataFrame([(i, v) for i, v in enumerate(values)], "i long, v string")
    dfa_columns = [
        column(pattern_matches(col("v"), p).alias(f"d{n}")) for n, p in enumerate(PATTERNS)
    ]
    rlike_columns = [F.col("v").rlike(p).alias(f"r{n}") for n, p in enumerate(PATTERNS)]
    result = frame.select("i", "v", *dfa_columns, *rlike_columns)
    plan = result._jdf.queryExecution().executedPlan().toString()
    assert "lineagequality.RegexDfa" in plan, plan
    differences = []
    for row in result.collect():
        for n, pattern in enumerate(PATTERNS):
            if row[f"d{n}"] != row[f"r{n}"]:
                differences.append((pattern, row["v"], row[f"d{n}"], row[f"r{n}"]))
    assert differences == []
    # both answers happen for every pattern, or the corpus proves little
    rows = result.collect()
    for n, pattern in enumerate(PATTERNS):
        answers = {row[f"r{n}"] for row in rows if row["v"] is not None}
        assert answers == {True, False}, pattern


def test_null_in_null_out(spark: Any) -> None:
    frame = spark.createDataFrame([(None,)], "v string")
    row = frame.select(column(pattern_matches(col("v"), r"^a+$").alias("m"))).first()
    assert row is not None and row["m"] is None


def test_outside_the_subset_falls_back_to_rlike(spark: Any) -> None:
    pattern = r"(a)\1"  # a backreference: no DFA
    assert compile_dfa(pattern) is None
    frame = spark.createDataFrame([("aa",), ("ab",)], "v string")
    matches = column(pattern_matches(col("v"), pattern).alias("m"))
    got = [r["m"] for r in frame.select(matches).collect()]
    assert got == [True, False]


@pytest.mark.parametrize(
    ("damage", "said"),
    [
        (lambda t: t[:-1], "DFA table of 2853 bytes for 11 states"),
        (lambda t: t[:-2] + b"\xff\xff", "DFA table leads to state 65535 of 11"),
        (lambda t: b"\x00\x00\x00\x00" + t[4:], "DFA table of 0 states"),
    ],
)
def test_a_malformed_table_is_refused_when_its_column_is_built(
    spark: Any, damage: Any, said: str
) -> None:
    # the walk reads its table without bounds checks: every index is checked once, before
    from pyspark.errors import IllegalArgumentException

    table = compile_dfa(r"^[a-z]+@[a-z]+\.de$")
    assert table is not None and len(table) == 2854
    helper = patterns._helper()
    assert helper.column(F.col("v")._jc, table, "p") is not None
    with pytest.raises(IllegalArgumentException, match=said):
        helper.column(F.col("v")._jc, damage(table), "p")


def test_a_malformed_set_table_is_refused_when_its_column_is_built(spark: Any) -> None:
    from pyspark.errors import IllegalArgumentException

    from lineage_quality.engine.regex_dfa_set import compile_dfa_set

    table = compile_dfa_set([r"^[a-z]+$", r"^[0-9]+$"])
    assert table is not None
    helper = patterns._helper()
    assert helper.columnAll(F.col("v")._jc, table, ["a", "b"]) is not None
    for damaged in (table[:-1], table[:-2] + b"\xff\xff"):
        with pytest.raises(IllegalArgumentException, match=r"DFA set table|DFA table leads"):
            helper.columnAll(F.col("v")._jc, damaged, ["a", "b"])


def test_a_value_too_deep_for_java_regex_fails_the_query_and_not_the_jvm(spark: Any) -> None:
    # a non-ASCII value goes to java.util.regex, which recurses per repetition of a group: a
    # StackOverflowError there would make Spark end the JVM (the evaluator with it)
    from py4j.protocol import Py4JJavaError

    frame = spark.createDataFrame([("a" * 1_000_000 + "é",), ("ab",)], "v string")
    pattern = r"(a|b)*a(a|b){3}"
    assert compile_dfa(pattern) is not None
    with pytest.raises(Py4JJavaError, match=r"java\.util\.regex ran out of stack matching"):
        frame.select(column(pattern_matches(col("v"), pattern).alias("m"))).collect()
    assert spark.range(3).count() == 3  # the session lives on
