"""Duplicate counts on the hashed path (JVM helper KeyHashes) are exact: equal to the plain
group-by and to a count made in Python, for every key type it takes, with nulls, with floats
that group as equal (-0.0 and 0.0, NaNs), under a hash so weak that most keys collide, and when
too many hashes repeat (the plain path takes over). Several key sets counted in one shuffle
(engine/key_sets.py) give exactly the counts of separate passes."""

from __future__ import annotations

import datetime as dt
import math
import random
from collections import Counter
from decimal import Decimal
from typing import Any

import pytest
from pyspark.sql import functions as F

from lineage_quality.engine import key_sets as packed_module
from lineage_quality.engine import uniqueness
from lineage_quality.engine.key_sets import SLOTS, key_set_counts, packed_key_counts
from lineage_quality.engine.uniqueness import (
    KeyCounts,
    duplicate_count,
    grouped_duplicate_count,
    grouped_key_counts,
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
    monkeypatch.setattr(uniqueness, "WEAK_HASH_MODULUS", 64)
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


# Several key sets in one shuffle (engine/key_sets.py): the counts of separate passes, exactly.

WIDE = 1 << 62  # a bigint past the packed hash bits: its key set's second, checked slot


def _with_wide(df: Any) -> Any:
    b = F.col("b")  # even values moved past 2^62: one-to-one, so as many duplicates as b
    return df.withColumn("wide", F.when(b % 2 == 0, b.bitwiseXOR(F.lit(WIDE))).otherwise(b))


PACKED_KEYS = [*KEYS, ["wide"]]


def _separate(df: Any, key_sets: list[list[str]]) -> list[KeyCounts]:
    return [grouped_key_counts(df, k) for k in key_sets]


def test_key_sets_in_one_pass_count_as_separate_passes(data: Any) -> None:
    """Nulls in key parts, floats that group as equal, an int and a bigint key, a key of two
    values (nearly every row a duplicate): each count is that of the key set's own pass."""
    df, rows = data
    df = _with_wide(df)
    helper = uniqueness.jvm_helper("KeyHashes", "KEY_HASHES")
    assert helper is not None, "the engine jar is not on spark.jars: run `make jars`"
    packed = packed_key_counts(df, PACKED_KEYS, helper, len(rows))
    assert packed == _separate(df, PACKED_KEYS)
    for keys, counted in zip(KEYS, packed, strict=False):
        assert counted is not None
        assert counted.duplicates == _expected(rows, [NAMES.index(k) for k in keys])
    assert packed[KEYS.index(["flag"])] == KeyCounts(len(rows), 2)


def test_collisions_never_change_the_counts_of_packed_key_sets(
    data: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hash with 64 values: every hashed slot is full of collisions, the bigint's checked
    slot too; the one check of all slots makes every count right."""
    df, rows = data
    df = _with_wide(df)
    monkeypatch.setattr(uniqueness, "WEAK_HASH_MODULUS", 64)
    helper = uniqueness.jvm_helper("KeyHashes", "KEY_HASHES")
    assert packed_key_counts(df, PACKED_KEYS, helper, len(rows)) == _separate(df, PACKED_KEYS)


def test_carried_keys_that_could_run_together_stay_apart(
    spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under a hash where every key collides, the partition tells keys apart by their bytes:
    strings whose concatenations agree ("ab", "c" against "a", "bc"), empty strings, a long
    string, binary values, wide decimals, -0.0 against 0.0 and NaNs (equal, as grouping has
    them), each key set's rows twice or three times."""
    monkeypatch.setattr(uniqueness, "WEAK_HASH_MODULUS", 1)  # one hash
    nan, long = float("nan"), "x" * 300
    base = [
        ("ab", "c", b"\x00", Decimal("1.5"), 0.0),
        ("a", "bc", b"\x00\x00", Decimal("2.5"), -0.0),
        ("", "abc", b"", Decimal("12345678901234567890123456789.5"), nan),
        ("abc", "", b"\x01", Decimal("-1.0"), 1.0),
        (long, "", b"\x01\x00", Decimal("0.0"), nan),
    ]
    rows = [r for r in base for _ in range(2)] + base[:2]
    schema = "a string, b string, bin binary, dec decimal(30,1), d double"
    df = spark.createDataFrame(rows, schema).repartition(3)
    helper = uniqueness.jvm_helper("KeyHashes", "KEY_HASHES")
    monkeypatch.setattr(packed_module, "_hidden_keys", None)  # a check pass would raise
    key_sets = [["a", "b"], ["bin"], ["dec"], ["d"], ["b", "a", "d"]]
    counted = packed_key_counts(df, key_sets, helper, len(rows))
    assert counted == _separate(df, key_sets)
    assert counted[0] == KeyCounts(12, 5) and counted[3] == KeyCounts(12, 3)


@pytest.mark.parametrize("keys", ["not carried", "past the budget"])
def test_a_key_set_with_too_many_repeated_hashes_falls_back_alone(
    data: Any, monkeypatch: pytest.MonkeyPatch, keys: str
) -> None:
    """Without its keys' bytes in the shuffle, a partition lists its repeated hashes for a
    check, and a key set past the limit takes the plain path alone."""
    df, rows = data
    helper = uniqueness.jvm_helper("KeyHashes", "KEY_HASHES")
    monkeypatch.setattr(uniqueness, "MAX_CANDIDATES", 3)
    if keys == "not carried":
        monkeypatch.setenv("LINEAGE_QUALITY_KEY_BYTES", "0")
    else:  # every partition drops the bytes it received
        monkeypatch.setattr(packed_module, "KEY_BYTES_PER_PARTITION", 0)
    key_sets = [["s"], ["flag"], ["b"]]  # s: thousands of repeated hashes; flag: 2; b: exact
    packed = packed_key_counts(df, key_sets, helper, len(rows))
    assert packed[0] is None  # says so, for s only
    assert packed[1:] == _separate(df, key_sets[1:])
    assert key_set_counts(df, key_sets) == _separate(df, key_sets)  # s by the plain path


def test_with_their_keys_repeated_hashes_are_checked_where_they_meet(
    data: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The keys' bytes travel with the hashes: each partition checks its own repeated hashes,
    however many (no limit, no plain path), lists none, and the counts are exact."""
    df, rows = data
    helper = uniqueness.jvm_helper("KeyHashes", "KEY_HASHES")
    monkeypatch.setattr(uniqueness, "MAX_CANDIDATES", 3)
    monkeypatch.setattr(packed_module, "_hidden_keys", None)  # a check pass would raise
    key_sets = [["s"], ["flag"], ["b"], ["d"], ["s", "ts"], ["i", "s", "d"]]
    assert packed_key_counts(df, key_sets, helper, len(rows)) == _separate(df, key_sets)


def test_a_failed_packed_pass_counts_each_key_set_alone(
    data: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    df, _ = data

    def broken(*_: Any) -> None:
        raise RuntimeError("the packed pass failed")

    monkeypatch.setattr(packed_module, "packed_key_counts", broken)
    assert key_set_counts(df, [["s"], ["b"]]) == _separate(df, [["s"], ["b"]])


def test_more_key_sets_than_slots_take_more_passes(data: Any) -> None:
    df, _ = data
    key_sets = [["s", c] for c in NAMES if c != "s"] * 3  # 21 key sets: two passes of 16 slots
    assert len(key_sets) > SLOTS
    assert key_set_counts(df, key_sets) == _separate(df, key_sets)


def test_small_datasets_and_unhashable_keys_take_the_plain_path(spark: Any) -> None:
    df = spark.createDataFrame(
        [(i % 7, [i % 5]) for i in range(100)], "k int, arr array<int>"
    ).repartition(2)
    expected = [KeyCounts(100, 7), KeyCounts(100, 5)]
    assert key_set_counts(df, [["k"], ["arr"]], 100) == expected
    assert key_set_counts(df, [["k"], ["arr"]]) == expected  # size unknown: k packed, arr plain


def _stages(spark: Any) -> dict[int, Any]:
    sc = spark.sparkContext
    jvm = sc._jvm
    empty = jvm.java.util.ArrayList()
    no_quantiles = sc._gateway.new_array(jvm.double, 0)
    # AppStatusStore.stageList(statuses, details, withSummaries, unsortedQuantiles, taskStatus)
    stages = sc._jsc.sc().statusStore().stageList(empty, False, False, no_quantiles, empty)
    return {stages.apply(i).stageId(): stages.apply(i) for i in range(stages.size())}


@pytest.fixture(scope="module")
def orders(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    path = str(tmp_path_factory.mktemp("orders") / "data")
    n = 20_000
    spark.range(0, n, 1, 4).select(
        F.when(F.col("id") % 1000 == 1, F.col("id") - 1).otherwise(F.col("id")).alias("order_id"),
        F.concat(F.lit("C"), (F.col("id") / 2).cast("long").cast("string")).alias("customer_id"),
        F.timestamp_seconds(
            F.when(F.col("id") % 500 == 1, F.col("id") - 1).otherwise(F.col("id"))
        ).alias("created_at"),
        F.when(F.col("id") % 10 == 0, F.lit(None)).otherwise(F.col("id") % 100).alias("code"),
    ).write.parquet(path)
    return spark.read.parquet(path), n


def _passes_over_source(spark: Any, fn: Any) -> tuple[Any, list[Any]]:
    """What `fn` returns, and the new stages that read the data (each a map stage of a shuffle)."""
    before = _stages(spark)
    out = fn()
    new = sorted((i, s) for i, s in _stages(spark).items() if i not in before)
    return out, [s for _, s in new if s.inputRecords() > 0]


@pytest.mark.parametrize("exchange", ["0", "1", "files"], ids=["shuffled", "in memory", "files"])
@pytest.mark.parametrize("carried", [True, False], ids=["keys carried", "keys not carried"])
def test_all_key_sets_take_one_pass_over_the_data(
    spark: Any, orders: Any, monkeypatch: pytest.MonkeyPatch, carried: bool, exchange: str
) -> None:
    """Three key sets (an integer key, a compound key, a key with nulls): one stage reads the
    data and shuffles the hashes of all of them, the checked keys' bytes beside their hashes
    (in local mode they go from task to task in memory, or past its bound through files of
    their own, instead: no shuffle). Without those bytes, one more stage reads it to check the
    rows of repeated hashes by their real key. Counted one by one, each key set reads it at
    least once."""
    if not carried:
        monkeypatch.setenv("LINEAGE_QUALITY_KEY_BYTES", "0")
    monkeypatch.setenv("LINEAGE_QUALITY_LOCAL_EXCHANGE", exchange)
    local = exchange != "0"
    df, n = orders
    key_sets = [["order_id"], ["customer_id", "created_at"], ["code"]]
    counted, reading = _passes_over_source(spark, lambda: key_set_counts(df, key_sets))
    assert counted == _separate(df, key_sets)
    assert len(reading) == (1 if carried else 2) and all(s.inputRecords() == n for s in reading)
    if local:
        assert reading[0].shuffleWriteRecords() == 0  # handed over in memory or files
    else:
        assert all(s.shuffleWriteRecords() > 0 for s in reading)
        # the hashes go as arrays of longs: far fewer shuffle records than hashes
        hashes = n + n + (n - n // 10)
        assert reading[0].shuffleWriteRecords() < hashes // 100
    one_by_one, alone = _passes_over_source(
        spark, lambda: [uniqueness.key_counts(df, k) for k in key_sets]
    )
    assert one_by_one == counted and len(alone) >= len(key_sets)
