"""Writes a small dataset to a path (local, or s3a:// with the settings spark-submit gives):

    files_job.py PATH overwrite|append N

Values: `code` is `C-<id>`, so a pattern rule has something to test. Knows nothing of quality."""

import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

path, mode, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
spark = SparkSession.builder.appName(f"deploy_files_{mode}").getOrCreate()
rows = spark.range(n).withColumn("code", F.concat(F.lit("C-"), F.col("id").cast("string")))
rows.coalesce(1).write.mode(mode).parquet(path)
spark.stop()
