"""A table that grows by appends (issue 51): a first write and two appends (phase `grow`); a
compaction (read and overwritten whole) and one more append (phase `compact`). Keys increase,
with a repeat across each append; some emails are null or malformed. Knows nothing of data
quality."""

import sys
import time

from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def rows(spark: SparkSession, start: int, count: int) -> object:
    ids = spark.range(start, start + count)
    return ids.select(
        # the first id of each batch repeats the last of the one before: a duplicate across
        F.when(F.col("id") == start, F.greatest(F.col("id") - 1, F.lit(0))).otherwise(F.col("id"))
        .alias("order_id"),
        F.when(F.col("id") % 7 == 0, F.lit(None))
        .when(F.col("id") % 5 == 0, F.concat(F.lit("bad"), F.col("id")))
        .otherwise(F.concat(F.lit("u"), F.col("id"), F.lit("@x.io")))
        .alias("email"),
        ((F.col("id") % 97) * 1.25 - 30.0).alias("amount"),
    ).coalesce(1)


def main(path: str, phase: str) -> None:
    spark = SparkSession.builder.appName(f"e2e_append_series_{phase}").getOrCreate()
    delta = path + "_delta"
    # Appends come hours apart in life: here a pause lets the listener send each COMPLETE (its
    # eventTime is when it sends it) before the next write's files land.
    if phase == "grow":
        writes = ((0, 3000, "overwrite"), (3000, 500, "append"), (3500, 500, "append"))
        for start, count, mode in writes:
            rows(spark, start, count).write.mode(mode).parquet(path)
            rows(spark, start, count).write.format("delta").mode(mode).save(delta)
            time.sleep(2)
    else:  # compacted (an overwrite of the files; Delta's OPTIMIZE), then appended to
        spark.read.parquet(path).repartition(2).write.mode("overwrite").parquet(path + "_c")
        spark.read.parquet(path + "_c").write.mode("overwrite").parquet(path)
        spark.sql(f"OPTIMIZE delta.`{delta}`")
        time.sleep(2)
        rows(spark, 4000, 500).write.mode("append").parquet(path)
        rows(spark, 4000, 500).write.format("delta").mode("append").save(delta)
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
