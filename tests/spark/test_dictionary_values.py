"""Value tests answered on Parquet dictionaries (engine/dictionary_values.py, JVM helpers
DictionaryValues and DictionaryIds): the same counts as the scan's, the column left out of the
scan, and the scan again wherever the dictionaries cannot stand for it."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from scan_spy import scanned_columns

from lineage_quality.engine import dictionary_values
from lineage_quality.engine import run as engine_run
from lineage_quality.engine.dictionary_values import DictionaryCounts, dictionary_counts
from lineage_quality.engine.footer_nulls import FooterCounts, footer_counts
from lineage_quality.engine.plan import Measure, Metric
from lineage_quality.engine.run import evaluate_dataframe
from lineage_quality.kinds import RuleKind
from lineage_quality.rules import Operator, Rule, Threshold

pytestmark = pytest.mark.spark

Z = Threshold(Operator.MUST_BE, 0)
STATUSES = ["NEW", "PAID", "SHIPPED"]
COUNTRIES = ["DE", "FR", "NL", "IT"]


@pytest.fixture(autouse=True)
def small_files_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """These datasets are far below the size where the dictionaries pay: answer them anyway."""
    monkeypatch.setattr(dictionary_values, "MIN_FILE_BYTES", 0)


def _rows(n: int) -> list[tuple[Any, ...]]:
    """status: 3 listed codes, every 13th UNKNOWN, every 11th null; country: listed or null;
    code: 400 distinct values (ids 9 bits wide), k0..k399."""
    out = []
    for i in range(n):
        status = None if i % 11 == 0 else "UNKNOWN" if i % 13 == 0 else STATUSES[i % 3]
        country = None if i % 17 == 0 else COUNTRIES[(i * 7) % 4]
        out.append((i, status, country, f"k{(i * 31) % 400}"))
    return out


SCHEMA = "id LONG, status STRING, country STRING, code STRING"
ROWS = 3000


def _rules() -> list[Rule]:
    return [
        Rule(id="rows", kind=RuleKind.ROW_COUNT, threshold=Threshold(Operator.GREATER_THAN, 0)),
        Rule(id="nn_status", kind=RuleKind.NULL_VALUES, columns=["status"], threshold=Z),
        Rule(
            id="status_listed", kind=RuleKind.INVALID_VALUES, columns=["status"],
            valid_values=STATUSES, threshold=Z,
        ),
        Rule(
            id="status_missing", kind=RuleKind.MISSING_VALUES, columns=["status"],
            missing_values=["UNKNOWN", ""], threshold=Z,
        ),
        Rule(
            id="country_listed", kind=RuleKind.INVALID_VALUES, columns=["country"],
            valid_values=COUNTRIES, threshold=Z,
        ),
        Rule(
            id="code_short", kind=RuleKind.INVALID_VALUES, columns=["code"],
            pattern="^k[0-9]{1,2}$", threshold=Z,
        ),
        Rule(
            id="code_listed_and_short", kind=RuleKind.INVALID_VALUES, columns=["code"],
            valid_values=[f"k{i}" for i in range(0, 400, 2)], pattern="^k[0-9]{1,2}$",
            threshold=Z,
        ),
        Rule(id="range_id", kind=RuleKind.VALUE_RANGE, columns=["id"], min_value=0, threshold=Z),
    ]  # fmt: skip


def _expected(rows: list[tuple[Any, ...]]) -> dict[str, tuple[str, int]]:
    """The counts, from the rows themselves (not from either of the engine's paths)."""
    status = [r[1] for r in rows]
    code = [r[3] for r in rows]

    def short(v: str) -> bool:
        return len(v) <= 3

    counts = {
        "rows": len(rows),
        "nn_status": sum(v is None for v in status),
        "status_listed": sum(v is not None and v not in STATUSES for v in status),
        "status_missing": sum(v is None or v in ("UNKNOWN", "") for v in status),
        "country_listed": 0,
        "code_short": sum(not short(v) for v in code),
        "code_listed_and_short": sum(not (short(v) and int(v[1:]) % 2 == 0) for v in code),
        "range_id": 0,
    }
    passed = {"rows"}
    return {k: ("PASSED" if k in passed or v == 0 else "FAILED", v) for k, v in counts.items()}


def _measured(results: list[Any]) -> dict[str, tuple[str, Any]]:
    return {r.rule.id: (r.status.name, r.actual) for r in results}


def _write(spark: Any, path: Path, sort: bool = False, **options: str) -> Path:
    frame = spark.createDataFrame(_rows(ROWS), SCHEMA).repartition(4)
    if sort:  # long runs of one value: the ids are RLE runs, not bit-packed groups
        frame = frame.sortWithinPartitions("status", "country", "code")
    frame.write.options(**options).parquet(str(path))
    return path


@pytest.fixture(scope="module")
def folder(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _write(spark, Path(tmp_path_factory.mktemp("dictionaries")) / "data")


def _both_ways(
    df: Any, monkeypatch: pytest.MonkeyPatch
) -> tuple[dict[str, Any], dict[str, Any], list[set[str]]]:
    scanned = scanned_columns(monkeypatch)
    fast = _measured(evaluate_dataframe(df, _rules()))
    with monkeypatch.context() as off:
        off.setenv("LINEAGE_QUALITY_DICTIONARY_VALUES", "0")
        slow = _measured(evaluate_dataframe(df, _rules()))
    return fast, slow, scanned


def test_value_tests_come_from_the_dictionaries_with_the_scans_answers(
    spark: Any, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast, slow, scanned = _both_ways(spark.read.parquet(str(folder)), monkeypatch)
    assert scanned[0] == {"id"}  # status, country and code were not read by the scan
    assert scanned[1] == {"id", "status", "country", "code"}
    assert fast == slow == _expected(_rows(ROWS))


@pytest.mark.parametrize(
    "shape",
    [
        {"sort": "1"},  # RLE runs
        {"parquet.writer.version": "v2"},  # data pages V2: levels apart from the values
        {"parquet.page.size": "512", "parquet.block.size": "8192"},  # many pages and row groups
    ],
    ids=["rle-runs", "pages-v2", "small-pages"],
)
def test_every_page_shape_gives_the_scans_answers(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shape: dict[str, str]
) -> None:
    options = dict(shape)
    sort = options.pop("sort", None) is not None
    path = _write(spark, tmp_path / "d", sort=sort, **options)
    fast, slow, scanned = _both_ways(spark.read.parquet(str(path)), monkeypatch)
    # with 512-byte pages the writer falls back to plain pages for code's 400 values
    assert scanned[0] == ({"id", "code"} if "parquet.page.size" in shape else {"id"})
    assert fast == slow == _expected(_rows(ROWS))


def test_a_required_column_has_no_definition_levels(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = [(i, "NEW" if i % 9 else "LOST") for i in range(500)]
    spark.createDataFrame(rows, "id LONG NOT NULL, status STRING NOT NULL").write.parquet(
        str(tmp_path / "r")
    )
    df = spark.read.parquet(str(tmp_path / "r"))
    rule = Rule(
        id="listed", kind=RuleKind.INVALID_VALUES, columns=["status"], valid_values=["NEW"],
        threshold=Z,
    )  # fmt: skip
    scanned = scanned_columns(monkeypatch)
    assert _measured(evaluate_dataframe(df, [rule])) == {"listed": ("FAILED", 56)}
    assert scanned == [set()]


def test_many_files_are_read_by_a_spark_job(
    spark: Any, folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    many = tmp_path / "many"
    spark.read.parquet(str(folder)).repartition(40).write.parquet(str(many))  # past DRIVER_FILES
    df = spark.read.parquet(str(many))
    assert len(df.inputFiles()) == 40
    fast, slow, scanned = _both_ways(df, monkeypatch)
    # 75 rows a file: code's values are nearly all distinct, which the writer stores plain
    assert scanned[0] == {"id", "code"}
    assert fast == slow == _expected(_rows(ROWS))


def test_a_column_not_wholly_dictionary_encoded_is_scanned(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = _write(spark, tmp_path / "plain", **{"parquet.enable.dictionary": "false"})
    fast, slow, scanned = _both_ways(spark.read.parquet(str(plain)), monkeypatch)
    assert scanned[0] == {"id", "status", "country", "code"}
    assert fast == slow == _expected(_rows(ROWS))


def _metrics() -> list[Metric]:
    return [
        Metric(Measure.ROWS),
        Metric(Measure.INVALID, "status", values=tuple(STATUSES)),
        Metric(Measure.NULLS, "status"),
    ]


def test_a_column_past_the_bound_of_values_is_scanned(spark: Any, folder: Path) -> None:
    df = spark.read.parquet(str(folder))
    helper = spark._jvm.lineagequality.DictionaryValues
    found = helper.distinct(df._jdf, ["status", "code"], 0, 1 << 20, 10, 1 << 20, 0)
    assert str(found.layout()) == "0:4"  # status's 4 values; code's 400 are past 10
    assert helper.distinct(df._jdf, ["status"], 0, 1 << 20, 10, 8, 0).layout() == ""  # > 8 bytes
    expected = _expected(_rows(ROWS))
    counts = dictionary_counts(df, _metrics(), ["status"], 0.0)
    assert counts == DictionaryCounts(
        ROWS, {1: expected["status_listed"][1], 2: expected["nn_status"][1]}
    )


def test_a_column_whose_values_repeat_too_little_is_scanned(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # one file of 6,000 rows: `ref` has 2,000 values (more than 1,024 and than 1 per 4 rows, yet
    # dictionary-encoded: ~12 KB of them), refused on its page header before a value is decoded;
    # `code` 400 values (at most 1,024) and `status` 4 are answered
    rows = [(r[1], f"r{i % 2000}", r[3]) for i, r in enumerate(_rows(6000))]
    frame = spark.createDataFrame(rows, "status STRING, ref STRING, code STRING").coalesce(1)
    frame.write.parquet(str(tmp_path / "refs"))
    df = spark.read.parquet(str(tmp_path / "refs"))
    helper = spark._jvm.lineagequality.DictionaryValues
    found = helper.distinct(df._jdf, ["status", "ref", "code"], 0, 1 << 20, 65536, 1 << 24, 0)
    assert str(found.layout()) == "0:4,2:400"
    rules = [
        Rule(
            id="ref_short", kind=RuleKind.INVALID_VALUES, columns=["ref"],
            pattern="^r[0-9]{1,3}$", threshold=Z,
        ),
        Rule(
            id="status_listed", kind=RuleKind.INVALID_VALUES, columns=["status"],
            valid_values=STATUSES, threshold=Z,
        ),
    ]  # fmt: skip
    scanned = scanned_columns(monkeypatch)
    results = _measured(evaluate_dataframe(df, rules))
    assert scanned == [{"ref"}]  # status answered on its dictionary, ref tested in the scan
    assert results == {
        "ref_short": ("FAILED", sum(len(r[1]) > 4 for r in rows)),  # r1000..r1999: 3,000 rows
        "status_listed": (
            "FAILED",
            sum(r[0] is not None and r[0] not in STATUSES for r in rows),
        ),
    }


def test_a_file_replaced_between_the_reads_is_not_answered(spark: Any, tmp_path: Path) -> None:
    path = _write(spark, tmp_path / "replaced")
    df = spark.read.parquet(str(path))
    helper = spark._jvm.lineagequality.DictionaryValues
    found = helper.distinct(df._jdf, ["status"], 0, 1 << 20, 100, 1 << 20, 0)
    assert str(found.layout()) == "0:4"
    # the same file name, now with a value the first read did not see
    other = tmp_path / "other"
    spark.createDataFrame([(1, "LATE", "DE", "k1")], SCHEMA).coalesce(1).write.parquet(str(other))
    target = sorted(path.glob("part-*.parquet"))[0]
    source = next(other.glob("part-*.parquet"))
    shutil.copyfile(source, target)
    shutil.copyfile(other / f".{source.name}.crc", path / f".{target.name}.crc")
    # the file's length differs from the listing's (the reader refuses it) or its value is new
    try:
        answer = helper.count(df._jdf, found, "0:0")
    except Exception as exc:  # as dictionary_counts takes it: not answered
        assert "EOF" in str(exc) or "PAR1" in str(exc) or "not a Parquet file" in str(exc)
        answer = None
    assert answer is None


def test_dictionaries_that_disagree_with_the_scan_are_not_used(
    spark: Any, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = engine_run.dictionary_counts

    def stale(df: Any, metrics: Any, columns: Any, now: float) -> Any:
        found = real(df, metrics, columns, now)
        assert found is not None
        return DictionaryCounts(found.rows - 1, dict.fromkeys(found.values, 0))

    monkeypatch.setattr(engine_run, "dictionary_counts", stale)
    scanned = scanned_columns(monkeypatch)
    results = _measured(evaluate_dataframe(spark.read.parquet(str(folder)), _rules()))
    assert scanned == [{"id"}, {"id", "status", "country", "code"}]
    assert results == _expected(_rows(ROWS))


def test_where_the_files_cannot_stand_for_the_scan_they_are_not_asked(
    spark: Any, folder: Path, tmp_path: Path
) -> None:
    df = spark.read.parquet(str(folder))
    assert dictionary_counts(df.where("id > 5"), _metrics(), ["status"], 0.0) is None
    part = tmp_path / "p"
    spark.createDataFrame(_rows(20), SCHEMA).write.partitionBy("status").parquet(str(part))
    assert dictionary_counts(spark.read.parquet(str(part)), _metrics(), ["status"], 0.0) is None
    path = str(tmp_path / "delta")
    spark.createDataFrame(_rows(20), SCHEMA).write.format("delta").save(path)
    delta = spark.read.format("delta").load(path)
    assert dictionary_counts(delta, _metrics(), ["status"], 0.0) is None


def test_a_char_column_of_a_table_is_tested_as_spark_pads_it(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # CHAR(5) reads padded to 5 characters ("NEW  "): the table's rows are not the files'
    spark.sql(
        f"CREATE TABLE lq_dict_char (status CHAR(5)) USING parquet LOCATION '{tmp_path / 't'}'"
    )
    try:
        spark.sql("INSERT INTO lq_dict_char VALUES ('NEW'), ('PAID'), ('NEW')")
        rule = Rule(
            id="listed", kind=RuleKind.INVALID_VALUES, columns=["status"],
            valid_values=["NEW", "PAID"], threshold=Z,
        )  # fmt: skip
        table = spark.table("lq_dict_char")
        assert "NEW  " in {r[0] for r in table.collect()}
        spark_says = table.where("status NOT IN ('NEW', 'PAID')").count()
        scanned = scanned_columns(monkeypatch)
        fast = _measured(evaluate_dataframe(table, [rule]))
        assert scanned == [{"status"}]  # not answered on the files' unpadded values
        monkeypatch.setenv("LINEAGE_QUALITY_DICTIONARY_VALUES", "0")
        slow = _measured(evaluate_dataframe(table, [rule]))
        assert fast == slow == {"listed": ("FAILED" if spark_says else "PASSED", spark_says)}
    finally:
        spark.sql("DROP TABLE IF EXISTS lq_dict_char")


def test_files_whose_paths_need_escaping_are_read(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a timestamp partition: its folder "ts=2026-01-01 00%3A00" is escaped in inputFiles()
    rows = [(i, "NEW" if i % 4 else "LOST", "2026-01-01 00:00") for i in range(40)]
    frame = spark.createDataFrame(rows, "id LONG, status STRING, ts STRING")
    frame.write.partitionBy("ts").parquet(str(tmp_path / "t s"))
    df = spark.read.parquet(str(tmp_path / "t s"))
    metrics = [Metric(Measure.ROWS), Metric(Measure.INVALID, "status", values=("NEW",))]
    assert dictionary_counts(df, metrics, ["status"], 0.0) == DictionaryCounts(40, {1: 10})
    assert footer_counts(df, ["status"]) == FooterCounts(40, {"status": 0})


def test_small_files_are_scanned(spark: Any, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dictionary_values, "MIN_FILE_BYTES", 64 * 1024 * 1024)
    scanned = scanned_columns(monkeypatch)
    results = _measured(evaluate_dataframe(spark.read.parquet(str(folder)), _rules()))
    assert scanned == [{"id", "status", "country", "code"}]  # a few KiB: one scan is cheaper
    assert results == _expected(_rows(ROWS))
    helper = spark._jvm.lineagequality.DictionaryValues
    df = spark.read.parquet(str(folder))
    assert helper.distinct(df._jdf, ["status"], 0, 1 << 20, 100, 1 << 20, 1 << 26) is None


def test_the_size_from_which_they_pay_is_shared_by_the_columns_answered(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `code` written plain: asked for, but not answered on dictionaries
    folder = _write(spark, tmp_path / "mixed", **{"parquet.enable.dictionary#code": "false"})
    files = sum(p.stat().st_size for p in folder.glob("*.parquet"))
    monkeypatch.setattr(dictionary_values, "MIN_FILE_BYTES", 2 * files)
    df = spark.read.parquet(str(folder))
    status = Metric(Measure.INVALID, "status", values=tuple(STATUSES))
    country = Metric(Measure.INVALID, "country", values=tuple(COUNTRIES))
    code = Metric(Measure.INVALID, "code", pattern="^k[0-9]{1,2}$")
    one = [Metric(Measure.ROWS), status]
    assert dictionary_counts(df, one, ["status"], 0.0) is None  # 2x the files for one column
    # two asked, one of them found plain after the first pass: one column answered, not paying
    assert dictionary_counts(df, [*one, code], ["status", "code"], 0.0) is None
    expected = _expected(_rows(ROWS))
    assert dictionary_counts(df, [*one, country], ["status", "country"], 0.0) == DictionaryCounts(
        ROWS, {1: expected["status_listed"][1], 2: 0}
    )
    monkeypatch.setattr(dictionary_values, "MIN_FILE_BYTES", 0)  # `code` is plain indeed
    assert dictionary_counts(df, [*one, code], ["status", "code"], 0.0) == DictionaryCounts(
        ROWS, {1: expected["status_listed"][1]}
    )


def test_the_predicates_answers_are_read_off_the_optimized_plan_as_collected(spark: Any) -> None:
    """`DictionaryValues.answers`: the rows Spark's optimizer folded the predicates into, the
    same as collecting them (true, false and null answers, in the values' order)."""
    from pyspark.sql import functions as F

    # a local relation, as the helper's frame of distinct values is
    frame = spark.sql("SELECT * FROM VALUES ('a'), ('bb'), ('ccc'), ('') AS t(v)")
    selected = frame.select(
        F.col("v").isin("a", "ccc").alias("t0"),
        F.when(F.length("v") > 1, F.lit(True)).alias("t1"),  # null where not longer than 1
        F.col("v").rlike("^b+$").alias("t2"),
    )
    helper = spark._jvm.lineagequality.DictionaryValues
    encoded = helper.answers(selected._jdf)
    expected = [[value is True for value in row] for row in selected.collect()]
    assert encoded == "1n0" + "011" + "110" + "0n0"
    assert dictionary_values._answers(helper, selected, 3) == expected


def test_without_the_optimizers_folding_the_predicates_are_collected(
    spark: Any, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With Spark's ConvertToLocalRelation switched off, the plan is a projection still: the
    helper declines and the answers are collected, the counts the same."""
    rule = "org.apache.spark.sql.catalyst.optimizer.ConvertToLocalRelation"
    helper = spark._jvm.lineagequality.DictionaryValues
    frame = spark.sql("SELECT * FROM VALUES ('a') AS t(v)")
    spark.conf.set("spark.sql.optimizer.excludedRules", rule)
    try:
        assert helper.answers(frame.select((frame.v == "a").alias("t0"))._jdf) is None
        fast, slow, scanned = _both_ways(spark.read.parquet(str(folder)), monkeypatch)
    finally:
        spark.conf.unset("spark.sql.optimizer.excludedRules")
    assert scanned[0] == {"id"}
    assert fast == slow == _expected(_rows(ROWS))
