"""Running `spark-submit` from this Python environment (pyspark ships it)."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from lineage_quality.errors import ConfigError
from lineage_quality.evaluation.spark_line import check_jar, jars_dir, running_line


def spark_submit_path() -> str:
    beside = Path(sys.executable).parent / "spark-submit"
    if beside.exists():
        return str(beside)
    found = shutil.which("spark-submit")
    if not found:
        raise ConfigError("spark-submit not found: install pyspark in this environment")
    return found


def submit_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    # pyspark's spark-submit finds SPARK_HOME through the python on PATH: make it this one.
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env.setdefault("PYSPARK_PYTHON", sys.executable)
    env.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    env.update(extra or {})
    return env


def listener_jar(root: Path) -> Path:
    """The OpenLineage Spark listener jar Maven put in `jvm-config/jars` (`jars-spark4` on Spark
    4: `make jars SPARK=4`), checked against this environment's PySpark."""
    line = running_line()
    where = jars_dir(line, root)
    jar = next(where.glob("openlineage-spark_*.jar"), None)
    if jar is None:
        raise ConfigError(
            f"OpenLineage listener jar missing in {where}: run `make jars SPARK={line.name}` first"
        )
    check_jar(jar)
    return jar


def listener_args(
    root: Path, producer_url: str, conf: Mapping[str, str] | None = None, master: str = "local[2]"
) -> list[str]:
    """spark-submit options attaching the real listener (jvm-config/spark-defaults.conf) and
    pointing its HTTP transport at a producer; `conf` adds or overrides settings."""
    args = [
        "--master",
        master,
        "--properties-file",
        str(root / "jvm-config" / "spark-defaults.conf"),
        "--conf",
        f"spark.jars={listener_jar(root)}",
        "--conf",
        f"spark.openlineage.transport.url={producer_url}",
    ]
    for key, value in (conf or {}).items():
        args += ["--conf", f"{key}={value}"]
    return args


def spark_submit(
    args: Sequence[str],
    cwd: str | Path | None = None,
    log_file: Path | None = None,
    timeout: float = 900,
) -> subprocess.CompletedProcess[str]:
    cmd = [spark_submit_path(), *args]
    with contextlib.ExitStack() as stack:
        output: dict[str, Any] = {"capture_output": True}
        if log_file is not None:
            output = {
                "stdout": stack.enter_context(log_file.open("w")),
                "stderr": subprocess.STDOUT,
            }
        return subprocess.run(
            cmd, cwd=cwd, env=submit_env(), text=True, timeout=timeout, check=False, **output
        )
