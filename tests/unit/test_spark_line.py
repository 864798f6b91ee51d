"""Which Spark line a PySpark version is, and which jars belong to it (spark_line.py)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from lineage_quality.errors import ConfigError
from lineage_quality.evaluation.spark_line import (
    LINES,
    JarLineMismatch,
    check_jar,
    jars_dir,
    line_of,
    running_line,
)

SPARK35, SPARK4 = LINES


@pytest.mark.parametrize(
    ("version", "line"),
    [
        ("3.5.0", SPARK35),
        ("3.5.9", SPARK35),
        ("4.0.0", SPARK4),
        ("4.1.4", SPARK4),
        ("4.3.0", SPARK4),
        ("4.1.0.dev1", SPARK4),
    ],
)
def test_versions_map_to_their_line(version: str, line: object) -> None:
    assert line_of(version) == line


@pytest.mark.parametrize("version", ["3.4.4", "3.3.0", "2.4.8", "5.0.0", "nonsense"])
def test_other_versions_are_refused_by_name(version: str) -> None:
    with pytest.raises(ConfigError, match=rf"Spark {version} is not supported.*3\.5.*4"):
        line_of(version)


def test_the_running_pyspark_has_a_line_and_its_jars_folder() -> None:
    import pyspark

    line = running_line()
    assert line == line_of(pyspark.__version__)
    assert jars_dir(line, Path("/repo")) == Path("/repo/jvm-config") / line.jars


def test_jars_env_variable_wins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("LINEAGE_QUALITY_JARS", str(tmp_path))
    assert jars_dir(SPARK4, Path("/repo")) == tmp_path


@pytest.mark.parametrize(
    "name",
    [
        "openlineage-spark_2.13-1.53.0.jar",
        "delta-spark_2.13-4.3.1.jar",
        "iceberg-spark-runtime-4.1_2.13-1.12.0.jar",
    ],
)
def test_a_spark4_jar_on_spark35_names_both_versions(tmp_path: Path, name: str) -> None:
    jar = tmp_path / name
    jar.write_bytes(b"")
    with pytest.raises(JarLineMismatch) as raised:
        check_jar(jar, "3.5.9")
    text = str(raised.value)
    assert name in text
    assert "Scala 2.13" in text
    assert "this PySpark is 3.5.9" in text
    assert "make jars SPARK=3.5" in text


def test_a_spark35_jar_on_spark4_is_refused(tmp_path: Path) -> None:
    jar = tmp_path / "openlineage-spark_2.12-1.53.0.jar"
    jar.write_bytes(b"")
    with pytest.raises(JarLineMismatch, match=r"Scala 2\.12.*4\.1\.4 \(Spark 4, Scala 2\.13\)"):
        check_jar(jar, "4.1.4")


def test_an_iceberg_runtime_of_another_spark_with_the_same_scala_is_refused(
    tmp_path: Path,
) -> None:
    # Scala 2.12 matches Spark 3.5, but a 3.4 runtime calls Spark 3.4 internals.
    jar = tmp_path / "iceberg-spark-runtime-3.4_2.12-1.6.1.jar"
    jar.write_bytes(b"")
    with pytest.raises(ConfigError, match=r"Spark 3\.4"):
        check_jar(jar, "3.5.9")


def _engine_jar(path: Path, spark: str, scala: str) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(
            "META-INF/MANIFEST.MF",
            f"Manifest-Version: 1.0\nSpark-Version: {spark}\nScala-Binary-Version: {scala}\n",
        )
    return path


def test_the_engine_jar_is_checked_by_its_manifest(tmp_path: Path) -> None:
    jar = _engine_jar(tmp_path / "lineage-quality-engine.jar", "4.1.4", "2.13")
    check_jar(jar, "4.1.1")  # same line: accepted
    with pytest.raises(JarLineMismatch, match=r"built for Spark 4\.1\.4 Scala 2\.13"):
        check_jar(jar, "3.5.9")


def test_jars_that_declare_nothing_pass(tmp_path: Path) -> None:
    plain = tmp_path / "some-helper.jar"
    with zipfile.ZipFile(plain, "w") as archive:
        archive.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n")
    check_jar(plain, "3.5.9")
    check_jar(plain, "4.1.4")


def _other_line_jar(folder: Path, stem: str) -> tuple[Path, str]:
    other = SPARK4 if running_line() == SPARK35 else SPARK35
    jar = folder / f"{stem}_{other.scala}-1.0.0.jar"
    jar.write_bytes(b"")
    return jar, other.scala


def test_attach_refuses_a_listener_jar_of_the_other_line(tmp_path: Path) -> None:
    from lineage_quality.driver.attach import _find_jar

    jar, scala = _other_line_jar(tmp_path, "openlineage-spark")
    with pytest.raises(JarLineMismatch, match=rf"built for Scala {scala}, but this PySpark is"):
        _find_jar(jar)


def test_the_evaluator_refuses_a_given_jar_of_the_other_line_before_spark_starts(
    tmp_path: Path,
) -> None:
    from lineage_quality.evaluation.session import evaluator_session

    jar, scala = _other_line_jar(tmp_path, "delta-spark")
    with pytest.raises(JarLineMismatch, match=rf"delta-spark_{scala}-1\.0\.0\.jar is built for"):
        evaluator_session("local[1]", {"spark.jars": f"{tmp_path / 'absent.jar'},{jar}"})
