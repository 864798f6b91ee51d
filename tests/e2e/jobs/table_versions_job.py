"""A Delta table and an Iceberg table, each written with 3 rows and then overwritten with 20, in one
job (issue 8.1): each COMPLETE's verdict must describe its own version. Knows nothing of quality."""

import sys

from pyspark.sql import SparkSession


def main(base: str) -> None:
    spark = SparkSession.builder.appName("e2e_table_versions").getOrCreate()
    for rows in (3, 20):
        spark.range(rows).write.format("delta").mode("overwrite").save(base + "/delta_orders")
    for rows in (3, 20):
        spark.range(rows).writeTo("lq.db.iceberg_orders").using("iceberg").createOrReplace()
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1])
