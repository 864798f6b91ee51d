"""A daily pipeline, run several times in one application: each run overwrites the dataset
with that day's rows (one run and one COMPLETE per write). Days are hours apart in real life;
here the next day starts when the file GO_DIR/day-N appears (the test makes it once day N's
verdicts were forwarded), so no day overwrites the previous one before it was judged.

    history_job.py PATH ROWS,ROWS,... GO_DIR

Knows nothing of data quality."""

import sys
import time
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

path, sizes, go = sys.argv[1], [int(n) for n in sys.argv[2].split(",")], Path(sys.argv[3])
spark = SparkSession.builder.appName("e2e_history").getOrCreate()
for day, rows in enumerate(sizes):
    every50 = F.col("id") % 50 == 0  # two rows a day fail: an address and a code
    frame = (
        spark.range(rows)
        .withColumn("day", F.lit(day))
        .withColumn("email", F.concat(F.lit("user"), "id", F.when(every50, F.lit("@bad.example"))
                                      .otherwise(F.lit("@mail.com"))))
        .withColumn("code", F.when(every50, F.concat(F.lit("BAD-"), "id")).otherwise(F.lit("OK")))
        .coalesce(1)
    )  # fmt: skip
    frame.write.mode("overwrite").parquet(path)
    deadline = time.monotonic() + 300
    while not (go / f"day-{day}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
spark.stop()
