"""A Delta table and an Iceberg table, each written with 3 rows and then overwritten with 20, in one
job (issue 8.1): each COMPLETE's verdict must describe its own version. Then a Parquet dataset
written once, and it and the Delta table read by three queries each, unchanged (issue 51.1: one
evaluation per version). Knows nothing of quality."""

import sys

from pyspark.sql import SparkSession

READERS = 3


def main(base: str) -> None:
    spark = SparkSession.builder.appName("e2e_table_versions").getOrCreate()
    for rows in (3, 20):
        spark.range(rows).write.format("delta").mode("overwrite").save(base + "/delta_orders")
    for rows in (3, 20):
        spark.range(rows).writeTo("lq.db.iceberg_orders").using("iceberg").createOrReplace()
    spark.range(5).write.mode("overwrite").parquet(base + "/plain_orders")
    for i in range(READERS):  # the listener reports a query that writes (a bare read: no COMPLETE)
        plain = spark.read.parquet(base + "/plain_orders")
        plain.write.mode("overwrite").parquet(f"{base}/plain_copy_{i}")
        delta = spark.read.format("delta").load(base + "/delta_orders")
        delta.write.mode("overwrite").parquet(f"{base}/delta_copy_{i}")
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1])
