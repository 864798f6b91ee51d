"""A real Spark standalone cluster (one Master, one Worker) from PySpark's own distribution, and
helpers to find what an application left in the Worker's work dir (executor folders, fetched
jars, executor logs).

Test support only: nothing here ships in the runtime package.
"""

from __future__ import annotations

import contextlib
import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .processes import (
    PYSPARK_HOME,
    PYTHON,
    ServerProcess,
    ServerStartError,
    free_port,
    port_was_taken,
    spark_env,
)

MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
# More slots than the machine's 2 cores: an evaluator's default cap (2) must show as a cap.
WORKER_CORES = 4
WORKER_MEMORY = "2g"
START_TIMEOUT_S = 90.0
START_ATTEMPTS = 3

# Spark moves to the next port when one is taken (spark.port.maxRetries, 16 by default), which
# would make the URLs we computed wrong. With no retries the daemon fails instead, and we start
# again on fresh ports.
DAEMON_OPTS = "-Dspark.port.maxRetries=0"


@dataclass
class SparkCluster:
    """A running standalone cluster. ``master_url`` is what ``--master`` takes."""

    master_url: str
    master_json_url: str
    worker_json_url: str
    work_dir: Path
    log_dir: Path
    _processes: list[ServerProcess] = field(default_factory=list, repr=False)

    def spark_conf(self) -> dict[str, str]:
        """Settings for a driver (SparkSession builder or spark-submit ``--conf``) on this cluster.

        The driver stays on loopback (the host name may resolve elsewhere), executors run this
        venv's Python, and each application takes one of the Worker's four cores and a quarter of
        its memory, so two applications (a job and an evaluator, say) can run at the same time.
        """
        return {
            "spark.master": self.master_url,
            "spark.driver.host": "127.0.0.1",
            "spark.driver.bindAddress": "127.0.0.1",
            "spark.pyspark.python": PYTHON,
            "spark.cores.max": "1",
            "spark.executor.cores": "1",
            "spark.executor.memory": "512m",
        }

    def master_state(self) -> dict[str, Any]:
        """The Master's JSON status: workers, ``activeapps``, ``completedapps``..."""
        return _get_json(self.master_json_url)

    def app_ids(self, name: str | None = None) -> list[str]:
        """Application ids the Master knows (running and finished), oldest first; only those
        named ``name`` (the driver's ``spark.app.name``) when given."""
        state = self.master_state()
        apps = [*state.get("activeapps", []), *state.get("completedapps", [])]
        chosen = [a for a in apps if name is None or a.get("name") == name]
        return [a["id"] for a in sorted(chosen, key=lambda a: (a.get("starttime", 0), a["id"]))]

    def executor_dirs(self, app_id: str | None = None) -> list[Path]:
        """The executor folders of ``app_id`` (default: the latest application) in ``work_dir``."""
        return executor_dirs(self.work_dir, app_id)

    def close(self) -> None:
        # The Worker first: it stops its executors; then the Master.
        for process in reversed(self._processes):
            process.stop()

    def __enter__(self) -> SparkCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def app_dirs(work_dir: Path) -> list[Path]:
    """``app-*`` folders in a Worker's work dir, oldest first.

    Application ids are ``app-<yyyyMMddHHmmss>-<nnnn>``: their names sort in submission order.
    """
    return sorted(p for p in work_dir.glob("app-*") if p.is_dir())


def executor_dirs(work_dir: Path, app_id: str | None = None) -> list[Path]:
    """``work_dir/<app>/<executor id>/`` folders of ``app_id``, or of the latest application.

    Each holds the executor's ``stdout``/``stderr`` and the jars and files it fetched from the
    driver (``spark.jars``, ``spark.files``). Empty when the application left nothing here.
    """
    if app_id is None:
        apps = app_dirs(work_dir)
        if not apps:
            return []
        app = apps[-1]
    else:
        app = work_dir / app_id
    if not app.is_dir():
        return []
    return sorted((p for p in app.iterdir() if p.is_dir()), key=lambda p: p.name)


