"""On a Spark standalone cluster (issue 25): `check` with `spark.master` in its settings, `serve`
evaluating on the cluster, and in-driver mode in a job on the cluster. Each proves that tasks ran
on the Worker's executor, with the engine's jar (a pattern rule runs in the jar's RegexDfa there),
and gives the same values as local mode."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lineage_quality.sparksubmit import spark_submit

from .serve_process import JOBS, REPO_ROOT, assertions_of, completes, serve_process
from .standalone import SparkCluster, executor_log

CONTRACTS = Path(__file__).resolve().parent / "contracts" / "cluster"
ENGINE_JAR = "lineage-quality-engine.jar"


def _driver_conf(cluster: SparkCluster) -> dict[str, str]:
    """The cluster's settings for a driver, without its cap on cores (so the defaults show)."""
    conf = cluster.spark_conf()
    for key in ("spark.master", "spark.cores.max", "spark.executor.cores"):
        conf.pop(key)
    return conf


def _ran_with_the_engine_jar(cluster: SparkCluster, app_name: str) -> str:
    """The executor log of the latest application `app_name`, after checking that its executor
    fetched the engine jar and ran tasks."""
    apps = cluster.app_ids(app_name)
    assert apps, f"no application {app_name} on the cluster: {cluster.app_ids()}"
    (executor, *_) = cluster.executor_dirs(apps[-1])
    assert (executor / ENGINE_JAR).is_file(), sorted(p.name for p in executor.iterdir())
    log = executor_log(executor)
    assert "Finished task" in log, log[-3000:]
    return log


@pytest.fixture(scope="module")
def data(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cluster") / "cluster" / "orders"
    spark.range(8).selectExpr(
        "id", "CASE WHEN id = 3 THEN 'bad' ELSE concat('C-', id) END AS code"
    ).coalesce(1).write.parquet(str(path))
    return path


def _check(data: Path, conf: dict[str, str]) -> subprocess.CompletedProcess[str]:
    cmd = [
        sys.executable, "-m", "lineage_quality.cli", "check",
        "--contract", str(CONTRACTS / "orders.yaml"), "--dataset", str(data), "--output", "json",
    ]  # fmt: skip
    for key, value in conf.items():
        cmd += ["--spark-conf", f"{key}={value}"]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)


def test_check_runs_on_the_master_its_settings_name(
    spark_cluster: SparkCluster, data: Path
) -> None:
    cluster = spark_cluster
    local = _check(data, {"spark.master": "local[1]"})
    assert local.returncode == 1, local.stderr[-3000:]  # the pattern rule fails on 'bad'
    remote = _check(data, {**_driver_conf(cluster), "spark.master": cluster.master_url})
    assert remote.returncode == 1, remote.stderr[-3000:]
    values = {r["name"]: (r["status"], r["actual"]) for r in json.loads(local.stdout)["results"]}
    on_cluster = json.loads(remote.stdout)["results"]
    assert {r["name"]: (r["status"], r["actual"]) for r in on_cluster} == values
    assert values["orders_rows"] == ("PASSED", "8")
    assert values["orders_code_pattern"] == ("FAILED", "1")
    log = _ran_with_the_engine_jar(cluster, "lineage-quality-evaluator")
    # the evaluator does not take every core of the cluster by default (the Worker has 4)
    (command,) = [line for line in log.splitlines() if line.startswith("Spark Executor Command")]
    assert '"--cores" "2"' in command, command


def test_serve_evaluates_on_the_cluster(spark_cluster: SparkCluster, tmp_path: Path) -> None:
    conf = {**_driver_conf(spark_cluster), "spark.cores.max": "1"}
    target = tmp_path / "cluster" / "orders"
    with serve_process(
        tmp_path / "serve", CONTRACTS, conf, "--spark-master", spark_cluster.master_url
    ) as serve:
        serve.submit("files_job.py", [str(target), "overwrite", "5"], {}, tmp_path, "local[1]")
        serve.submit("files_job.py", [str(target), "append", "3"], {}, tmp_path, "local[1]")
        events = serve.wait_for(
            lambda ev: sum(1 for e in completes(ev, "") if assertions_of(e, "orders")) >= 2
        )
    judged = [e for e in completes(events, "") if assertions_of(e, "orders")]
    assert [assertions_of(e, "orders")["orders_rows"]["actual"] for e in judged] == ["5", "8"]
    for event in judged:
        for a in assertions_of(event, "orders").values():
            assert a["params"]["status"] == "PASSED", a
    _ran_with_the_engine_jar(spark_cluster, "lineage-quality-evaluator")


def test_in_driver_mode_puts_the_engine_jar_on_the_executors(
    spark_cluster: SparkCluster, tmp_path: Path
) -> None:
    events = tmp_path / "events.jsonl"
    target = tmp_path / "cluster" / "orders"
    args = ["--master", spark_cluster.master_url]
    for key, value in {**_driver_conf(spark_cluster), "spark.cores.max": "1"}.items():
        args += ["--conf", f"{key}={value}"]
    log = tmp_path / "job.log"
    job = [
        str(JOBS / "in_driver_cluster_job.py"),
        str(CONTRACTS), str(target), str(events), str(tmp_path / "spool.db"),
    ]  # fmt: skip
    result = spark_submit([*args, *job], cwd=REPO_ROOT, log_file=log)
    assert result.returncode == 0, log.read_text()[-4000:]
    forwarded = [json.loads(line) for line in events.read_text().splitlines() if line.strip()]
    (judged,) = [e for e in completes(forwarded, "") if assertions_of(e, "orders")]
    found = assertions_of(judged, "orders")
    assert found["orders_rows"]["actual"] == "6"
    assert found["orders_code_pattern"]["params"]["status"] == "PASSED"
    _ran_with_the_engine_jar(spark_cluster, "deploy_in_driver_cluster")
