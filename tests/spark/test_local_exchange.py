"""The key-set pass's chunks exchanged in memory where Spark runs in local mode (JVM helper
`LocalExchange`): the same counts and rows read as through a shuffle, for dense integer keys in
bitmaps, sparse ones and bigints past the hash bits, composite keys carrying their bytes and keys
whose hashes nearly all collide; a pass expected past its budget is not tried in memory and goes
through files (JVM helper `ChunkFiles`), a pass that passes it on the way gives up and goes through
files; without files, both shuffle; two passes at once count alike, and a failed pass holds
nothing and leaves no file."""

from __future__ import annotations

import datetime as dt
import random
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import functions as F

from lineage_quality.engine import key_sets, uniqueness
from lineage_quality.engine.uniqueness import KeyCounts

pytestmark = pytest.mark.spark

SETS = [["id"], ["customer", "at"], ["customer"], ["sparse"]]
NAMES = ["id", "customer", "at", "sparse"]
WIDE = 1 << 61  # past the packed hash bits (2^59): a bigint key's second, checked slot


@pytest.fixture(scope="module")
def orders(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, list[Any]]:
    rnd = random.Random(7)
    base = dt.datetime(2026, 1, 1)
    rows = []
    for k in range(60_000):
        j = k if rnd.random() > 0.05 else rnd.randrange(max(k, 1))  # ~5% repeat a key
        rows.append(
            (
                None if rnd.random() < 0.02 else j,
                None if rnd.random() < 0.02 else f"customer-{j % 9000:05d}",
                base + dt.timedelta(seconds=j),
                j * 1_000_003 + (WIDE if j % 50 == 0 else 0),  # sparse ids, a few past 2^59
            )
        )
    path = str(Path(tmp_path_factory.mktemp("local_exchange")) / "orders")
    spark.createDataFrame(
        rows, "id bigint, customer string, at timestamp, sparse bigint"
    ).repartition(4).write.parquet(path)
    return spark.read.parquet(path), rows


def _expected(rows: list[tuple[Any, ...]]) -> list[KeyCounts]:
    out = []
    for keys in SETS:
        at = [NAMES.index(k) for k in keys]
        found = [tuple(r[i] for i in at) for r in rows if all(r[i] is not None for i in at)]
        out.append(KeyCounts(len(found), len(set(found))))
    return out


def _exchanges(spark: Any) -> dict[str, int]:
    counts = spark._jvm.lineagequality.KeyHashes.localExchanges()
    used, declined, given_up, held, files, written = counts
    return {
        "used": used, "declined": declined, "given_up": given_up, "held": held, "files": files,
        "written": written,
    }  # fmt: skip


def _chunk_files(spark: Any) -> list[Path]:
    """The folders of key-chunk files in Spark's first local folder (each pass deletes its own)."""
    root = spark.sparkContext.getConf().get("spark.local.dir", tempfile.gettempdir())
    return sorted(Path(root.split(",")[0]).glob("lq-key-chunks-*"))


def _counted(df: Any, rows: int, told: int | None = None) -> list[Any]:
    """The counts, less the rows each pass read: checked here to be every row, either way."""
    found = key_sets.key_set_counts(df, SETS, rows if told is None else told)
    assert [c.read if isinstance(c, KeyCounts) else c for c in found] == [rows] * len(SETS)
    return [KeyCounts(c.rows, c.distinct) if isinstance(c, KeyCounts) else c for c in found]


NO_FILES = -(64 << 10)  # KeyHashes' localBudget for tests: 64 KiB in memory, then a shuffle
FILES = 64 << 10  # 64 KiB in memory, then files


@pytest.mark.parametrize("weak", [False, True], ids=["hashes", "nearly all colliding"])
def test_in_memory_files_and_shuffled_count_alike(
    spark: Any, orders: tuple[Any, list[Any]], monkeypatch: pytest.MonkeyPatch, weak: bool
) -> None:
    df, rows = orders
    if weak:  # every repeated hash is checked on the keys' bytes
        monkeypatch.setattr(uniqueness, "WEAK_HASH_MODULUS", 1_000)
    monkeypatch.setattr(uniqueness, "HASHED_FROM_ROWS", 0)
    before = _exchanges(spark)
    in_memory = _counted(df, len(rows))
    after = _exchanges(spark)
    assert after["used"] > before["used"]
    monkeypatch.setenv("LINEAGE_QUALITY_LOCAL_EXCHANGE", "0")
    shuffled = _counted(df, len(rows))
    assert _exchanges(spark)["used"] == after["used"]  # this one shuffled
    monkeypatch.setenv("LINEAGE_QUALITY_LOCAL_EXCHANGE", "files")
    through_files = _counted(df, len(rows))
    assert _exchanges(spark)["files"] == after["files"] + 1
    assert in_memory == shuffled == through_files == _expected(rows)
    assert _exchanges(spark)["held"] == 0
    assert _chunk_files(spark) == []