def executor_log(executor_dir: Path) -> str:
    """An executor's stderr (Spark's log4j output goes there), or '' when there is none yet."""
    try:
        return (executor_dir / "stderr").read_text(errors="replace")
    except OSError:
        return ""


def _get_json(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url, timeout=5) as response:
        data: dict[str, Any] = json.load(response)
    return data


def _alive_workers(json_url: str) -> int:
    try:
        state = _get_json(json_url)
    except (urllib.error.URLError, OSError, ValueError):
        return 0
    return sum(1 for w in state.get("workers", []) if w.get("state") == "ALIVE")


def _start_once(base: Path) -> SparkCluster:
    spark_class = PYSPARK_HOME / "bin" / "spark-class"
    conf_dir = base / "conf"  # empty: no spark-defaults.conf of this machine leaks in
    work_dir, log_dir = base / "work", base / "logs"
    for folder in (conf_dir, work_dir, log_dir):
        folder.mkdir(parents=True, exist_ok=True)
    env = spark_env(
        SPARK_CONF_DIR=str(conf_dir),
        SPARK_LOG_DIR=str(log_dir),
        SPARK_NO_DAEMONIZE="1",
        SPARK_MASTER_OPTS=DAEMON_OPTS,
        SPARK_WORKER_OPTS=DAEMON_OPTS,
    )
    port, ui_port, worker_ui_port = free_port(), free_port(), free_port()
    master_url = f"spark://127.0.0.1:{port}"
    json_url = f"http://127.0.0.1:{ui_port}/json/"
    master = ServerProcess.start(
        "Spark Master",
        [str(spark_class), MASTER_CLASS, "--host", "127.0.0.1", "--port", str(port),
         "--webui-port", str(ui_port)],
        log_path=log_dir / "master.log", cwd=base, env=env,
    )  # fmt: skip
    cluster = SparkCluster(
        master_url=master_url,
        master_json_url=json_url,
        worker_json_url=f"http://127.0.0.1:{worker_ui_port}/json/",
        work_dir=work_dir,
        log_dir=log_dir,
        _processes=[master],
    )
    try:
        # The Worker is started at once: it retries registering until the Master is up.
        worker = ServerProcess.start(
            "Spark Worker",
            [str(spark_class), WORKER_CLASS, master_url, "--host", "127.0.0.1",
             "--cores", str(WORKER_CORES), "--memory", WORKER_MEMORY,
             "--work-dir", str(work_dir), "--webui-port", str(worker_ui_port)],
            log_path=log_dir / "worker.log", cwd=base, env=env,
        )  # fmt: skip
        cluster._processes.append(worker)

        def ready() -> bool:
            if not worker.alive():
                raise ServerStartError(
                    f"Spark Worker exited with {worker.process.returncode}; "
                    f"log {worker.log_path}:\n{worker.log_tail()}"
                )
            return _alive_workers(json_url) == 1

        master.wait_until(ready, timeout=START_TIMEOUT_S, what="ALIVE worker at " + json_url)
    except BaseException:
        cluster.close()
        raise
    return cluster


@contextlib.contextmanager
def start_spark_cluster(base: Path) -> Iterator[SparkCluster]:
    """A Master and one Worker (4 cores, 2 GiB) on free loopback ports, files under ``base``.

    Ready when the Master's JSON lists one ALIVE worker. Retried on fresh ports when a port
    was taken in between; stopped (with every executor) on exit.
    """
    for attempt in range(1, START_ATTEMPTS + 1):
        # A retry gets a folder of its own: the failed attempt's logs stay for a post-mortem.
        folder = base if attempt == 1 else base / f"retry-{attempt}"
        try:
            cluster = _start_once(folder)
            break
        except ServerStartError:
            logs = folder / "logs"
            if attempt == START_ATTEMPTS or not port_was_taken(
                logs / "master.log", logs / "worker.log"
            ):
                raise
    with cluster:
        yield cluster
