"""A 3-hop pipeline and a branch, in one application: raw -> clean -> agg, and raw -> countries
(which reads only raw's country). Raw is written twice: first with null customer ids, then
without. After each write the job waits for GO_DIR/step-N (the test makes it once that write's
COMPLETE was forwarded), so each step reads what the step before wrote and was judged.

    lineage_job.py BASE_DIR GO_DIR

Knows nothing of data quality."""

import sys
import time
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

base, go = Path(sys.argv[1]), Path(sys.argv[2])
raw, clean, agg, countries = (str(base / n) for n in ("raw", "clean", "agg", "countries"))
spark = SparkSession.builder.appName("e2e_lineage").getOrCreate()
step = 0


def written(frame, path):
    global step
    frame.coalesce(1).write.mode("overwrite").parquet(path)
    deadline = time.monotonic() + 300
    while not (go / f"step-{step}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    step += 1


def write_raw(nulls):
    rows = [(None if i < nulls else i % 4, float(i), "FR" if i % 2 else "DE") for i in range(10)]
    written(spark.createDataFrame(rows, "customer_id INT, amount DOUBLE, country STRING"), raw)


def write_clean():
    frame = spark.read.parquet(raw).where(F.col("amount") >= 0)
    euros = (F.col("amount") * 2).alias("amount_eur")
    written(frame.select("customer_id", euros, "country"), clean)


def write_agg():
    frame = spark.read.parquet(clean).groupBy("customer_id")
    written(frame.agg(F.sum("amount_eur").alias("total")), agg)


def write_countries():
    frame = spark.read.parquet(raw).groupBy("country").agg(F.count(F.lit(1)).alias("n"))
    written(frame, countries)


write_raw(nulls=3)  # step 0
write_clean()  # 1
write_agg()  # 2
write_countries()  # 3
write_raw(nulls=0)  # 4: fixed
write_clean()  # 5
write_agg()  # 6
spark.stop()
