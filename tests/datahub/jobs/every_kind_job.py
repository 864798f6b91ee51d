"""Writes the rows of test_datahub_check.ROWS (updated now) as Parquet: the job of
test_datahub_serve.py, run by spark-submit under the OpenLineage listener. Knows nothing of
data quality."""

import sys
from datetime import datetime

from pyspark.sql import SparkSession

ROWS = [
    (1, 10, "pending", 20.0, "2025-01-01", ["a"]),
    (2, 11, "shipped", 30.0, "2025-01-02", ["a", "b"]),
    (3, 12, "lost", None, "2025/01/03", ["a", "b", "c", "d"]),
]


def main(path: str) -> None:
    spark = SparkSession.builder.appName("every_kind_job").getOrCreate()
    now = datetime.now()
    rows = [(*row[:5], now, row[5]) for row in ROWS]
    spark.createDataFrame(
        rows,
        "order_id BIGINT, customer_id BIGINT, status STRING, amount DOUBLE, day STRING, "
        "updated_at TIMESTAMP, tags ARRAY<STRING>",
    ).write.mode("overwrite").parquet(path)
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1])
