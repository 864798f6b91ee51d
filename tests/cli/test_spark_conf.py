"""The evaluator takes the user's Spark settings (issue 8.5): `--spark-conf` and
`--properties-file`, for `check` and `serve`; a few settings stay the producer's own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lineage_quality.cli import main
from lineage_quality.errors import ConfigError
from lineage_quality.evaluation.spark_conf import evaluator_conf, parse_pairs, read_properties


def test_properties_file_format_and_errors(tmp_path: Path) -> None:
    props = tmp_path / "spark-defaults.conf"
    props.write_text(
        "# the metastore\n"
        "spark.hadoop.hive.metastore.uris   thrift://metastore:9083\n"
        "spark.sql.catalogImplementation=hive\n"
        "\n"
        "spark.hadoop.fs.s3a.endpoint: http://minio:9000\n"
    )
    assert read_properties(props) == {
        "spark.hadoop.hive.metastore.uris": "thrift://metastore:9083",
        "spark.sql.catalogImplementation": "hive",
        "spark.hadoop.fs.s3a.endpoint": "http://minio:9000",
    }
    # --spark-conf wins over the file
    conf = evaluator_conf(str(props), ["spark.sql.catalogImplementation=in-memory"])
    assert conf["spark.sql.catalogImplementation"] == "in-memory"
    bad = tmp_path / "bad.conf"
    bad.write_text("spark.a 1\nspark.lonely\n")
    with pytest.raises(ConfigError, match=r"bad.conf: line 2: expected `key value`"):
        read_properties(bad)


@pytest.mark.parametrize(
    ("pair", "message"),
    [
        ("spark.extraListeners=io.openlineage.spark.agent.OpenLineageSparkListener", "lineage"),
        ("spark.sql.runSQLOnFiles=true", "only their dataset"),
        ("spark.sql.ansi.enabled=true", "count"),
        ("nospark=1", "not a Spark setting"),
        ("spark.a", "expected key=value"),
    ],
)
def test_settings_that_would_break_the_sandbox_are_refused(pair: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_pairs([pair])


ODCS = """\
apiVersion: v3.1.0
kind: DataContract
id: tz
version: 1.0.0
status: active
schema:
  - name: p
    quality:
      - type: sql
        query: SELECT hour(from_unixtime(0)) FROM {object} LIMIT 1
        mustBe: 9
        name: evaluated_in_tokyo_time
"""


@pytest.mark.spark
def test_check_evaluates_with_the_given_settings(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "one"
    spark.createDataFrame([(1,)], "a INT").write.parquet(str(data))
    contract = tmp_path / "tz.yaml"
    contract.write_text(ODCS)
    props = tmp_path / "spark.conf"
    props.write_text("spark.sql.session.timeZone UTC\n")
    before = spark.conf.get("spark.sql.session.timeZone")
    try:
        args = ["check", "--contract", str(contract), "--dataset", str(data)]
        assert main([*args, "--properties-file", str(props)]) == 1  # UTC: hour 0
        assert main([*args, "--properties-file", str(props),
                     "--spark-conf", "spark.sql.session.timeZone=Asia/Tokyo"]) == 0  # fmt: skip
        assert main([*args, "--spark-conf", "spark.sql.runSQLOnFiles=true"]) == 2
    finally:
        spark.conf.set("spark.sql.session.timeZone", before)
    assert "spark.sql.runSQLOnFiles cannot be set" in capsys.readouterr().err
