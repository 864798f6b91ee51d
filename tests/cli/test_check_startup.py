"""`lineage-quality check` as a real process, on what the JVM does at start-up (issue 25):
`spark.master` from the settings is honoured, a Spark that cannot start is one clear message with
exit 2 (not a traceback with exit 1, the code of a failed rule), and `--output json` is JSON on
stdout whatever the JVM prints there (Ivy's `:: loading settings ::` for spark.jars.packages)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ODCS = """apiVersion: v3.1.0
kind: DataContract
id: startup
version: 1.0.0
status: active
schema:
  - name: people
    quality:
      - metric: rowCount
        mustBeGreaterThan: 0
        name: people_rows
"""


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("startup")
    (folder / "people.csv").write_text("id,name\n1,ann\n2,bob\n3,cy\n")
    (folder / "people.yaml").write_text(ODCS)
    return folder / "people.csv", folder / "people.yaml"


def _check(dataset: tuple[Path, Path], *extra: str) -> subprocess.CompletedProcess[str]:
    data, contract = dataset
    cli = Path(sys.executable).parent / "lineage-quality"
    return subprocess.run(
        [str(cli), "check", "--contract", str(contract), "--dataset", str(data), *extra],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_spark_master_from_the_settings_is_used(dataset: tuple[Path, Path]) -> None:
    """A master in --spark-conf is the one Spark is started with (before, `local[*]` silently
    replaced it): an unparseable one fails, and says which it was."""
    done = _check(dataset, "--spark-conf", "spark.master=nowhere://at-all")
    assert done.returncode == 2, done.stderr[-3000:]
    lines = [line for line in done.stderr.splitlines() if line.startswith("lineage-quality:")]
    assert len(lines) == 1, done.stderr[-3000:]
    assert "cannot start Spark for the evaluator (master nowhere://at-all)" in lines[0]
    # the JVM's own reason, and nothing else: no Java stack, no Python traceback
    assert "SparkException: Master must either be yarn or start with spark" in lines[0]
    assert done.stderr.strip() == lines[0], done.stderr[-3000:]
    assert done.stdout == ""


def test_spark_master_from_a_properties_file(dataset: tuple[Path, Path], tmp_path: Path) -> None:
    conf = tmp_path / "evaluator.conf"
    conf.write_text("spark.master  nowhere://from-the-file\n")
    done = _check(dataset, "--properties-file", str(conf))
    assert done.returncode == 2
    assert "(master nowhere://from-the-file)" in done.stderr


def test_json_output_stays_json_with_spark_jars_packages(dataset: tuple[Path, Path]) -> None:
    """spark.jars.packages makes the JVM resolve with Ivy, which prints to stdout."""
    done = _check(
        dataset,
        "--output",
        "json",
        "--spark-conf",
        "spark.jars.packages=org.checkerframework:checker-qual:3.42.0",
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)  # the whole of stdout: nothing before or after
    (result,) = report["results"]
    assert result["status"] == "PASSED" and result["actual"] == "3"
    assert ":: loading settings ::" in done.stderr  # the JVM's line went to stderr instead
