"""Spark settings every system runs with, so only the system differs between timings."""

from __future__ import annotations

from typing import Any

SPARK_CONF = {
    "spark.master": "local[2]",
    "spark.driver.memory": "3g",
    "spark.sql.shuffle.partitions": "16",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.session.timeZone": "UTC",
}


def session(extra: dict[str, str]) -> Any:
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName("lineage-quality-bench")
    for key, value in {**SPARK_CONF, **extra}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark
