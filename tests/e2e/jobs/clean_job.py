"""A small pipeline for the end-to-end tests: write raw rows, then read them and write a clean
copy. Run with spark-submit and the OpenLineage listener; it knows nothing of data quality."""

import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

RAW = [
    (1, "a@example.com", "open"),
    (2, None, "open"),
    (3, "c@example.com", "CLOSED"),
    (3, "c@example.com", "closed"),
    (None, "e@example.com", "open"),
]


def main(raw_path: str, clean_path: str, valid: bool = False) -> None:
    spark = SparkSession.builder.appName("e2e_clean_job").getOrCreate()
    rows = [r for r in RAW if r[0] is not None] if valid else RAW  # "valid": no null id
    spark.createDataFrame(rows, "id INT, email STRING, status STRING").write.mode(
        "overwrite"
    ).parquet(raw_path)
    raw = spark.read.parquet(raw_path)
    clean = raw.where(F.col("id").isNotNull()).withColumn("status", F.lower("status"))
    clean.write.mode("overwrite").parquet(clean_path)
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], valid=sys.argv[3:] == ["valid"])
