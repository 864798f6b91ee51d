"""One hop of the pipeline raw -> clean -> agg (and raw -> countries, reading only raw's
country) as its own application, for producers that each see a part of it.

    lineage_hop_job.py STEP BASE_DIR

STEP `raw-nulls` / `raw-fixed`: write raw with 3 null customer ids / none; `downstream`: clean
from raw, agg from clean, countries from raw. Knows nothing of data quality."""

import sys
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

step, base = sys.argv[1], Path(sys.argv[2])
raw, clean, agg, countries = (str(base / n) for n in ("raw", "clean", "agg", "countries"))
spark = SparkSession.builder.appName(f"lineage_hop_{step.replace('-', '_')}").getOrCreate()


def written(frame, path):
    frame.coalesce(1).write.mode("overwrite").parquet(path)


if step.startswith("raw"):
    nulls = 3 if step == "raw-nulls" else 0
    rows = [(None if i < nulls else i % 4, float(i), "FR" if i % 2 else "DE") for i in range(10)]
    written(spark.createDataFrame(rows, "customer_id INT, amount DOUBLE, country STRING"), raw)
else:
    frame = spark.read.parquet(raw).where(F.col("amount") >= 0)
    written(frame.select("customer_id", (F.col("amount") * 2).alias("amount_eur"), "country"),
            clean)  # fmt: skip
    written(spark.read.parquet(clean).groupBy("customer_id").agg(F.sum("amount_eur")
            .alias("total")), agg)  # fmt: skip
    written(spark.read.parquet(raw).groupBy("country").agg(F.count(F.lit(1)).alias("n")),
            countries)  # fmt: skip
spark.stop()
