"""The evaluator's own SparkSession: `evaluator_session` (the user's settings, then ours: the
table-format and engine jars, the SQL settings the rules' semantics depend on, a quiet log, a JVM
that ends on an OutOfMemoryError), used by `Evaluator` (evaluator.py) and `check`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from pyspark import SparkContext
from pyspark.sql import SparkSession

from lineage_quality.engine.patterns import ENGINE_JAR_NAME
from lineage_quality.errors import SparkStartError
from lineage_quality.evaluation.spark_line import check_jar, jars_dir, running_line

APP_NAME = "lineage-quality-evaluator"
DEFAULT_MASTER = "local[*]"
# The evaluator's cores on a standalone cluster (spark.cores.max) unless the settings say more.
DEFAULT_CLUSTER_CORES = "2"

# Session settings the rules' semantics depend on (also set on the in-driver evaluation session).
EVALUATION_SQL_CONF = {
    # dateFormat rules: an unparseable value is null (a failure to count), never an exception.
    "spark.sql.legacy.timeParserPolicy": "CORRECTED",
    # Counting rules compare values of any type; under ANSI a mismatch would be an exception.
    "spark.sql.ansi.enabled": "false",
    # type: sql checks read the dataset's view and catalog tables, not arbitrary files.
    "spark.sql.runSQLOnFiles": "false",
}


def table_format_jars() -> list[Path]:
    """The Delta Lake and Iceberg jars `make jars` put in jvm-config/jars (jars-spark4 on Spark 4;
    or the folder named by LINEAGE_QUALITY_JARS); never the OpenLineage listener. A jar built for
    the other Spark line is a ConfigError naming both versions."""
    where = jars_dir()
    if not where.is_dir():
        return []
    patterns = ("delta-spark_*.jar", "delta-storage-*.jar", "iceberg-spark-runtime-*.jar")
    found = sorted(j for p in patterns for j in where.glob(p))
    for jar in found:
        check_jar(jar)
    return found


def engine_jar() -> Path | None:
    """The engine's JVM helpers (`make jars` builds it from jvm-config/src, per Spark line):
    pattern rules run on a byte-level DFA with it, on `rlike` without it."""
    jar = jars_dir() / ENGINE_JAR_NAME
    if not jar.is_file():
        return None
    check_jar(jar)
    return jar


def evaluator_session(
    master: str | None = None, conf: Mapping[str, str] | None = None
) -> SparkSession:
    """The evaluator's session: the user's settings (`conf`: metastore, object stores, table
    formats; see spark_conf.PROTECTED for the few it may not change), then ours."""
    builder = (
        SparkSession.builder.appName(APP_NAME)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "16")
        # concurrent evaluations (one per producer worker) share the executors
        .config("spark.scheduler.mode", "FAIR")
    )
    running_line()  # a PySpark of no supported line is refused here, by name
    conf = dict(conf or {})
    for given in (Path(j.strip()) for j in conf.get("spark.jars", "").split(",") if j.strip()):
        if given.is_file():  # the user's own: another line's jar is named here
            check_jar(given)
    if "spark.jars" not in conf and SparkContext._active_spark_context is None:
        jars = table_format_jars()
        if jars:  # Delta Lake and Iceberg readers, for time travel (docs/evaluation.md)
            conf["spark.jars"] = ",".join(str(j) for j in jars)
            names = " ".join(j.name for j in jars)
            extensions = []
            if "delta-spark" in names:
                extensions.append("io.delta.sql.DeltaSparkSessionExtension")
                catalog = "org.apache.spark.sql.delta.catalog.DeltaCatalog"
                conf.setdefault("spark.sql.catalog.spark_catalog", catalog)
            if "iceberg-spark-runtime" in names:
                extensions.append(
                    "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
                )
            conf.setdefault("spark.sql.extensions", ",".join(extensions))
    helper = engine_jar()
    if helper is not None and SparkContext._active_spark_context is None:
        listed = [j for j in conf.get("spark.jars", "").split(",") if j.strip()]
        conf["spark.jars"] = ",".join([*listed, str(helper)])
    for key, value in conf.items():
        builder = builder.config(key, value)
    builder = builder.config("spark.extraListeners", "")  # never our own lineage here
    for key, value in EVALUATION_SQL_CONF.items():
        builder = builder.config(key, value)
    # spark.master as spark-submit takes it: --spark-master, else the settings, else local.
    master = master or conf.get("spark.master")
    if master:
        builder = builder.master(master)
    elif not SparkSession.getActiveSession():
        builder = builder.master(DEFAULT_MASTER)
    if (master or "").startswith("spark://") and "spark.cores.max" not in conf:
        # A standalone cluster gives an application every free core unless told otherwise, and
        # a long-lived evaluator would keep them from the jobs it watches.
        builder = builder.config("spark.cores.max", DEFAULT_CLUSTER_CORES)
    if (
        SparkContext._active_spark_context is None
        and "LINEAGE_QUALITY_SPARK_LOG4J" not in os.environ
    ):
        # A JVM of our own: keep Spark's startup chatter off the user's terminal.
        log4j = Path(__file__).resolve().parent.parent / "log4j2.properties"
        # An OutOfMemoryError ends the JVM (a clean death the producer recovers from) instead
        # of leaving it half-working for every later evaluation.
        user = (conf or {}).get("spark.driver.extraJavaOptions", "")
        builder = builder.config(
            "spark.driver.extraJavaOptions",
            f"{user} -Dlog4j2.configurationFile={log4j.as_uri()} "
            "-XX:+ExitOnOutOfMemoryError".strip(),
        )
    try:
        return builder.getOrCreate()
    except Exception as exc:
        text = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
        raise SparkStartError(
            f"cannot start Spark for the evaluator (master {master or DEFAULT_MASTER})",
            text[0][:500] if text else type(exc).__name__,
        ) from exc
