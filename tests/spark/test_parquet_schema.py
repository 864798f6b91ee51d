"""A plain Parquet dataset's schema read from its footer in the driver (JVM helper ParquetSchema,
evaluation/parquet_schema.py): the same DataFrame as Spark's own inference, with no Spark job to
open it, and Spark's own inference wherever the two could differ."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from lineage_quality.errors import DatasetError
from lineage_quality.evaluation.datasets import read_dataset

pytestmark = pytest.mark.spark


def _jobs(spark: Any, fn: Callable[[], Any]) -> tuple[int, Any]:
    """Spark jobs started while `fn` runs, and what it returned."""
    sc = spark.sparkContext
    group = f"lq-schema-{uuid.uuid4().hex}"
    sc.setJobGroup(group, group)
    try:
        out = fn()
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
    return len(sc.statusTracker().getJobIdsForGroup(group)), out


def _spark_infers(spark: Any, paths: list[str], base: str | None = None) -> Any:
    reader = spark.read.format("parquet")
    if base is not None:
        reader = reader.option("basePath", base)
    return reader.load(paths if len(paths) > 1 else paths[0])


def _same(ours: Any, theirs: Any) -> None:
    assert ours.schema.json() == theirs.schema.json()
    assert ours.columns == theirs.columns
    assert sorted(map(repr, ours.collect())) == sorted(map(repr, theirs.collect()))


@pytest.fixture
def helper_off(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("LINEAGE_QUALITY_PARQUET_SCHEMA", "0")
    yield


@pytest.fixture
def conf(spark: Any) -> Iterator[Callable[[str, str], None]]:
    """Sets session settings for one test, then restores them."""
    saved: dict[str, str | None] = {}

    def put(key: str, value: str) -> None:
        saved.setdefault(key, spark.conf.get(key, None))
        spark.conf.set(key, value)

    yield put
    for key, value in saved.items():
        if value is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, value)


def test_nested_and_typed_columns_read_as_spark_infers_them_without_a_job(
    spark: Any, tmp_path: Path
) -> None:
    path = str(tmp_path / "typed")
    spark.sql(
        """SELECT id, CAST(id AS DECIMAL(20, 4)) AS dec, CAST(id AS STRING) AS `naïve name`,
                  named_struct('a', id, 'b', array(id, id + 1)) AS s,
                  map('k', CAST(id AS DOUBLE)) AS m, DATE'2024-02-29' AS d,
                  TIMESTAMP'2024-02-29 12:00:00' AS ts, CAST(NULL AS BINARY) AS bin
           FROM range(20)"""
    ).repartition(3).write.parquet(path)
    jobs, ours = _jobs(spark, lambda: read_dataset(spark, "file", path))
    assert jobs == 0
    _same(ours, _spark_infers(spark, [path]))


def test_without_the_helper_spark_starts_a_job_to_infer_it(
    spark: Any, tmp_path: Path, helper_off: None
) -> None:
    path = str(tmp_path / "plain")
    spark.range(5).write.parquet(path)
    jobs, ours = _jobs(spark, lambda: read_dataset(spark, "file", path))
    assert jobs == 1  # what the helper saves
    _same(ours, _spark_infers(spark, [path]))


def test_a_partitioned_folder_and_the_files_a_run_left(spark: Any, tmp_path: Path) -> None:
    path = str(tmp_path / "parts é, ü")  # paths travel to the JVM in one string
    spark.sql(
        "SELECT id, concat('v:', id % 3, 'ß') AS p, CAST(id AS STRING) AS v FROM range(30)"
    ).write.partitionBy("p").parquet(path)
    jobs, ours = _jobs(spark, lambda: read_dataset(spark, "file", path))
    assert jobs == 0
    _same(ours, _spark_infers(spark, [path]))
    files = sorted(str(f) for f in Path(path).glob("p=*/*.parquet"))[1:]
    jobs, ours = _jobs(spark, lambda: read_dataset(spark, "file", path, files=files))
    assert jobs == 0
    _same(ours, _spark_infers(spark, files, base=path))


def test_the_first_file_by_path_decides_as_in_spark(spark: Any, tmp_path: Path) -> None:
    folder = tmp_path / "mixed"
    spark.range(3).selectExpr("id AS x").write.parquet(str(tmp_path / "a"))
    spark.range(3).selectExpr("id AS x", "id AS y").write.parquet(str(tmp_path / "b"))
    folder.mkdir()
    (next((tmp_path / "b").glob("*.parquet"))).rename(folder / "part-0-b.parquet")
    (next((tmp_path / "a").glob("*.parquet"))).rename(folder / "part-1-a.parquet")
    ours = read_dataset(spark, "file", str(folder))
    assert ours.columns == ["x", "y"]
    _same(ours, _spark_infers(spark, [str(folder)]))


def _write_without_spark(spark: Any, path: Path, message: str, rows: Callable[[Any], None]) -> None:
    """A Parquet file as another tool writes it: parquet-hadoop's example writer, no Spark
    schema in the footer, so the session's conversion settings decide the types."""
    jvm = spark.sparkContext._jvm
    schema = jvm.org.apache.parquet.schema.MessageTypeParser.parseMessageType(message)
    builder = jvm.org.apache.parquet.hadoop.example.ExampleParquetWriter.builder(
        jvm.org.apache.hadoop.fs.Path(str(path))
    )
    writer = builder.withType(schema).withConf(spark._jsc.hadoopConfiguration()).build()
    factory = jvm.org.apache.parquet.example.data.simple.SimpleGroupFactory(schema)
    try:
        for i in range(3):
            group = factory.newGroup()
            rows_of = {"group": group, "i": i, "jvm": jvm}
            rows(rows_of)
            writer.write(group)
    finally:
        writer.close()


