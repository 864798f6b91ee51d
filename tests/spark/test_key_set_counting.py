"""The key-set pass's pieces: the JVM helper's per-partition counts (`HashCounts`, which
`KeyHashes` runs on each partition of its shuffle) against a count made in Python, on every path
it takes (sorted small partitions, buckets counted in tables, a bucket too large for a table, a
bucket of hashes crafted to share table slots), and key sets counted beside the fused scan: in
the caller's job group, with the same results as counted after it."""

from __future__ import annotations

import random
import struct
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from lineage_quality.engine import key_sets, uniqueness
from lineage_quality.engine import run as engine_run
from lineage_quality.engine.run import evaluate_dataframe
from lineage_quality.kinds import RuleKind
from lineage_quality.results import Status
from lineage_quality.rules import Operator, Rule, Threshold

pytestmark = pytest.mark.spark

SLOT_MIX = 0xFF51AFD7ED558CCD  # HashCounts' table multiplier, to craft hashes that share slots
BUCKET_MIX = 0xC2B2AE3D27D4EB4F  # HashCounts' bucket multiplier, to put them in one bucket
U64 = 1 << 64


def _signed(v: int) -> int:
    return (v + (1 << 63)) % U64 - (1 << 63)


def _java_longs(spark: Any, values: list[int]) -> Any:
    """`values` as a Java long[] (one py4j transfer, not one per element)."""
    sc = spark.sparkContext
    raw = struct.pack(f">{len(values)}q", *[_signed(v) for v in values])
    out = sc._gateway.new_array(sc._jvm.long, len(values))
    sc._jvm.java.nio.ByteBuffer.wrap(bytearray(raw)).asLongBuffer().get(out)
    return out


def _counted(spark: Any, keys: list[int], bits: int, listed: int, limit: int) -> Any:
    found = list(
        spark._jvm.lineagequality.HashCounts.of(_java_longs(spark, keys), bits, listed, limit)
    )
    sets = 1 << bits
    rows, distinct, overflow = found[:sets], found[sets : 2 * sets], found[2 * sets]
    return rows, distinct, overflow, sorted(found[2 * sets + 1 :])


def _expected(keys: list[int], bits: int, listed: int, limit: int) -> Any:
    sets = 1 << bits
    rows, distinct = [0] * sets, [0] * sets
    repeated: dict[int, list[int]] = {s: [] for s in range(sets)}

    def set_of(k: int) -> int:
        return 0 if bits == 0 else (k % U64) >> (64 - bits)

    for k, n in Counter(_signed(k) for k in keys).items():
        s = set_of(k)
        rows[s] += n
        distinct[s] += 1
        if n > 1 and listed >> s & 1:
            repeated[s].append(k)
    overflow = sum(1 << s for s in range(sets) if len(repeated[s]) > limit)
    kept = sorted(k for s in range(sets) if not overflow >> s & 1 for k in repeated[s])
    return rows, distinct, overflow, kept


def _slotted(rnd: random.Random, n: int, bits: int, repeat: float) -> list[int]:
    """`n` hashes spread over 2^bits key sets (the top bits), `repeat` of them repeating one."""
    out: list[int] = []
    for _ in range(n):
        if out and rnd.random() < repeat:
            out.append(rnd.choice(out))
        else:
            out.append(rnd.getrandbits(64 - bits) | (rnd.randrange(1 << bits) << (64 - bits)))
    return out


@pytest.mark.parametrize("n", [0, 1, 300, 5_000, 200_000], ids=lambda n: f"{n}-hashes")
def test_partition_counts_match_a_count_in_python(spark: Any, n: int) -> None:
    keys = _slotted(random.Random(n), n, 2, 0.1)
    for listed in (0b0000, 0b0110, 0b1111):
        args = (keys, 2, listed, 1_000_000)
        assert _counted(spark, *args) == _expected(*args)


def test_a_key_set_past_its_limit_is_flagged_alone(spark: Any) -> None:
    keys = _slotted(random.Random(3), 20_000, 1, 0.3)
    args = (keys, 1, 0b11, 500)
    counted = _counted(spark, *args)
    assert counted == _expected(*args)
    assert counted[2] == 0b11 or counted[3]  # a set flagged, or listed within the limit


