"""The demo pipeline: read raw orders (CSV), clean them, write them as Parquet.

Nothing in here knows about data quality: the OpenLineage listener attached by
`spark-submit --properties-file jvm-config/spark-defaults.conf` reports the job, and the
lineage-quality producer evaluates the contracts of its input and output.
"""

import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def main(raw_path: str, clean_path: str) -> None:
    spark = SparkSession.builder.appName("orders_cleaning").getOrCreate()
    raw = spark.read.option("header", "true").option("inferSchema", "true").csv(raw_path)
    clean = (
        raw.where(F.col("order_id").isNotNull())
        .withColumn("status", F.lower(F.col("status")))
        .withColumn("customer_email", F.trim(F.col("customer_email")))
    )
    clean.write.mode("overwrite").parquet(clean_path)
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
