"""Smoke tests of the deployment fixtures: each server is real and usable the way the deployment
tests will use it (applications in separate driver processes, as spark-submit would run them)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlparse

import pytest

from lineage_quality.evaluation.spark_line import jars_dir

from .metastore import HiveMetastore
from .processes import PYSPARK_HOME, PYTHON, REPO_ROOT, DriverRun, run_driver
from .s3server import S3Server, resolve_s3_jars
from .standalone import WORKER_CORES, SparkCluster, executor_dirs, executor_log

JOB = Path(__file__).resolve().parent / "jobs" / "smoke_job.py"
ENGINE_JAR = jars_dir(root=REPO_ROOT) / "lineage-quality-engine.jar"


def _ok(run: DriverRun) -> dict[str, object]:
    assert run.returncode == 0 and run.result is not None, run.describe()
    result: dict[str, object] = run.result
    return result


def _assert_tasks_ran(executor_dir: Path) -> None:
    log = executor_log(executor_dir)
    assert "Running task" in log and "Finished task" in log, log[-3000:]


# ------------------------------------------------------------------------------ Spark standalone


def test_spark_cluster_runs_the_application_on_its_worker(
    spark_cluster: SparkCluster, tmp_path: Path
) -> None:
    if not ENGINE_JAR.is_file():
        pytest.fail(f"{ENGINE_JAR} is missing: run `make jars`")
    assert spark_cluster.master_url.startswith("spark://127.0.0.1:")
    state = spark_cluster.master_state()
    assert state["aliveworkers"] == 1 and state["cores"] == WORKER_CORES

    conf = {**spark_cluster.spark_conf(), "spark.jars": str(ENGINE_JAR)}
    result = _ok(run_driver(JOB, "cluster", conf=conf, cwd=tmp_path))
    assert result["sum"] == sum(range(1000))
    assert result["executor_python"] == PYTHON

    app_id = str(result["app_id"])
    assert app_id.startswith("app-"), "not a standalone application id: ran in local mode?"
    assert spark_cluster.app_ids("deploy-smoke-cluster")[-1] == app_id
    dirs = spark_cluster.executor_dirs(app_id)
    assert dirs, f"no executor folder for {app_id} in {spark_cluster.work_dir}"
    assert dirs == spark_cluster.executor_dirs() == executor_dirs(spark_cluster.work_dir)
    # The executor fetched spark.jars from the driver into its folder, and ran the tasks.
    assert (dirs[0] / ENGINE_JAR.name).is_file()
    _assert_tasks_ran(dirs[0])


# --------------------------------------------------------------------------------- Hive metastore


def test_hive_metastore_shares_tables_between_applications(
    hive_metastore: HiveMetastore, tmp_path: Path
) -> None:
    assert hive_metastore.uri.startswith("thrift://127.0.0.1:")
    assert "default" in hive_metastore.databases()
    conf = hive_metastore.spark_conf()
    # Each application in a folder of its own: had either used an embedded Derby instead of
    # the server, it would have made a metastore_db there and B would not see A's table.
    writer, reader = tmp_path / "a", tmp_path / "b"
    writer.mkdir()
    reader.mkdir()

    wrote = _ok(run_driver(JOB, "hive-write", "default.smoke", conf=conf, cwd=writer))
    assert wrote["written"] == 5
    table_dir = hive_metastore.warehouse / "smoke"
    assert any(table_dir.glob("*.parquet")), f"no Parquet files in {table_dir}"

    read = _ok(run_driver(JOB, "hive-read-drop", "default.smoke", conf=conf, cwd=reader))
    assert read["rows"] == [[i, f"n{i}"] for i in range(5)]
    # Hadoop writes file URIs as file:/path, not file:///path: compare the paths.
    assert urlparse(str(read["location"])).path.rstrip("/") == str(table_dir)
    assert read["dropped"] is True
    assert not table_dir.exists(), "DROP of a managed table leaves its folder"
    assert not (writer / "metastore_db").exists() and not (reader / "metastore_db").exists()


# ------------------------------------------------------------------------------------------- S3


@pytest.mark.spark35_only  # hadoop-aws of the 3.5 line
def test_hadoop_aws_matches_pysparks_hadoop() -> None:
    # hadoop-aws calls Hadoop internals that change between releases: the versions must match.
    shipped = sorted(PYSPARK_HOME.joinpath("jars").glob("hadoop-client-api-*.jar"))
    assert shipped, "pyspark ships no hadoop-client-api jar"
    version = shipped[0].name.removeprefix("hadoop-client-api-").removesuffix(".jar")
    assert resolve_s3_jars().hadoop_version == version


def test_s3_create_bucket_makes_a_bucket(s3_server: S3Server) -> None:
    assert s3_server.endpoint.startswith("http://127.0.0.1:")
    assert "lq-made-by-api" not in s3_server.list_buckets()
    assert s3_server.create_bucket("lq-made-by-api") == "lq-made-by-api"
    assert "lq-made-by-api" in s3_server.list_buckets()
    assert s3_server.bucket_dir("lq-made-by-api").is_dir()
    # The filesystem backend's buckets are its folders: a folder made directly is a bucket too.
    s3_server.bucket_dir("lq-made-as-folder").mkdir()
    assert "lq-made-as-folder" in s3_server.list_buckets()


@pytest.mark.spark35_only  # hadoop-aws of the 3.5 line
def test_s3a_parquet_round_trip(s3_server: S3Server, tmp_path: Path) -> None:
    s3_server.create_bucket("smoke")
    conf = {**s3_server.spark_conf(), "spark.master": "local[1]", "spark.driver.host": "127.0.0.1"}
    result = _ok(run_driver(JOB, "s3", "s3a://smoke/x", conf=conf, cwd=tmp_path))
    assert (result["count"], result["sum_twice"]) == (10, 90)
    written = s3_server.bucket_dir("smoke") / "x"
    assert (written / "_SUCCESS").is_file()
    assert any(written.glob("part-*.parquet")), sorted(p.name for p in written.iterdir())


@pytest.mark.spark35_only  # hadoop-aws of the 3.5 line
def test_s3a_on_the_cluster_with_jars_on_the_class_path(
    spark_cluster: SparkCluster, s3_server: S3Server, tmp_path: Path
) -> None:
    s3_server.create_bucket("cluster")
    conf = {**spark_cluster.spark_conf(), **s3_server.spark_conf(ship_jars=False)}
    result = _ok(run_driver(JOB, "s3", "s3a://cluster/y", conf=conf, cwd=tmp_path))
    assert result["count"] == 10
    dirs = spark_cluster.executor_dirs(str(result["app_id"]))
    assert dirs, "the application left no executor folder: it did not run on the worker"
    _assert_tasks_ran(dirs[0])
    # Class path, not spark.jars: the 280 MB SDK was not copied into the executor's folder.
    assert not list(dirs[0].glob("*.jar"))
    assert (s3_server.bucket_dir("cluster") / "y" / "_SUCCESS").is_file()