def test_a_key_on_most_rows_and_small_integers(spark: Any) -> None:
    """A bucket larger than any table (one key on 100k rows) is sorted; integer keys that are
    their own hash (0, 1, 2, ...) are spread by the mix, not by their low bits."""
    rnd = random.Random(5)
    keys = [42] * 100_000 + [rnd.randrange(1 << 40) for _ in range(50_000)] + list(range(30_000))
    rnd.shuffle(keys)
    args = (keys, 0, 1, 1_000_000)
    assert _counted(spark, *args) == _expected(*args)


def test_hashes_crafted_to_share_table_slots_are_still_counted_exactly(spark: Any) -> None:
    """Hashes whose table position is the same (the multiplier's inverse times small values):
    the probes grow past their bound and each bucket is sorted instead, with the same counts."""
    inverse = pow(SLOT_MIX, -1, U64)
    crafted = [(inverse * (j << 20)) % U64 for j in range(4_000)]
    keys = crafted + crafted[:1_000]  # 1,000 of them repeated
    random.Random(9).shuffle(keys)
    args = (keys, 0, 1, 1_000_000)
    counted = _counted(spark, *args)
    assert counted == _expected(*args)
    assert counted[1] == [4_000] and len(counted[3]) == 1_000


def test_a_bucket_given_up_leaves_the_next_buckets_counted_exactly(spark: Any) -> None:
    """One bucket of crafted hashes that share a table slot (given up on, sorted) among buckets
    of random hashes counted in the same table after it: every count as in Python."""
    inverse = pow(SLOT_MIX, -1, U64)
    total = 8_192  # 32 buckets of about 256 (HashCounts.count)
    shift = 64 - 5

    def bucket(k: int) -> int:
        return ((k * BUCKET_MIX) % U64) >> shift

    crafted = [k for j in range(1, 60_000) if bucket(k := (inverse * (j << 20)) % U64) == 0]
    crafted = crafted[:600]
    rng = random.Random(11)
    others = [rng.getrandbits(64) for _ in range(total - len(crafted) - 400)]
    keys = crafted + others + crafted[:200] + others[:200]  # repeated in both kinds of bucket
    rng.shuffle(keys)
    args = (keys, 0, 1, 1_000_000)
    counted = _counted(spark, *args)
    assert counted == _expected(*args)
    assert counted[1] == [len(crafted) + len(others)] and len(counted[3]) == 400


def _rules() -> list[Rule]:
    zero = Threshold(Operator.MUST_BE, 0)
    return [
        Rule(id="nn", kind=RuleKind.NULL_VALUES, columns=["id"], threshold=zero),
        Rule(id="u1", kind=RuleKind.DUPLICATE_VALUES, columns=["id"], threshold=zero),
        Rule(id="u2", kind=RuleKind.DUPLICATE_VALUES, columns=["name", "day"], threshold=zero),
    ]


