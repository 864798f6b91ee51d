"""The job behind bench/append_cost.py: a table of `base` rows written (overwrite, about 2M
rows a file), then `added` rows appended to it, under the real listener. Order ids increase;
some emails are null or malformed; a status from a short list. Knows nothing of data quality."""

import sys
import time

from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def rows(spark: SparkSession, start: int, count: int) -> object:
    statuses = F.array(*[F.lit(s) for s in ("NEW", "PAID", "SHIPPED")])
    ids = spark.range(start, start + count, numPartitions=max(1, count // 2_000_000))
    return ids.select(
        F.col("id").alias("order_id"),
        (F.col("id") % 100_003).alias("customer_id"),
        F.when(F.col("id") % 1000 == 0, F.lit(None))
        .when(F.col("id") % 997 == 0, F.lit("not-an-email"))
        .otherwise(F.concat(F.lit("c"), F.col("id") % 100_003, F.lit("@example.com")))
        .alias("email"),
        ((F.col("id") % 10_007) * 0.37).alias("amount"),
        (F.col("id") % 7).cast("int").alias("qty"),
        F.element_at(statuses, (F.col("id") % 3 + 1).cast("int")).alias("status"),
    )


def main(path: str, base: int, added: int) -> None:
    spark = SparkSession.builder.appName("bench_append").getOrCreate()
    if base:
        rows(spark, 0, base).write.mode("overwrite").parquet(path)
        time.sleep(3)  # the listener sends the write's COMPLETE before the append's files land
        rows(spark, base, added).write.mode("append").parquet(path)
    else:  # the append to an empty table: a table of its rows alone
        rows(spark, 0, added).write.parquet(path)
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
