"""Write the tables the seeds' example contracts bind by name (issue 41): each from a spec of
columns and rows given as text (cast to the column's type), or a row count. Knows nothing of
data quality."""

import json
import sys

from pyspark.sql import SparkSession


def main(spec_path: str, warehouse: str) -> None:
    spark = (
        SparkSession.builder.appName("e2e_seed_examples")
        .config("spark.sql.warehouse.dir", warehouse)
        .getOrCreate()
    )
    with open(spec_path) as f:
        spec = json.load(f)
    for database in sorted({t["table"].split(".")[0] for t in spec if "." in t["table"]}):
        spark.sql(f"CREATE DATABASE IF NOT EXISTS {database}")
    for item in spec:
        columns = [c.strip().split(" ", 1) for c in item["ddl"].split(", ")]
        if "range" in item:
            df = spark.range(item["range"]).toDF(columns[0][0])
        else:
            text = ", ".join(f"{name} STRING" for name, _ in columns)
            df = spark.createDataFrame(item["rows"], text).selectExpr(
                *[f"CAST({name} AS {kind}) AS {name}" for name, kind in columns]
            )
        df.coalesce(1).write.mode("overwrite").saveAsTable(item["table"])
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
