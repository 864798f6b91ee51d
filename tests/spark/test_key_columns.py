"""The key-set pass hashed straight off a Parquet scan's column batches (JVM helper `KeyColumns`):
the same counts as the row path and as a count in Python, for every column type it reads, with
nulls, strings dictionary-encoded (first in a key or not) and plain, bigints past the hash bits,
under hashes weakened so that nearly all collide (its hashes must be Spark's xxhash64 for the
check pass to find their rows), and the row path wherever the scan is not a plain columnar one."""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path
from typing import Any

import pytest
from py4j.protocol import Py4JError
from pyspark.sql import functions as F

from lineage_quality.engine import key_sets, uniqueness
from lineage_quality.engine.uniqueness import KeyCounts

pytestmark = pytest.mark.spark

SCHEMA = (
    "id bigint, small int, tiny tinyint, sh smallint, name string, code string, day date, "
    "ts timestamp, d double"
)
WIDE = 1 << 61  # past the packed hash bits (2^59): a bigint key's second, checked slot
NAMES = ["id", "small", "tiny", "sh", "name", "code", "day", "ts", "d"]
SETS = [
    ["id"], ["small"], ["tiny"], ["sh"], ["name"], ["code", "ts"], ["day", "small"], ["ts"],
    ["ts", "code"],
]  # fmt: skip


def _rows(n: int, seed: int) -> list[tuple[Any, ...]]:
    rnd = random.Random(seed)
    base = dt.datetime(2026, 1, 1)
    rows = []
    for k in range(n):
        j = k if rnd.random() > 0.2 else rnd.randrange(max(k, 1))  # ~20% repeat an earlier key
        rows.append(
            (
                None if rnd.random() < 0.03 else (j ^ WIDE if j % 3 == 0 else j),
                None if rnd.random() < 0.03 else j % 7000,
                j % 256 - 128,
                None if rnd.random() < 0.03 else j % 30000 - 15000,
                # 64 bytes each: past the 1 MiB dictionary, the chunk's pages turn plain
                None if rnd.random() < 0.03 else f"{j:064d}",
                f"c{j % 40}",  # dictionary-encoded throughout
                dt.date(2026, 1, 1) + dt.timedelta(days=j % 900),
                base + dt.timedelta(seconds=j % 5000),
                float(j % 100),
            )
        )
    return rows


@pytest.fixture(scope="module")
def parquet(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[Any]]:
    rows = _rows(30_000, 3)
    path = str(tmp_path_factory.mktemp("key_columns") / "orders")
    spark.createDataFrame(rows, SCHEMA).repartition(3).write.parquet(path)
    return path, rows


def _expected(rows: list[tuple[Any, ...]], keys: list[str]) -> KeyCounts:
    at = [NAMES.index(k) for k in keys]
    found = [tuple(r[i] for i in at) for r in rows if all(r[i] is not None for i in at)]
    return KeyCounts(len(found), len(set(found)))


