"""Null counts from Parquet footers (engine/footer_nulls.py, JVM helper FooterNulls): the same
counts as the scan's, the column left out of the scan, and the scan again wherever the footers
cannot stand for it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pyspark.sql.types import LongType, StringType, StructField, StructType
from scan_spy import scanned_columns

from lineage_quality.engine import run as engine_run
from lineage_quality.engine.footer_nulls import FooterCounts, footer_columns, footer_counts
from lineage_quality.engine.plan import Measure, Metric
from lineage_quality.engine.run import evaluate_dataframe
from lineage_quality.kinds import RuleKind
from lineage_quality.rules import Operator, Rule, Threshold

pytestmark = pytest.mark.spark

Z = Threshold(Operator.MUST_BE, 0)
FIELD_ID = "parquet.field.id"  # Spark's metadata key for a Parquet field id


def _not_null(column: str) -> Rule:
    return Rule(id=f"nn_{column}", kind=RuleKind.NULL_VALUES, columns=[column], threshold=Z)


def _rules() -> list[Rule]:
    return [
        Rule(id="rows", kind=RuleKind.ROW_COUNT, threshold=Threshold(Operator.GREATER_THAN, 0)),
        _not_null("id"),
        _not_null("a"),
        _not_null("b"),
        _not_null("c"),
        # b is also read for its range: its nulls are counted in the scan
        Rule(id="range_b", kind=RuleKind.VALUE_RANGE, columns=["b"], min_value=0.0, threshold=Z),
    ]


def _measured(results: list[Any]) -> dict[str, Any]:
    return {r.rule.id: (r.status.name, r.actual) for r in results}


@pytest.fixture(scope="module")
def folder(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = Path(tmp_path_factory.mktemp("footers")) / "data"
    rows = [
        (i, None if i % 7 == 0 else f"v{i}", None if i % 5 == 0 else float(i), f"c{i}")
        for i in range(2000)
    ]
    # 5 files, 2000 rows; nulls in a (every 7th) and b (every 5th), none in id and c
    frame = spark.createDataFrame(rows, "id LONG, a STRING, b DOUBLE, c STRING")
    frame.repartition(5).write.parquet(str(path))
    return path


def _scan_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LINEAGE_QUALITY_FOOTER_NULLS", "0")


def test_only_null_counted_columns_come_from_footers() -> None:
    metrics = [
        Metric(Measure.ROWS),
        Metric(Measure.NULLS, "a"),
        Metric(Measure.NULLS, "b"),
        Metric(Measure.OUT_OF_RANGE, "b", low=0.0),
        Metric(Measure.MISSING, "c", values=("",)),
        Metric(Measure.NULLS, "d"),
    ]
    assert footer_columns(metrics) == ["a", "d"]


def test_footer_counts_equal_the_scans(spark: Any, folder: Path) -> None:
    df = spark.read.parquet(str(folder))
    counts = footer_counts(df, ["a", "b", "c"])
    assert counts == FooterCounts(2000, {"a": 286, "b": 400, "c": 0})
    for column, nulls in counts.nulls.items():
        assert df.where(df[column].isNull()).count() == nulls


def test_many_files_are_read_by_a_spark_job(spark: Any, folder: Path, tmp_path: Path) -> None:
    many = tmp_path / "many"
    spark.read.parquet(str(folder)).repartition(40).write.parquet(str(many))  # past DRIVER_FILES
    df = spark.read.parquet(str(many))
    assert len(df.inputFiles()) == 40
    assert footer_counts(df, ["a", "b"]) == FooterCounts(2000, {"a": 286, "b": 400})
    helper = spark._jvm.lineagequality.FooterNulls
    assert helper.count(df._jdf, ["a"], 39, 1 << 20) is None  # more footers than the bound


def test_a_footer_longer_than_the_bound_is_not_read(
    spark: Any, folder: Path, tmp_path: Path
) -> None:
    df = spark.read.parquet(str(folder))
    helper = spark._jvm.lineagequality.FooterNulls
    assert list(helper.count(df._jdf, ["a"], 0, 1 << 20)) == [2000, 286]
    assert helper.count(df._jdf, ["a"], 0, 64) is None  # each of these footers is larger
    # a file whose last bytes claim a footer longer than the file: the scan says what is wrong
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "part-0.parquet").write_bytes(
        b"PAR1" + b"\x00" * 8 + (2**31 - 1).to_bytes(4, "little") + b"PAR1"
    )
    assert footer_counts(spark.read.schema("a STRING").parquet(str(bad)), ["a"]) is None


def test_the_scan_leaves_footer_columns_out_and_verdicts_stay(
    spark: Any, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    df = spark.read.parquet(str(folder))
    scanned = scanned_columns(monkeypatch)
    fast = _measured(evaluate_dataframe(df, _rules()))
    assert scanned == [{"b"}]  # one scan: a, c and id only had their nulls counted
    _scan_only(monkeypatch)
    slow = _measured(evaluate_dataframe(df, _rules()))
    assert scanned[1] == {"id", "a", "b", "c"}
    assert fast == slow
    assert fast["nn_a"] == ("FAILED", 286)
    assert fast["nn_b"] == ("FAILED", 400)
    assert fast["nn_c"] == ("PASSED", 0)


def test_footers_that_disagree_with_the_scan_are_not_used(
    spark: Any, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # as if files were replaced between the footer read and the scan
    monkeypatch.setattr(
        engine_run, "footer_counts", lambda df, cols, *_: FooterCounts(1999, dict.fromkeys(cols, 0))
    )
    scanned = scanned_columns(monkeypatch)
    results = _measured(evaluate_dataframe(spark.read.parquet(str(folder)), _rules()))
    assert scanned == [{"b"}, {"id", "a", "b", "c"}]
    assert results["nn_a"] == ("FAILED", 286)
    assert results["rows"] == ("PASSED", 2000)


def test_a_column_some_files_lack_counts_their_rows_as_null(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "merged"
    spark.createDataFrame([(i, f"x{i}") for i in range(30)], "id LONG, a STRING").write.parquet(
        str(root / "part=1")
    )
    spark.createDataFrame([(i,) for i in range(12)], "id LONG").write.parquet(str(root / "part=2"))
    df = spark.read.option("mergeSchema", "true").parquet(str(root))
    counts = footer_counts(df, ["a"])
    assert counts == FooterCounts(42, {"a": 12})
    fast = _measured(evaluate_dataframe(df, [_not_null("a")]))
    _scan_only(monkeypatch)
    assert fast == _measured(evaluate_dataframe(df, [_not_null("a")])) == {"nn_a": ("FAILED", 12)}


def test_a_parquet_catalog_table_is_counted_from_its_files(spark: Any, tmp_path: Path) -> None:
    rows = [(i, None if i % 3 else f"x{i}") for i in range(30)]
    frame = spark.createDataFrame(rows, "id LONG, a STRING")
    frame.write.format("parquet").option("path", str(tmp_path / "t")).saveAsTable("lq_footer_t")
    try:
        table = spark.table("lq_footer_t")
        assert footer_counts(table, ["a"]) == FooterCounts(30, {"a": 20})
        spark.sql("CREATE OR REPLACE TEMPORARY VIEW lq_footer_v AS SELECT * FROM lq_footer_t")
        assert footer_counts(spark.table("lq_footer_v"), ["a"]) is None  # a view: not the files
    finally:
        spark.sql("DROP VIEW IF EXISTS lq_footer_v")
        spark.sql("DROP TABLE IF EXISTS lq_footer_t")


def test_names_match_as_sparks_reader_matches_them(spark: Any, tmp_path: Path) -> None:
    path = tmp_path / "cased"
    spark.createDataFrame([("x",), (None,), (None,)], "Name STRING").write.parquet(str(path))
    df = spark.read.schema("name STRING").parquet(str(path))
    assert df.where(df["name"].isNull()).count() == 2  # case-blind, as Spark reads by default
    assert footer_counts(df, ["name"]) == FooterCounts(3, {"name": 2})
    spark.conf.set("spark.sql.caseSensitive", "true")
    try:
        # now the file's Name is not the schema's name: Spark reads it as null on every row
        assert df.where(df["name"].isNull()).count() == 3
        assert footer_counts(df, ["name"]) == FooterCounts(3, {"name": 3})
    finally:
        spark.conf.unset("spark.sql.caseSensitive")


def test_where_the_footers_cannot_stand_for_the_scan_they_are_not_asked(
    spark: Any, folder: Path, tmp_path: Path
) -> None:
    df = spark.read.parquet(str(folder))
    assert footer_counts(df.where("id > 5"), ["a"]) is None  # not the files' rows
    assert footer_counts(df.select("a"), ["a"]) is None
    spark.createDataFrame([(1, "x")], "id LONG, a STRING").write.json(str(tmp_path / "j"))
    assert footer_counts(spark.read.json(str(tmp_path / "j")), ["a"]) is None
    part = tmp_path / "p"
    spark.createDataFrame([(1, "x")], "id LONG, a STRING").write.partitionBy("a").parquet(str(part))
    assert footer_counts(spark.read.parquet(str(part)), ["a"]) is None  # not in the files
    assert footer_counts(spark.read.parquet(str(part)), ["id"]) == FooterCounts(1, {"id": 0})
    with_id = StructType(
        [StructField("id", LongType()), StructField("a", StringType(), True, {FIELD_ID: 2})]
    )
    spark.conf.set("spark.sql.parquet.fieldId.read.enabled", "true")
    try:  # the reader may match this column by its id, not its name
        assert footer_counts(spark.read.schema(with_id).parquet(str(folder)), ["a"]) is None
    finally:
        spark.conf.unset("spark.sql.parquet.fieldId.read.enabled")
    for option in ("ignoreCorruptFiles", "ignoreMissingFiles"):
        skipping = spark.read.option(option, "true").parquet(str(folder))
        assert footer_counts(skipping, ["a"]) is None  # the scan might skip files
    spark.conf.set("spark.sql.files.ignoreCorruptFiles", "true")
    try:
        assert footer_counts(df, ["a"]) is None
    finally:
        spark.conf.unset("spark.sql.files.ignoreCorruptFiles")


def test_a_delta_table_is_not_counted_from_its_files(spark: Any, tmp_path: Path) -> None:
    # deletion vectors and removed files are in the log, not in the files' footers
    path = str(tmp_path / "delta")
    try:
        spark.createDataFrame([(1, None)], "id LONG, a STRING").write.format("delta").save(path)
    except Exception as exc:  # pragma: no cover - only without the Delta jar
        pytest.skip(f"no Delta Lake in this session: {str(exc)[:100]}")
    assert footer_counts(spark.read.format("delta").load(path), ["a"]) is None


def _footer(spark: Any, schema: str, row_groups: list[list[tuple[str, int, int | None]]]) -> Any:
    """A ParquetMetadata: `row_groups` of (column path, dot-separated; value count; null count,
    or None: not written)."""
    jvm = spark._jvm
    parquet = jvm.org.apache.parquet
    meta = parquet.hadoop.metadata
    message = parquet.schema.MessageTypeParser.parseMessageType(schema)
    blocks = jvm.java.util.ArrayList()
    for group in row_groups:
        block = meta.BlockMetaData()
        block.setRowCount(max(values for _, values, _ in group))
        for column, values, nulls in group:
            path = _strings(spark, column.split("."))
            kind = message.getType(path).asPrimitiveType()
            builder = parquet.column.statistics.Statistics.getBuilderForReading(kind)
            if nulls is not None:
                builder = builder.withNumNulls(nulls)
            chunk = meta.ColumnChunkMetaData.get(
                meta.ColumnPath.get(path), kind.getPrimitiveTypeName(),
                meta.CompressionCodecName.UNCOMPRESSED, jvm.java.util.HashSet(), builder.build(),
                0, 0, values, 0, 0,
            )  # fmt: skip
            block.addColumn(chunk)
        blocks.add(block)
    info = meta.FileMetaData(message, jvm.java.util.HashMap(), "test")
    return meta.ParquetMetadata(info, blocks)


def _strings(spark: Any, items: list[str]) -> Any:
    array = spark.sparkContext._gateway.new_array(spark._jvm.java.lang.String, len(items))
    for i, item in enumerate(items):
        array[i] = item
    return array


def _summarize(spark: Any, footer: Any, columns: list[str], case_sensitive: bool = True) -> Any:
    found = spark._jvm.lineagequality.FooterNulls.summarize(footer, columns, case_sensitive)
    return None if found is None else list(found)


SCHEMA = "message m { optional binary a (UTF8); optional int64 b; }"


def test_a_footer_answers_only_with_every_null_count_written(spark: Any) -> None:
    whole = _footer(spark, SCHEMA, [[("a", 10, 3), ("b", 10, 0)], [("a", 5, 5), ("b", 5, 1)]])
    assert _summarize(spark, whole, ["a", "b"]) == [15, 8, 1]
    assert _summarize(spark, whole, ["zz"]) == [15, 15]  # a column the file lacks: all null
    unset = _footer(spark, SCHEMA, [[("a", 10, 3), ("b", 10, 0)], [("a", 5, None), ("b", 5, 1)]])
    assert _summarize(spark, unset, ["b"]) == [15, 1]
    assert _summarize(spark, unset, ["a"]) is None  # one chunk without its null count
    short = _footer(spark, SCHEMA, [[("a", 10, 3), ("b", 9, 0)]])
    assert _summarize(spark, short, ["b"]) is None  # fewer values than rows: not a flat column
    too_many = _footer(spark, SCHEMA, [[("a", 10, 11), ("b", 10, 0)]])
    assert _summarize(spark, too_many, ["a"]) is None


def test_a_footer_matches_names_as_sparks_reader(spark: Any) -> None:
    cased = "message m { optional binary Name (UTF8); optional binary NAME (UTF8); }"
    footer = _footer(spark, cased, [[("Name", 4, 1), ("NAME", 4, 2)]])
    assert _summarize(spark, footer, ["Name"]) == [4, 1]
    assert _summarize(spark, footer, ["name"], case_sensitive=False) is None  # ambiguous
    nested = "message m { optional group s { optional int64 x; } }"
    assert _summarize(spark, _footer(spark, nested, [[("s.x", 4, 0)]]), ["s"]) is None
