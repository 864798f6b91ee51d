"""Orders and customers in Parquet; a job reads both and writes two enrichments: an inner join,
which drops the orders of the unknown customer 3 (the bug), and a left join, which keeps them all
(the fix). Knows nothing of quality."""

import sys

from pyspark.sql import SparkSession


def main(base: str) -> None:
    spark = SparkSession.builder.appName("e2e_reconcile").getOrCreate()
    orders = [(i, i % 4, float(i)) for i in range(10)]  # customer 3: orders 3 and 7
    schema = "order_id INT, customer_id INT, amount DOUBLE"
    spark.createDataFrame(orders, schema).write.parquet(base + "/orders")
    customers = [(0, "a"), (1, "b"), (2, "c")]  # customer 3 is unknown
    spark.createDataFrame(customers, "customer_id INT, name STRING").write.parquet(
        base + "/customers"
    )
    read = spark.read.parquet(base + "/orders")
    known = spark.read.parquet(base + "/customers")
    read.join(known, "customer_id").write.parquet(base + "/enriched")
    read.join(known, "customer_id", "left").write.parquet(base + "/enriched_fixed")
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1])