class _Spy:
    """The helper, noting whether each pass read the scan's columns (summarizeColumns answered)."""

    def __init__(self) -> None:
        self.inner = uniqueness.jvm_helper("KeyHashes", "KEY_HASHES")
        assert self.inner is not None, "the engine jar is not on spark.jars: run `make jars`"
        self.columnar: list[bool] = []

    def summarizeColumns(self, *args: Any) -> Any:
        out = self.inner.summarizeColumns(*args)
        self.columnar.append(out is not None)
        return out

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@pytest.fixture(params=["in memory", "files", "shuffled"], autouse=True)
def exchange(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every case three ways: chunks exchanged in memory (local mode, as here), through files (a
    pass past its bound in memory) and shuffled (as on a cluster)."""
    mode = {"in memory": "1", "files": "files", "shuffled": "0"}[request.param]
    monkeypatch.setenv("LINEAGE_QUALITY_LOCAL_EXCHANGE", mode)


def _counts(df: Any, sets: list[list[str]], mp: pytest.MonkeyPatch, columns: bool) -> Any:
    mp.setenv("LINEAGE_QUALITY_KEY_COLUMNS", "1" if columns else "0")
    spy = _Spy()
    counted = key_sets.packed_key_counts(df, sets, spy, df.count())
    assert spy.columnar == ([True] if columns else [])
    return counted


def test_columns_count_as_rows_do(
    spark: Any, parquet: tuple[str, list[Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    path, rows = parquet
    df = spark.read.parquet(path)
    counted = _counts(df, SETS, monkeypatch, True)
    assert counted == [_expected(rows, k) for k in SETS]
    assert all(c is not None and c.read == len(rows) for c in counted)
    assert counted == _counts(df, SETS, monkeypatch, False)
    assert all(c is not None and c.duplicates > 0 for c in counted)


@pytest.mark.parametrize("modulus", [1 << 20, 64, 1], ids=["2^20 hashes", "64 hashes", "one hash"])
@pytest.mark.parametrize("carried", [True, False], ids=["keys carried", "keys checked by a scan"])
def test_collisions_never_change_the_counts(
    spark: Any,
    parquet: tuple[str, list[Any]],
    monkeypatch: pytest.MonkeyPatch,
    modulus: int,
    carried: bool,
) -> None:
    """Without their keys in the shuffle, the repeated hashes are checked by a scan that hashes
    the rows with Spark's xxhash64 to find them. Under 2^20 hashes a few hundred keys collide
    among many that do not: hashes of the columns that differed from Spark's would find almost
    none of their rows, and miss the keys the collisions hid."""
    path, rows = parquet
    monkeypatch.setattr(uniqueness, "WEAK_HASH_MODULUS", modulus)
    monkeypatch.setenv("LINEAGE_QUALITY_KEY_BYTES", "1" if carried else "0")
    sets = [["id"], ["name"], ["code", "ts"], ["day", "small"], ["day", "code"]]
    counted = _counts(spark.read.parquet(path), sets, monkeypatch, True)
    assert counted == [_expected(rows, k) for k in sets]


@pytest.mark.parametrize("batch", [1000, 4096, 5000], ids=lambda b: f"batches of {b}")
def test_buffers_handed_on_mid_batch_count_each_row_once(
    spark: Any, parquet: tuple[str, list[Any]], monkeypatch: pytest.MonkeyPatch, batch: int
) -> None:
    """Under one hash all of a key set's rows go to one buffer, handed on full (4,096 hashes or
    64 KiB of keys) in the middle of a batch or at its end, whatever the reader's batch size:
    the helper takes a column's run of rows up again after the last row handed on, and each
    row is counted once."""
    path, rows = parquet
    monkeypatch.setattr(uniqueness, "WEAK_HASH_MODULUS", 1)
    key = "spark.sql.parquet.columnarReaderBatchSize"
    before = spark.conf.get(key, None)
    spark.conf.set(key, str(batch))
    try:
        sets = [["id"], ["name"], ["code", "ts"], ["day", "small"]]
        counted = _counts(spark.read.parquet(path), sets, monkeypatch, True)
    finally:
        if before is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, before)
    assert counted == [_expected(rows, k) for k in sets]
    assert all(c is not None and c.read == len(rows) for c in counted)


def test_what_the_columns_cannot_hash_takes_the_row_path(
    spark: Any, parquet: tuple[str, list[Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A double key (grouping makes -0.0 and NaN alike), a filtered scan, rows computed rather
    than read: the helper declines, and the row path counts them."""
    path, rows = parquet
    df = spark.read.parquet(path)
    cases = {
        "a double key": (df, [["d"], ["id"]], rows),
        "a filtered scan": (df.where(F.col("tiny") > 0), [["id"]], [r for r in rows if r[2] > 0]),
        "a computed column": (
            df.withColumn("small", F.col("small") + 1),
            [["small"]],
            [(r[0], None if r[1] is None else r[1] + 1, *r[2:]) for r in rows],
        ),
    }
    for name, (frame, sets, kept) in cases.items():
        spy = _Spy()
        counted = key_sets.packed_key_counts(frame, sets, spy, frame.count())
        assert spy.columnar == [False], name
        assert counted == [_expected(kept, k) for k in sets], name


@pytest.mark.parametrize("layout", ["parquet partitioned", "orc"])
def test_other_columnar_scans_count_as_rows_do(
    spark: Any,
    parquet: tuple[str, list[Any]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    layout: str,
) -> None:
    """A partition column (its batches hold it as a constant vector), ORC files, small integers
    and timestamp_ntz inside hashed keys, a column of nulls only."""
    path, _ = parquet
    df = (
        spark.read.parquet(path)
        .withColumn("part", (F.col("small") % 3).cast("int"))
        .withColumn("tsn", F.col("ts").cast("timestamp_ntz"))
        .withColumn("none", F.lit(None).cast("int"))
    )
    out = str(tmp_path / "data")
    if layout == "orc":
        df.write.orc(out)
        read = spark.read.orc(out)
    else:
        df.write.partitionBy("part").parquet(out)
        read = spark.read.parquet(out)
    sets = [["part", "tiny", "sh"], ["tsn", "small"], ["none"], ["part"], ["name", "tsn"]]
    counted = _counts(read, sets, monkeypatch, True)
    assert counted == _counts(read, sets, monkeypatch, False)
    assert counted == [uniqueness.grouped_key_counts(read, k) for k in sets]
    assert counted[2] == KeyCounts(0, 0)


def test_a_helper_without_the_column_path_takes_the_row_path(
    spark: Any, parquet: tuple[str, list[Any]]
) -> None:
    """An engine jar older than this module (no summarizeColumns): the rows are hashed."""
    path, rows = parquet

    class Old(_Spy):
        def summarizeColumns(self, *args: Any) -> Any:
            raise Py4JError("Method summarizeColumns([...]) does not exist")

    counted = key_sets.packed_key_counts(spark.read.parquet(path), SETS, Old(), len(rows))
    assert counted == [_expected(rows, k) for k in SETS]
