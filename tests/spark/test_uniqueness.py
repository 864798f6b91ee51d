"""Duplicate counts on the hashed path (JVM helper KeyHashes) are exact: equal to the plain
group-by and to a count made in Python, for every key type it takes, with nulls, with floats
that group as equal (-0.0 and 0.0, NaNs), under a hash so weak that most keys collide, and when
too many hashes repeat (the plain path takes over)."""

from __future__ import annotations

import datetime as dt
import math
import random
from collections import Counter
from typing import Any

import pytest
from pyspark.sql import functions as F

from lineage_quality.engine import uniqueness
from lineage_quality.engine.uniqueness import (
    duplicate_count,
    grouped_duplicate_count,
    hashed_duplicate_count,
)

SCHEMA = (
    "i int, b bigint, s string, d double, ts timestamp, day date, dec decimal(10,2), flag boolean"
)


def _rows(n: int, seed: int) -> list[tuple[Any, ...]]:
    rnd = random.Random(seed)
    base = dt.datetime(2026, 1, 1)
    rows = []
    for k in range(n):
        j = k if rnd.random() > 0.2 else rnd.randrange(max(k, 1))  # ~20% repeat an earlier key
        rows.append(
            (
                None if rnd.random() < 0.05 else j % 5000,
                j * 7919,
                None if rnd.random() < 0.05 else f"k{j % 3000}",
                [0.0, -0.0, math.nan, float(j % 50)][rnd.randrange(4)],
                base + dt.timedelta(seconds=j % 4000),
                dt.date(2026, 1, 1) + dt.timedelta(days=j % 700),
                None,
                j % 2 == 0,
            )
        )
    return rows


def _expected(rows: list[tuple[Any, ...]], idx: list[int]) -> int:
    def norm(v: Any) -> Any:
        if isinstance(v, float):
            return "nan" if math.isnan(v) else v + 0.0  # -0.0 + 0.0 == 0.0, as Spark groups
        return v

    keys = [tuple(norm(r[i]) for i in idx) for r in rows if all(r[i] is not None for i in idx)]
    counts = Counter(keys)
    return sum(counts.values()) - len(counts)


KEYS = [["i"], ["b"], ["s"], ["d"], ["ts"], ["day"], ["flag"], ["s", "ts"], ["i", "s", "d"]]
NAMES = ["i", "b", "s", "d", "ts", "day", "dec", "flag"]


@pytest.fixture(scope="module")
def data(spark: Any) -> tuple[Any, list[tuple[Any, ...]]]:
    rows = _rows(20_000, 7)
    return spark.createDataFrame(rows, SCHEMA).repartition(4), rows


@pytest.mark.parametrize("keys", KEYS, ids=["+".join(k) for k in KEYS])
def test_hashed_path_is_exact(data: Any, keys: list[str]) -> None:
    df, rows = data
    helper = uniqueness.jvm_helper("KeyHashes", "KEY_HASHES")
    assert helper is not None, "the engine jar is not on spark.jars: run `make jars`"
    expected = _expected(rows, [NAMES.index(k) for k in keys])
    assert expected > 0
    assert hashed_duplicate_count(df, keys, helper, len(rows)) == expected
    assert grouped_duplicate_count(df, keys) == expected
    assert duplicate_count(df, keys, len(rows)) == expected  # small: the plain path
    assert duplicate_count(df, keys) == expected  # size unknown: the hashed path


@pytest.mark.parametrize("keys", [["s"], ["s", "ts"], ["d"]], ids=["s", "s+ts", "d"])
def test_collisions_never_change_the_count(
    data: Any, keys: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hash with 64 values: nearly every hash repeats, and the verification pass alone makes
    the count right (a crafted xxhash64 collision is the same case, rarer)."""
    df, rows = data
    monkeypatch.setattr(uniqueness, "key_hash", lambda cols: F.pmod(F.xxhash64(*cols), F.lit(64)))
    helper = uniqueness.jvm_helper("KeyHashes", "KEY_HASHES")
    expected = _expected(rows, [NAMES.index(k) for k in keys])
    assert hashed_duplicate_count(df, keys, helper, len(rows)) == expected


def test_too_many_repeated_hashes_fall_back(data: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    df, rows = data
    helper = uniqueness.jvm_helper("KeyHashes", "KEY_HASHES")
    monkeypatch.setattr(uniqueness, "MAX_CANDIDATES", 3)
    assert hashed_duplicate_count(df, ["s"], helper, len(rows)) is None  # says so
    assert duplicate_count(df, ["s"]) == _expected(rows, [2])  # the plain path answers


def test_unique_and_empty_keys(spark: Any) -> None:
    unique = spark.range(0, 5000).select(F.col("id"), F.concat(F.lit("x"), "id").alias("s"))
    assert duplicate_count(unique, ["id"], 5000) == 0
    assert duplicate_count(unique, ["s", "id"], 5000) == 0
    empty = unique.where(F.lit(False))
    assert duplicate_count(empty, ["id"], 0) == 0
    assert duplicate_count(empty, ["s", "id"], 0) == 0