@pytest.fixture(scope="module")
def parquet(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    path = Path(tmp_path_factory.mktemp("overlap")) / "data"
    rows = [(i - (i % 97 == 1), f"n{i % 5000}", i % 3) for i in range(20_000)]
    spark.createDataFrame(rows, "id BIGINT, name STRING, day INT").repartition(4).write.parquet(
        str(path)
    )
    return spark.read.parquet(str(path))


def test_key_sets_counted_beside_the_scan_run_in_the_callers_job_group(
    spark: Any, parquet: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(uniqueness, "HASHED_FROM_ROWS", 0)  # the packed pass, on small data
    threads: list[str] = []
    inner = key_sets.key_set_counts

    def spy(*args: Any, **kwargs: Any) -> Any:
        threads.append(threading.current_thread().name)
        return inner(*args, **kwargs)

    monkeypatch.setattr(key_sets, "key_set_counts", spy)
    monkeypatch.setattr(engine_run, "key_set_counts", spy)
    sc = spark.sparkContext
    tracker = sc.statusTracker()
    before = set(tracker.getJobIdsForGroup(None)) | _all_jobs(spark)
    sc.setJobGroup("lq-overlap", "lq-overlap")
    try:
        overlapped = evaluate_dataframe(parquet, _rules())
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
    started = _all_jobs(spark) - before
    assert started and started <= set(tracker.getJobIdsForGroup("lq-overlap"))
    assert threads == ["lq-key-sets"]

    monkeypatch.setenv("LINEAGE_QUALITY_OVERLAP_KEY_SETS", "0")
    after = evaluate_dataframe(parquet, _rules())
    assert threads == ["lq-key-sets", threading.current_thread().name]
    assert [(r.rule.id, r.actual, r.success) for r in overlapped] == [
        (r.rule.id, r.actual, r.success) for r in after
    ]
    duplicates = {r.rule.id: r.actual for r in after}
    assert duplicates["u1"] == sum(1 for i in range(20_000) if i % 97 == 1)
    assert duplicates["u2"] == 20_000 - 5_000 * 3 + 0  # name repeats every 5000, day every 3


def _all_jobs(spark: Any) -> set[int]:
    jobs = spark.sparkContext._jsc.sc().statusStore().jobsList(None)
    return {int(jobs.apply(i).jobId()) for i in range(jobs.size())}


def test_a_failure_beside_the_key_sets_waits_for_them(
    spark: Any, parquet: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fused scan raising (not returning an error) still joins the key-set thread first:
    no Spark job of the evaluation runs on after it has returned."""
    monkeypatch.setattr(uniqueness, "HASHED_FROM_ROWS", 0)

    def broken(*_: Any) -> Any:
        raise RuntimeError("the scan broke")

    monkeypatch.setattr(engine_run, "_fused", broken)
    with pytest.raises(RuntimeError, match="the scan broke"):
        evaluate_dataframe(parquet, _rules())
    assert not [t for t in threading.enumerate() if t.name == "lq-key-sets" and t.is_alive()]


@pytest.fixture(scope="module")
def replaced(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Another version of `parquet`'s data: 500 more rows, each a duplicate of both keys."""
    path = Path(tmp_path_factory.mktemp("replaced")) / "data"
    rows = [(i - (i % 97 == 1), f"n{i % 5000}", i % 3) for i in range(20_000)]
    rows += [(i, f"n{i}", i % 3) for i in range(500)]
    spark.createDataFrame(rows, "id BIGINT, name STRING, day INT").repartition(4).write.parquet(
        str(path)
    )
    return spark.read.parquet(str(path))


def _counting_on(other: Any) -> Any:
    """A KeySetCounting that reads `other`: files replaced between the scan and this pass."""

    class Elsewhere(key_sets.KeySetCounting):
        def __init__(self, df: Any, sets: Any, rows: int) -> None:
            super().__init__(other, sets, rows)

    return Elsewhere


def test_the_packed_pass_says_how_many_rows_it_read(
    spark: Any, parquet: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(uniqueness, "HASHED_FROM_ROWS", 0)
    found = key_sets.key_set_counts(parquet, [["id"], ["name", "day"]], 20_000)
    assert [k.read for k in found if isinstance(k, uniqueness.KeyCounts)] == [20_000, 20_000]
    # rows with a null key part count as read, not as counted
    nulls = parquet.selectExpr("IF(day = 0, NULL, id) AS id", "name", "day")
    (counted,) = key_sets.key_set_counts(nulls, [["id"]], 20_000)
    assert isinstance(counted, uniqueness.KeyCounts)
    assert counted.read == 20_000 and counted.rows == sum(1 for i in range(20_000) if i % 3)


def test_a_key_set_pass_that_read_another_version_is_counted_again(
    spark: Any,
    parquet: Any,
    replaced: Any,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The pass beside the scan read 20,500 rows, the scan 20,000: its counts are not this
    version's, and the key sets are counted again on what the scan read."""
    monkeypatch.setattr(uniqueness, "HASHED_FROM_ROWS", 0)
    monkeypatch.setattr(engine_run, "KeySetCounting", _counting_on(replaced))
    with caplog.at_level("WARNING"):
        results = {r.rule.id: r for r in evaluate_dataframe(parquet, _rules())}
    assert "read 20500 rows, the scan 20000" in caplog.text
    assert results["u1"].actual == sum(1 for i in range(20_000) if i % 97 == 1)
    assert results["u2"].actual == 20_000 - 5_000 * 3


def test_a_key_set_pass_that_keeps_reading_another_version_is_an_error(
    spark: Any, parquet: Any, replaced: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(uniqueness, "HASHED_FROM_ROWS", 0)
    monkeypatch.setattr(engine_run, "KeySetCounting", _counting_on(replaced))
    inner = key_sets.key_set_counts
    monkeypatch.setattr(
        key_sets, "key_set_counts", lambda _df, sets, rows=None: inner(replaced, sets, rows)
    )
    results = {r.rule.id: r for r in evaluate_dataframe(parquet, _rules())}
    for rule in ("u1", "u2"):
        assert results[rule].status is Status.ERROR and results[rule].actual is None
        assert results[rule].message is not None
        assert "changed while it was evaluated: the scan read 20000 rows" in results[rule].message
    assert results["nn"].status is Status.PASSED