@pytest.mark.parametrize("files", [True, False], ids=["then files", "then a shuffle"])
def test_a_pass_expected_past_its_budget_is_not_tried_in_memory(
    spark: Any, orders: tuple[Any, list[Any]], monkeypatch: pytest.MonkeyPatch, files: bool
) -> None:
    df, rows = orders
    monkeypatch.setattr(uniqueness, "HASHED_FROM_ROWS", 0)
    monkeypatch.setattr(key_sets, "local_budget", lambda: FILES if files else NO_FILES)
    before = _exchanges(spark)
    assert _counted(df, len(rows)) == _expected(rows)
    after = _exchanges(spark)
    assert after["declined"] > before["declined"]
    assert after["used"] == before["used"] and after["given_up"] == before["given_up"]
    assert after["files"] == before["files"] + (1 if files else 0)
    assert (after["written"] > before["written"]) == files
    assert _chunk_files(spark) == []


@pytest.mark.parametrize("files", [True, False], ids=["then files", "then a shuffle"])
@pytest.mark.parametrize("weak", [False, True], ids=["hashes", "nearly all colliding"])
def test_a_pass_past_its_budget_on_the_way_gives_up(
    spark: Any,
    orders: tuple[Any, list[Any]],
    monkeypatch: pytest.MonkeyPatch,
    files: bool,
    weak: bool,
) -> None:
    """Told of one row, the pass expects a few bytes and starts in memory; its chunks pass the
    budget on the way: it gives up, and goes through files (or shuffles), and counts the same,
    colliding hashes checked on the keys' bytes read back from the files."""
    df, rows = orders
    if weak:
        monkeypatch.setattr(uniqueness, "WEAK_HASH_MODULUS", 1_000)
    monkeypatch.setattr(uniqueness, "HASHED_FROM_ROWS", 0)
    monkeypatch.setattr(key_sets, "local_budget", lambda: FILES if files else NO_FILES)
    before = _exchanges(spark)
    counted = _counted(df, len(rows), told=1)
    assert counted == _expected(rows)
    after = _exchanges(spark)
    assert after["given_up"] > before["given_up"]
    assert after["used"] == before["used"]
    assert after["files"] == before["files"] + (1 if files else 0)
    assert after["held"] == 0  # what the given-up pass had reserved is let go
    assert _chunk_files(spark) == []


def test_two_passes_at_once_count_alike(
    spark: Any, orders: tuple[Any, list[Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    df, rows = orders
    monkeypatch.setattr(uniqueness, "HASHED_FROM_ROWS", 0)
    before = _exchanges(spark)
    found: list[Any] = []
    threads = [
        threading.Thread(target=lambda: found.append(_counted(df, len(rows)))) for _ in range(2)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert found == [_expected(rows)] * 2
    after = _exchanges(spark)
    assert after["used"] >= before["used"] + 2 and after["held"] == 0


@pytest.mark.parametrize("exchange", ["1", "files"], ids=["in memory", "files"])
def test_a_failed_pass_holds_nothing(
    spark: Any, orders: tuple[Any, list[Any]], monkeypatch: pytest.MonkeyPatch, exchange: str
) -> None:
    """A row that fails its task, other tasks still running: the pass fails and reports it, and
    what its tasks had reserved is let go, late ones included, and its files deleted."""
    df, rows = orders
    monkeypatch.setattr(uniqueness, "HASHED_FROM_ROWS", 0)
    monkeypatch.setenv("LINEAGE_QUALITY_LOCAL_EXCHANGE", exchange)
    failing = df.repartition(6).withColumn(
        "customer",
        F.when(F.col("id") == 40_000, F.raise_error(F.lit("boom"))).otherwise(F.col("customer")),
    )
    found = key_sets.key_set_counts(failing, [["customer", "at"]], len(rows))
    assert isinstance(found[0], Exception) and "boom" in str(found[0])
    deadline = time.monotonic() + 10
    while _exchanges(spark)["held"] != 0 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _exchanges(spark)["held"] == 0
    assert _chunk_files(spark) == []
