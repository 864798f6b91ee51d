"""Ranges, mins and maxes of integer Parquet columns from the footers' statistics
(engine/footer_bounds.py, JVM helper FooterNulls.stats): the scan's verdicts and numbers, the
columns left out of the scan, and the scan wherever the bounds cannot decide."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import pytest
from scan_spy import scanned_columns

from lineage_quality.engine import footer_bounds
from lineage_quality.engine import run as engine_run
from lineage_quality.engine.footer_nulls import FooterCounts
from lineage_quality.engine.run import evaluate_dataframe
from lineage_quality.kinds import RuleKind
from lineage_quality.rules import Operator, Rule, Threshold

pytestmark = pytest.mark.spark

Z = Threshold(Operator.MUST_BE, 0)
PAST_2_53 = 2**53 + 1  # a bigint a double cannot hold: Spark compares it as 2^53


@pytest.fixture(autouse=True)
def small_files_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """The test files are far below the size where the bounds pay; use them anyway."""
    monkeypatch.setattr(footer_bounds, "MIN_FILE_BYTES", 0)


def _range(rid: str, column: str, low: float | None = None, high: float | None = None) -> Rule:
    return Rule(
        id=rid, kind=RuleKind.VALUE_RANGE, columns=[column], min_value=low, max_value=high,
        threshold=Z,
    )  # fmt: skip


def _stat(rid: str, column: str, stat: str) -> Rule:
    return Rule(
        id=rid, kind=RuleKind.STATISTIC, columns=[column], statistic=stat,
        threshold=Threshold(Operator.GREATER_OR_EQUAL, -(2**62)),
    )  # fmt: skip


def _rules() -> list[Rule]:
    return [
        Rule(id="rows", kind=RuleKind.ROW_COUNT, threshold=Threshold(Operator.GREATER_THAN, 0)),
        _range("id_low", "id", low=0),
        _range("id_both", "id", low=-5, high=1999),
        _stat("id_min", "id", "min"),
        _stat("id_max", "id", "max"),
        Rule(id="nn_id", kind=RuleKind.NULL_VALUES, columns=["id"], threshold=Z),
        _range("big_high", "big", high=float(2**53)),  # Spark: passes, PAST_2_53 as a double
        _stat("big_max", "big", "max"),
        _range("q_range", "q", low=1, high=50),
        Rule(id="nn_q", kind=RuleKind.NULL_VALUES, columns=["q"], threshold=Z),
        _range("empty_range", "empty", low=0),
        _stat("empty_max", "empty", "max"),
        _range("amount_high", "amount", high=1e6),  # a NaN: beyond every maximum
    ]


def _measured(results: list[Any]) -> dict[str, Any]:
    return {r.rule.id: (r.status.name, r.actual) for r in results}


@pytest.fixture(scope="module")
def folder(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = Path(tmp_path_factory.mktemp("bounds")) / "data"
    rows = [
        (
            i,
            PAST_2_53 if i == 1234 else i * 1_000_003,
            None if i % 5 == 0 else 1 + i % 50,
            None,
            float("nan") if i == 77 else float(i),
        )
        for i in range(2000)
    ]
    frame = spark.createDataFrame(rows, "id INT, big BIGINT, q INT, empty INT, amount DOUBLE")
    frame.repartition(4).write.parquet(str(path))
    return path


def _off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LINEAGE_QUALITY_FOOTER_BOUNDS", "0")


def test_integer_ranges_and_extremes_come_from_the_footers(
    spark: Any, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    df = spark.read.parquet(str(folder))
    scanned = scanned_columns(monkeypatch)
    fast = _measured(evaluate_dataframe(df, _rules()))
    assert scanned == [{"amount"}]  # id, big, q and empty: from the footers
    _off(monkeypatch)
    slow = _measured(evaluate_dataframe(df, _rules()))
    assert scanned[1] == {"id", "big", "q", "empty", "amount"}
    assert fast == slow
    assert fast["id_min"] == ("PASSED", 0)
    assert fast["id_max"] == ("PASSED", 1999)
    # the same Python types as the scan's, not merely equal numbers
    assert {k: type(v[1]) for k, v in fast.items()} == {k: type(v[1]) for k, v in slow.items()}
    assert fast["big_max"] == ("PASSED", PAST_2_53)  # exact, not a double
    assert fast["big_high"] == ("PASSED", 0)  # Spark's comparison, not Python's
    assert fast["q_range"] == ("PASSED", 0)
    assert fast["nn_q"] == ("FAILED", 400)
    assert fast["empty_range"] == ("PASSED", 0)
    assert fast["amount_high"] == ("FAILED", 1)  # the NaN: doubles are scanned


def test_a_range_the_bounds_cannot_decide_is_counted_in_the_scan(
    spark: Any, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rules = [
        _range("q_some_fail", "q", low=10, high=50),  # 1..9 fail
        _stat("q_max", "q", "max"),
        _range("id_all_fail", "id", low=5000),
        _range("big_ok", "big", low=0),
    ]
    df = spark.read.parquet(str(folder))
    scanned = scanned_columns(monkeypatch)
    fast = _measured(evaluate_dataframe(df, rules))
    assert scanned == [{"q", "id"}]
    _off(monkeypatch)
    assert fast == _measured(evaluate_dataframe(df, rules))
    failing = df.where("q < 10").count()
    assert failing > 0
    assert fast["q_some_fail"] == ("FAILED", failing)
    assert fast["id_all_fail"] == ("FAILED", 2000)
    assert fast["q_max"] == ("PASSED", 50)


def test_int32_files_read_as_bigint_answer_as_the_scan(
    spark: Any, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Spark 4 widens the INT32 chunks to longs; Spark 3.5's vectorized reader refuses to, and
    # the footers must not answer for a scan that fails
    df = spark.read.schema("id BIGINT, q INT").parquet(str(folder))
    rules = [_range("id_low", "id", low=0), _stat("id_max", "id", "max")]
    fast = _measured(evaluate_dataframe(df, rules))
    _off(monkeypatch)
    assert fast == _measured(evaluate_dataframe(df, rules))
    if spark.version.startswith("3."):
        assert fast["id_low"][0] == "ERROR"
    else:
        assert fast == {"id_low": ("PASSED", 0), "id_max": ("PASSED", 1999)}


def test_small_files_are_scanned(spark: Any, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(footer_bounds, "MIN_FILE_BYTES", 64 * 1024 * 1024)
    scanned = scanned_columns(monkeypatch)
    results = _measured(evaluate_dataframe(spark.read.parquet(str(folder)), _rules()))
    assert scanned == [{"id", "big", "q", "empty", "amount"}]
    assert results["id_max"] == ("PASSED", 1999)


def test_bounds_with_another_row_total_are_not_used(
    spark: Any, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # as if files were replaced between the footer read and the scan: bounds that would pass
    df = spark.read.parquet(str(folder))
    frame = spark.createDataFrame([(0,), (10,)], "q INT")
    stale = FooterCounts(1999, {"q": 0}, {"q": (0, 10)}, frame)
    monkeypatch.setattr(engine_run, "footer_counts", lambda *_: stale)
    scanned = scanned_columns(monkeypatch)
    rules = [_range("q_small", "q", low=0, high=10)]
    results = _measured(evaluate_dataframe(df, rules))
    assert scanned == [set(), {"q"}]
    assert results["q_small"] == ("FAILED", df.where("q > 10").count())


def test_a_file_without_the_column_reads_as_nulls(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "evolved"
    spark.createDataFrame([(i,) for i in range(100)], "id INT").write.parquet(str(path))
    spark.createDataFrame([(i, i) for i in range(50)], "id INT, n INT").write.mode(
        "append"
    ).parquet(str(path))
    df = spark.read.option("mergeSchema", "true").parquet(str(path))
    rules = [_range("n_range", "n", low=0, high=49), _stat("n_min", "n", "min")]
    rules.append(Rule(id="nn_n", kind=RuleKind.NULL_VALUES, columns=["n"], threshold=Z))
    scanned = scanned_columns(monkeypatch)
    results = _measured(evaluate_dataframe(df, rules))
    assert scanned == [set()]  # n from the footers: the scan counts the rows only
    assert results == {"n_range": ("PASSED", 0), "n_min": ("PASSED", 0), "nn_n": ("FAILED", 100)}
    _off(monkeypatch)
    assert _measured(evaluate_dataframe(df, rules)) == results
    assert scanned[1] == {"n"}


def test_many_files_and_row_groups_are_read_by_a_spark_job(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "many"
    rows = [(i, None if i % 11 == 0 else i % 997 - 300) for i in range(20_000)]
    frame = spark.createDataFrame(rows, "id BIGINT, v INT").repartition(40)
    frame.write.option("parquet.block.size", 1024).parquet(str(path))  # ~100 rows a row group
    df = spark.read.parquet(str(path))
    assert len(df.inputFiles()) == 40  # past the 32 footers read on the driver
    rules = [
        _range("v_range", "v", low=-300, high=696), _stat("v_min", "v", "min"),
        _stat("v_max", "v", "max"), _range("id_range", "id", low=0, high=19_999),
        Rule(id="nn_v", kind=RuleKind.NULL_VALUES, columns=["v"], threshold=Z),
    ]  # fmt: skip
    scanned = scanned_columns(monkeypatch)
    fast = _measured(evaluate_dataframe(df, rules))
    assert scanned == [set()]
    _off(monkeypatch)
    assert fast == _measured(evaluate_dataframe(df, rules))
    assert fast["v_min"] == ("PASSED", -300)
    assert fast["v_max"] == ("PASSED", 696)
    assert fast["nn_v"] == ("FAILED", df.where("v IS NULL").count())


def test_null_counts_switched_off_are_counted_in_the_scan(
    spark: Any, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LINEAGE_QUALITY_FOOTER_NULLS", "0")
    rules = [_range("q_range", "q", low=1, high=50), _stat("q_max", "q", "max")]
    rules.append(Rule(id="nn_q", kind=RuleKind.NULL_VALUES, columns=["q"], threshold=Z))
    scanned = scanned_columns(monkeypatch)
    results = _measured(evaluate_dataframe(spark.read.parquet(str(folder)), rules))
    assert scanned == [{"q"}]  # for its null count
    assert results == {"q_range": ("PASSED", 0), "q_max": ("PASSED", 50), "nn_q": ("FAILED", 400)}


def test_a_bounded_partition_column_keeps_the_other_columns_footers(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "parts"
    rows = [(2020 + i % 3, None if i % 4 == 0 else f"c{i}") for i in range(300)]
    spark.createDataFrame(rows, "year INT, c STRING").write.partitionBy("year").parquet(str(path))
    df = spark.read.parquet(str(path))
    rules = [
        _range("year_range", "year", low=2000, high=2030),
        Rule(id="nn_c", kind=RuleKind.NULL_VALUES, columns=["c"], threshold=Z),
    ]
    scanned = scanned_columns(monkeypatch)
    results = _measured(evaluate_dataframe(df, rules))
    assert scanned == [{"year"}]  # the files hold no year; c's nulls still from the footers
    assert results == {"year_range": ("PASSED", 0), "nn_c": ("FAILED", 75)}


# Footers built in the JVM: what the chunk statistics of each Parquet type bound.


def _footer(spark: Any, schema: str, chunks: list[tuple[str, int, int, Any, Any]]) -> Any:
    """A one-row-group ParquetMetadata: chunks of (column, values, nulls, min, max); min and max
    are ints (written as the column's physical type) or None (not written)."""
    jvm = spark._jvm
    parquet = jvm.org.apache.parquet
    meta = parquet.hadoop.metadata
    message = parquet.schema.MessageTypeParser.parseMessageType(schema)
    block = meta.BlockMetaData()
    block.setRowCount(max(values for _, values, _, _, _ in chunks))
    for column, values, nulls, low, high in chunks:
        kind = message.getType(column).asPrimitiveType()
        builder = parquet.column.statistics.Statistics.getBuilderForReading(kind)
        builder = builder.withNumNulls(nulls)
        if low is not None:
            builder = builder.withMin(_plain(kind, low)).withMax(_plain(kind, high))
        chunk = meta.ColumnChunkMetaData.get(
            meta.ColumnPath.get(_path(spark, column)), kind.getPrimitiveTypeName(),
            meta.CompressionCodecName.UNCOMPRESSED, jvm.java.util.HashSet(), builder.build(),
            0, 0, values, 0, 0,
        )  # fmt: skip
        block.addColumn(chunk)
    blocks = jvm.java.util.ArrayList()
    blocks.add(block)
    return meta.ParquetMetadata(meta.FileMetaData(message, jvm.java.util.HashMap(), "t"), blocks)


def _plain(kind: Any, value: float) -> bytes:
    """`value` in Parquet's plain encoding of the column's physical type."""
    physical = kind.getPrimitiveTypeName().toString()
    if physical == "DOUBLE":
        return struct.pack("<d", value)
    return int(value).to_bytes(8 if physical == "INT64" else 4, "little", signed=True)


def _path(spark: Any, column: str) -> Any:
    path = spark.sparkContext._gateway.new_array(spark._jvm.java.lang.String, 1)
    path[0] = column
    return path


def _bounds(
    spark: Any, footer: Any, column: str, wide: bool = False, widens: bool = False
) -> list[int] | None:
    found = spark._jvm.lineagequality.FooterNulls.summarizeBounds(
        footer, [column], True, "1", "1" if wide else "0", widens
    )
    return None if found is None else list(found)[1:]  # nulls, state, min, max


def test_only_signed_integers_in_their_plain_order_are_bounded(spark: Any) -> None:
    schema = (
        "message m { optional int32 i; optional int32 s (INT_16); optional int32 u (UINT_32);"
        " optional int32 d (DATE); optional int64 b; optional int32 none;"
        " optional int32 bad; optional double x; optional int32 dec (DECIMAL(9,2));"
        " optional int64 ts (TIMESTAMP(MICROS,true)); optional int32 t (TIME(MILLIS,true)); }"
    )
    footer = _footer(
        spark,
        schema,
        [
            ("i", 10, 2, -7, 40),
            ("s", 10, 0, -3, 3),
            ("u", 10, 0, -1, 5),  # as unsigned, -1 is the largest value
            ("d", 10, 0, 1, 2),
            ("b", 10, 0, -(2**40), 2**40),
            ("none", 10, 10, None, None),
            ("bad", 10, 0, 9, 1),  # a minimum above the maximum
            ("x", 10, 0, 1.0, 2.0),  # written, yet a NaN may hide from them
            ("dec", 10, 0, 1, 2),
            ("ts", 10, 0, 1, 2),
            ("t", 10, 0, 1, 2),
        ],
    )
    assert _bounds(spark, footer, "i") == [2, 1, -7, 40]
    assert _bounds(spark, footer, "s") == [0, 1, -3, 3]
    assert _bounds(spark, footer, "u")[:2] == [0, -1]  # type: ignore[index]
    assert _bounds(spark, footer, "d")[:2] == [0, -1]  # type: ignore[index]
    assert _bounds(spark, footer, "b")[:2] == [0, -1]  # type: ignore[index]  # read as an int
    assert _bounds(spark, footer, "b", wide=True) == [0, 1, -(2**40), 2**40]
    assert _bounds(spark, footer, "none") == [10, 0, 0, 0]  # every row null: no value
    assert _bounds(spark, footer, "bad")[:2] == [0, -1]  # type: ignore[index]
    for refused in ("x", "dec", "t"):
        assert _bounds(spark, footer, refused)[:2] == [0, -1]  # type: ignore[index]
    assert _bounds(spark, footer, "ts", wide=True)[:2] == [0, -1]  # type: ignore[index]
    # an INT32 chunk read into a long column: only where the reader widens it (Spark 4)
    assert _bounds(spark, footer, "i", wide=True)[:2] == [2, -1]  # type: ignore[index]
    assert _bounds(spark, footer, "i", wide=True, widens=True) == [2, 1, -7, 40]
    unwritten = _footer(spark, "message m { optional int32 i; }", [("i", 10, 1, None, None)])
    assert _bounds(spark, unwritten, "i") == [1, -1, 0, 0]  # values without bounds
