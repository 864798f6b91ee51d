"""Integer keys as bitmaps in the key-set shuffle (JVM helper `KeyBitmaps`): counted exactly as
their values are, whatever mix of bitmaps and values reaches a partition, and sent as bitmaps
when dense (a fraction of the shuffle's bytes)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

from lineage_quality.engine import key_sets, uniqueness
from lineage_quality.engine.uniqueness import KeyCounts

pytestmark = pytest.mark.spark

SCHEMA = "id BIGINT, small INT, tiny TINYINT, name STRING"


def _expected(rows: list[tuple[Any, ...]], at: list[int]) -> KeyCounts:
    keys = [tuple(r[i] for i in at) for r in rows if all(r[i] is not None for i in at)]
    return KeyCounts(len(keys), len(set(keys)))


def _df(spark: Any, parts: list[list[tuple[Any, ...]]]) -> Any:
    """One partition (one map task) per list, in order: which values each task holds is fixed."""
    rows = [r for part in parts for r in part]
    sc = spark.sparkContext
    rdd = sc.union([sc.parallelize(part, 1) for part in parts])
    assert rdd.glom().map(len).collect() == [len(p) for p in parts]
    return spark.createDataFrame(rdd, SCHEMA), rows


def _counts(df: Any, sets: list[list[str]], bitmaps: bool, mp: pytest.MonkeyPatch) -> Any:
    mp.setenv("LINEAGE_QUALITY_KEY_BITMAPS", "1" if bitmaps else "0")
    helper = uniqueness.jvm_helper("KeyHashes", "KEY_HASHES")
    return key_sets.packed_key_counts(df, sets, helper, df.count())


def _row(i: int | None, name: str | None = None) -> tuple[Any, ...]:
    small = None if i is None else i % 100_000
    tiny = None if i is None else i % 256 - 128
    return (i, small, tiny, name)


def _shapes() -> dict[str, list[list[tuple[Any, ...]]]]:
    rnd = random.Random(5)
    dense = list(range(40_000))
    rnd.shuffle(dense)
    sparse = [rnd.randrange(-(1 << 50), 1 << 50) for _ in range(3_000)]
    # task 2's first 256 ids fill the id key set's share of blocks (one value each: each is
    # then sent as a value), so its ids of block 15 travel as values; task 1 sends block 15 as
    # a bitmap (2,000 values): the partition of block 15 merges them
    full = [(k << 20) + 7 for k in range(1, 301)]
    return {
        "dense, repeated across tasks": [
            [_row(i) for i in dense[:25_000]],
            [_row(i) for i in dense[20_000:] + dense[:500]] + [_row(None)] * 10,
        ],
        "sparse, each block a value": [
            [_row(v) for v in sparse[:2_000]],
            [_row(v) for v in sparse[1_500:] + sparse[:10]],
        ],
        "negative and positive, mixed": [
            [_row(-i) for i in range(1, 5_000)] + [_row(v) for v in sparse[:400]],
            [_row(i - 2_500) for i in range(5_000)] + [_row(v) for v in sparse[300:700]],
        ],
        "a block in a bitmap and as values": [
            [_row(i) for i in range(1_000_000, 1_002_000)],
            [_row(v) for v in full] + [_row(i) for i in range(1_001_500, 1_002_500)],
        ],
        # 300 blocks of 1,024 values in one task: past the first 256 blocks as its values grow
        "more blocks than the first share": [
            [_row((i // 1024 << 16) + i % 1024) for i in range(300 * 1024)],
            [_row(i << 16) for i in range(0, 300, 7)],
        ],
    }


@pytest.mark.parametrize("shape", list(_shapes()))
def test_integer_keys_count_alike_in_bitmaps_and_as_values(
    spark: Any, monkeypatch: pytest.MonkeyPatch, shape: str
) -> None:
    df, rows = _df(spark, _shapes()[shape])
    sets = [["id"], ["small"], ["tiny"], ["name", "tiny"]]
    expected = [_expected(rows, [0]), _expected(rows, [1]), _expected(rows, [2])]
    expected.append(_expected(rows, [3, 2]))
    with_bitmaps = _counts(df, sets, True, monkeypatch)
    assert with_bitmaps == expected
    assert with_bitmaps == _counts(df, sets, False, monkeypatch)
    assert all(k is not None and k.read == len(rows) for k in with_bitmaps)


def test_a_block_sent_as_a_bitmap_and_as_values_counts_each_value_once(
    spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    df, _ = _df(spark, _shapes()["a block in a bitmap and as values"])
    (counted,) = _counts(df, [["id"]], True, monkeypatch)
    assert counted == KeyCounts(2_000 + 300 + 1_000, 2_000 + 300 + 500)


@pytest.fixture
def one_partition(spark: Any) -> Iterator[None]:
    """The key-set shuffle into one partition: every hash, value and bitmap meets there."""
    before = spark.conf.get("spark.sql.shuffle.partitions")
    spark.conf.set("spark.sql.shuffle.partitions", "1")
    yield
    spark.conf.set("spark.sql.shuffle.partitions", before)


def test_keys_checked_beside_values_merged_into_bitmaps(
    spark: Any, monkeypatch: pytest.MonkeyPatch, one_partition: None
) -> None:
    """A string key set shares the partition with an integer key's values that are merged into
    a bitmap there (and leave the partition's list): its hashes, weakened so that all collide,
    are still checked on the right bytes, and never taken for the integer key's values."""
    monkeypatch.setattr(uniqueness, "WEAK_HASH_MODULUS", 1)  # one hash
    full = [(k << 20) + 7 for k in range(1, 301)]
    parts = [
        [_row(i, f"n{i % 700}") for i in range(1_000_000, 1_002_000)],
        [_row(v, f"m{v % 13}") for v in full]
        + [_row(i, f"n{i % 900}") for i in range(1_001_500, 1_002_500)],
    ]
    df, rows = _df(spark, parts)
    counted = _counts(df, [["id"], ["name"]], True, monkeypatch)
    assert counted == [_expected(rows, [0]), _expected(rows, [3])]
    assert counted == _counts(df, [["id"], ["name"]], False, monkeypatch)


def test_more_bitmaps_than_one_chunk_holds(
    spark: Any, monkeypatch: pytest.MonkeyPatch, one_partition: None
) -> None:
    """70 dense blocks from one task to one partition: two chunks of bitmaps."""
    rows = [_row((i // 1024 << 16) + i % 1024) for i in range(70 * 1024)]
    df, _ = _df(spark, [rows, rows[:5_000]])
    (counted,) = _counts(df, [["id"]], True, monkeypatch)
    assert counted == KeyCounts(70 * 1024 + 5_000, 70 * 1024)


def _shuffled_bytes(spark: Any, run: Any) -> int:
    sc = spark.sparkContext
    empty = sc._jvm.java.util.ArrayList()
    no_quantiles = sc._gateway.new_array(sc._jvm.double, 0)

    def stages() -> dict[int, int]:
        # AppStatusStore.stageList(statuses, details, withSummaries, unsortedQuantiles, taskStatus)
        found = sc._jsc.sc().statusStore().stageList(empty, False, False, no_quantiles, empty)
        return {
            int(found.apply(i).stageId()): int(found.apply(i).shuffleWriteBytes())
            for i in range(found.size())
        }

    before = stages()
    run()
    return sum(b for s, b in stages().items() if s not in before)


def test_dense_ids_travel_as_bitmaps(spark: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LINEAGE_QUALITY_LOCAL_EXCHANGE", "0")  # a shuffle, to weigh its bytes
    df = spark.range(0, 400_000, 1, 2).selectExpr("id", "CAST(NULL AS STRING) AS name")
    sizes = {}
    for bitmaps in (True, False):
        found: list[Any] = []

        def run(b: bool = bitmaps, into: list[Any] = found) -> None:
            into.extend(_counts(df, [["id"]], b, monkeypatch))

        sizes[bitmaps] = _shuffled_bytes(spark, run)
        assert found == [KeyCounts(400_000, 400_000)]
    # 400k values: 3.2 MB as longs; as bitmaps, 4 blocks of 8 KiB per task
    assert sizes[False] > 1_000_000
    assert sizes[True] < sizes[False] / 10
