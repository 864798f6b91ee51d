"""Tiny Spark applications the deployment smoke tests run as separate driver processes.

    python smoke_job.py --conf-json '{"spark.master": ...}' MODE [ARG...]

MODE: ``cluster`` (a job with a Python step, on whatever master the conf names),
``hive-write TABLE`` / ``hive-read-drop TABLE`` (a table through the Hive metastore),
``s3 URL`` (Parquet written to and read back from an ``s3a://`` URL).
Prints one ``RESULT <json>`` line for the test to check.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from pyspark.sql import SparkSession


def session(conf: dict[str, str], app_name: str, hive: bool = False) -> SparkSession:
    builder = SparkSession.builder.appName(app_name).config("spark.ui.enabled", "false")
    if "spark.master" not in conf:
        builder = builder.master("local[1]")
    for key, value in conf.items():
        builder = builder.config(key, value)
    if hive:
        builder = builder.enableHiveSupport()
    return builder.getOrCreate()


def cluster(spark: SparkSession) -> dict[str, Any]:
    total = spark.range(1000).selectExpr("sum(id) AS s").collect()[0]["s"]
    # A Python step: proves executors start the venv's interpreter (spark.pyspark.python).
    executables = spark.sparkContext.parallelize([0], 1).map(lambda _: sys.executable).collect()
    return {"sum": total, "executor_python": executables[0]}


def hive_write(spark: SparkSession, table: str) -> dict[str, Any]:
    rows = spark.createDataFrame([(i, f"n{i}") for i in range(5)], "id INT, name STRING")
    rows.write.mode("overwrite").format("parquet").saveAsTable(table)
    return {"written": rows.count()}


def hive_read_drop(spark: SparkSession, table: str) -> dict[str, Any]:
    database, name = table.split(".")
    rows = sorted((r["id"], r["name"]) for r in spark.table(table).collect())
    location = spark.sql(f"DESCRIBE TABLE EXTENDED {table}").where("col_name = 'Location'")
    spark.sql(f"DROP TABLE {table}")
    left = [t.name for t in spark.catalog.listTables(database)]
    return {
        "rows": rows,
        "location": location.collect()[0]["data_type"],
        "tables_after_drop": left,
        "dropped": name not in left,
    }


def s3(spark: SparkSession, url: str) -> dict[str, Any]:
    spark.range(10).selectExpr("id", "id * 2 AS twice").write.mode("overwrite").parquet(url)
    back = spark.read.parquet(url)
    return {"count": back.count(), "sum_twice": back.selectExpr("sum(twice)").collect()[0][0]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--conf-json", default="{}")
    parser.add_argument("mode")
    parser.add_argument("args", nargs="*")
    options = parser.parse_args()
    conf: dict[str, str] = json.loads(options.conf_json)
    spark = session(conf, f"deploy-smoke-{options.mode}", hive=options.mode.startswith("hive"))
    try:
        if options.mode == "cluster":
            result = cluster(spark)
        elif options.mode == "hive-write":
            result = hive_write(spark, options.args[0])
        elif options.mode == "hive-read-drop":
            result = hive_read_drop(spark, options.args[0])
        elif options.mode == "s3":
            result = s3(spark, options.args[0])
        else:
            raise SystemExit(f"unknown mode {options.mode}")
        result["app_id"] = spark.sparkContext.applicationId
        result["cwd"] = os.getcwd()
    finally:
        spark.stop()
    print("RESULT " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