FOREIGN = """message m {
  required int32 i;
  optional binary raw;
  optional int96 t96;
  optional int64 ts_local (TIMESTAMP(MICROS, false));
  optional int32 u (INTEGER(32, false));
}"""


def _foreign_row(row: Any) -> None:
    group, i, jvm = row["group"], row["i"], row["jvm"]
    group.append("i", i)
    group.append("raw", jvm.org.apache.parquet.io.api.Binary.fromString(f"r{i}"))
    group.append("t96", jvm.org.apache.parquet.example.data.simple.NanoTime(2460000 + i, 0))
    group.append("ts_local", 1_700_000_000_000_000 + i)
    group.append("u", i)


@pytest.mark.parametrize(
    "settings",
    [
        {},
        {"spark.sql.parquet.binaryAsString": "true"},
        {"spark.sql.parquet.inferTimestampNTZ.enabled": "false"},
    ],
    ids=["defaults", "binary-as-string", "no-ntz"],
)
def test_files_other_tools_wrote_follow_the_sessions_settings(
    spark: Any, tmp_path: Path, conf: Callable[[str, str], None], settings: dict[str, str]
) -> None:
    folder = tmp_path / "foreign"
    folder.mkdir()
    _write_without_spark(spark, folder / "part-0.parquet", FOREIGN, _foreign_row)
    for key, value in settings.items():
        conf(key, value)
    jobs, ours = _jobs(spark, lambda: read_dataset(spark, "file", str(folder)))
    assert jobs == 0
    _same(ours, _spark_infers(spark, [str(folder)]))


def test_a_footer_spark_cannot_convert_gets_sparks_own_error(
    spark: Any, tmp_path: Path, conf: Callable[[str, str], None]
) -> None:
    folder = tmp_path / "int96"
    folder.mkdir()
    _write_without_spark(spark, folder / "part-0.parquet", FOREIGN, _foreign_row)
    conf("spark.sql.parquet.int96AsTimestamp", "false")
    with pytest.raises(DatasetError, match="INT96 is not supported"):
        read_dataset(spark, "file", str(folder))


