"""The Spark lines lineage-quality supports, and the JVM jars that belong to each.

PySpark is the user's (the package declares a range, never a pin), so the running PySpark picks
the line, and the line picks the jars: the OpenLineage listener and the table formats are built
per Scala version, the engine's helper jar per Spark line (`make jars SPARK=...`). A jar of the
other line fails deep inside Spark with a NoSuchMethodError or a Scala mismatch; checking the
names and the engine jar's manifest first turns that into one error naming both versions.
"""

from __future__ import annotations

import os
import re
import zipfile
from pathlib import Path

import attrs

from lineage_quality.errors import ConfigError

__all__ = [
    "LINES",
    "JarLineMismatch",
    "SparkLine",
    "check_jar",
    "jars_dir",
    "line_of",
    "pyspark_version",
    "running_line",
]


class JarLineMismatch(ConfigError):
    """A jar built for another Spark or Scala version than the running PySpark."""


@attrs.frozen
class SparkLine:
    """`name` as the Makefile's SPARK= takes it; `scala`: the Scala binary version its jars are
    built for; `jars`: the folder under jvm-config/ that `make jars SPARK=<name>` fills."""

    name: str
    scala: str
    jars: str


LINES = (
    SparkLine(name="3.5", scala="2.12", jars="jars"),
    SparkLine(name="4", scala="2.13", jars="jars-spark4"),
)
REPO_ROOT = Path(__file__).resolve().parents[3]


def line_of(version: str) -> SparkLine:
    """The line of a Spark version string ("3.5.9", "4.1.4", "4.0.0.dev1")."""
    match = re.match(r"(\d+)\.(\d+)", version)
    major_minor = (int(match.group(1)), int(match.group(2))) if match else None
    if major_minor == (3, 5):
        return LINES[0]
    if major_minor is not None and major_minor[0] == 4:
        return LINES[1]
    supported = ", ".join(f"Spark {line.name}" for line in LINES)
    raise ConfigError(f"Spark {version} is not supported: lineage-quality runs on {supported}.x")


def pyspark_version() -> str:
    try:
        import pyspark
    except ImportError as missing:
        raise ConfigError(
            "PySpark is not installed: lineage-quality runs on the environment's own PySpark "
            "(Spark 3.5 or 4.x); pip install 'lineage-quality[spark]' adds one"
        ) from missing
    return str(pyspark.__version__)


def running_line() -> SparkLine:
    """The line of this environment's PySpark."""
    return line_of(pyspark_version())


def jars_dir(line: SparkLine | None = None, root: Path | None = None) -> Path:
    """Where the jars of `line` (default: the running one) are: the folder LINEAGE_QUALITY_JARS
    names, else jvm-config/<line's folder> of the checkout (`root`, default this one)."""
    folder = os.environ.get("LINEAGE_QUALITY_JARS")
    if folder:
        return Path(folder)
    line = line or running_line()
    return (root or REPO_ROOT) / "jvm-config" / line.jars


# A Scala-built jar names its Scala version after an underscore: openlineage-spark_2.12-1.53.0,
# delta-spark_2.13-4.3.1, iceberg-spark-runtime-4.1_2.13-1.12.0 (whose "4.1" is the Spark line).
_SCALA_IN_NAME = re.compile(r"_(2\.1[0-9])(?:-|\.jar$)")
_SPARK_IN_ICEBERG = re.compile(r"iceberg-spark-runtime-(\d+\.\d+)_")


def _built_for(jar: Path) -> tuple[str | None, str | None]:
    """(Spark version, Scala version) a jar declares: the engine jar in its manifest (written by
    the Makefile), the others in their file names."""
    spark = scala = None
    name = jar.name
    found = _SCALA_IN_NAME.search(name)
    if found:
        scala = found.group(1)
    iceberg = _SPARK_IN_ICEBERG.search(name)
    if iceberg:
        spark = iceberg.group(1)
    if name.endswith(".jar") and found is None and jar.is_file():
        try:
            with zipfile.ZipFile(jar) as archive:
                manifest = archive.read("META-INF/MANIFEST.MF").decode("utf-8", "replace")
        except (OSError, KeyError, zipfile.BadZipFile):
            return spark, scala
        fields = dict(line.split(": ", 1) for line in manifest.splitlines() if ": " in line)
        spark = fields.get("Spark-Version", spark)
        scala = fields.get("Scala-Binary-Version", scala)
    return spark, scala


def check_jar(jar: Path, version: str | None = None) -> None:
    """Raise a ConfigError when `jar` was built for another Spark line than `version` (default:
    this environment's PySpark). Jars that declare nothing are let through."""
    version = version or pyspark_version()
    line = line_of(version)
    spark, scala = _built_for(jar)
    wrong_scala = scala is not None and scala != line.scala
    wrong_spark = spark is not None and line_of(spark) != line
    if wrong_scala or wrong_spark:
        built = " ".join(
            part
            for part in (f"Spark {spark}" if spark else "", f"Scala {scala}" if scala else "")
            if part
        )
        raise JarLineMismatch(
            f"{jar} is built for {built}, but this PySpark is {version} (Spark {line.name}, "
            f"Scala {line.scala}): use the jars of `make jars SPARK={line.name}` "
            f"(jvm-config/{line.jars}/)"
        )
