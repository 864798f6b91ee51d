"""In-driver mode on a cluster: `lineage_quality.attach(...)` on the builder, nothing else.

in_driver_cluster_job.py CONTRACTS PATH EVENTS SPOOL"""

import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

import lineage_quality

contracts, path, events, spool = sys.argv[1:5]
spark = lineage_quality.attach(
    SparkSession.builder.appName("deploy_in_driver_cluster"),
    contracts=contracts,
    transport={"type": "file", "log_file_path": events, "append": True},
    spool=spool,
    namespace="deploy-in-driver",
).getOrCreate()
rows = spark.range(6).withColumn("code", F.concat(F.lit("C-"), F.col("id").cast("string")))
rows.coalesce(1).write.mode("overwrite").parquet(path)
spark.stop()