def test_a_summary_file_is_left_to_spark(spark: Any, tmp_path: Path) -> None:
    """Spark takes the schema of `_common_metadata` over the data files': so does the read."""
    folder = tmp_path / "summary"
    spark.range(3).selectExpr("id AS x").write.parquet(str(folder))
    spark.range(1).selectExpr("'s' AS only_in_summary").write.parquet(str(tmp_path / "s"))
    next((tmp_path / "s").glob("*.parquet")).rename(folder / "_common_metadata")
    ours = read_dataset(spark, "file", str(folder))
    assert ours.columns == ["only_in_summary"]
    _same(ours, _spark_infers(spark, [str(folder)]))


def test_a_partition_folder_named_like_a_column_is_left_to_spark(
    spark: Any, tmp_path: Path
) -> None:
    folder = tmp_path / "overlap"
    spark.sql("SELECT id AS k, id AS v FROM range(3)").write.parquet(str(folder / "k=7"))
    ours = read_dataset(spark, "file", str(folder))
    _same(ours, _spark_infers(spark, [str(folder)]))


def test_a_folder_that_is_no_partition_is_left_to_spark(spark: Any, tmp_path: Path) -> None:
    """Spark reads only the top folder's files of an unpartitioned dataset: with files only in
    a subfolder it finds none (an error, never an empty read), and beside the top's files a
    subfolder's schema does not count, though its file sorts first."""
    nested = tmp_path / "nested"
    spark.range(3).selectExpr("id AS x").write.parquet(str(nested / "2024" / "01"))
    for helper in ("1", "0"):
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("LINEAGE_QUALITY_PARQUET_SCHEMA", helper)
            with pytest.raises(DatasetError, match=r"(?i)unable to infer schema"):
                read_dataset(spark, "file", str(nested))
    beside = tmp_path / "beside"
    spark.range(3).selectExpr("id AS x").write.parquet(str(beside))
    spark.range(3).selectExpr("id AS x", "id AS y").write.parquet(str(beside / "archive"))
    ours = read_dataset(spark, "file", str(beside))
    assert ours.columns == ["x"]
    _same(ours, _spark_infers(spark, [str(beside)]))


@pytest.mark.parametrize("folder_name", ["k", "K"])
def test_a_column_named_like_any_partition_folder_is_left_to_spark(
    spark: Any, tmp_path: Path, folder_name: str
) -> None:
    """The first file by path lies at the top, beside the partition folders: their name
    counts all the same (in either case), for the folder and for files with a base."""
    folder = tmp_path / "top-and-partitions"
    spark.sql("SELECT id AS k, id AS v FROM range(3)").write.parquet(str(folder / "tmp"))
    next((folder / "tmp").glob("*.parquet")).rename(folder / "a-first.parquet")
    spark.sql("SELECT id + 10 AS k, id AS v FROM range(3)").write.parquet(
        str(folder / f"{folder_name}=7")
    )
    for leftover in (folder / "tmp").iterdir():
        leftover.unlink()
    (folder / "tmp").rmdir()
    ours = read_dataset(spark, "file", str(folder))
    _same(ours, _spark_infers(spark, [str(folder)]))
    files = sorted(str(f) for f in folder.glob("**/*.parquet"))
    ours = read_dataset(spark, "file", str(folder), files=files)
    _same(ours, _spark_infers(spark, files, base=str(folder)))


def test_schema_merging_is_left_to_spark(
    spark: Any, tmp_path: Path, conf: Callable[[str, str], None]
) -> None:
    folder = tmp_path / "merge"
    spark.range(2).selectExpr("id AS x").write.parquet(str(folder / "p=1"))
    spark.range(2).selectExpr("id AS x", "id AS y").write.parquet(str(folder / "p=2"))
    conf("spark.sql.parquet.mergeSchema", "true")
    ours = read_dataset(spark, "file", str(folder))
    assert ours.columns == ["x", "y", "p"]
    _same(ours, _spark_infers(spark, [str(folder)]))


def test_a_file_that_is_no_parquet_gets_sparks_own_error(spark: Any, tmp_path: Path) -> None:
    folder = tmp_path / "broken"
    spark.range(2).write.parquet(str(folder))
    (folder / "part-0.parquet").write_bytes(b"not parquet at all")
    with pytest.raises(DatasetError, match=r"part-0\.parquet"):
        read_dataset(spark, "file", str(folder))
