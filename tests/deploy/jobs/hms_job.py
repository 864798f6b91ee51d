"""One step of a pipeline on a shared Hive metastore (its settings come from spark-submit):

    hms_job.py create N | insert N | drop_create N

`create`: saveAsTable in the default mode; `insert`: INSERT INTO from this (second) application;
`drop_create`: DROP TABLE, then saveAsTable again under the same name. Knows nothing of quality."""

import sys

from pyspark.sql import SparkSession

TABLE = "default.hms_orders"
action, n = sys.argv[1], int(sys.argv[2])
spark = SparkSession.builder.appName(f"deploy_hms_{action}").getOrCreate()
if action == "insert":
    spark.sql(f"INSERT INTO {TABLE} SELECT id, 1 AS v FROM range({n})")
else:
    if action == "drop_create":
        spark.sql(f"DROP TABLE {TABLE}")
    spark.sql(f"SELECT id, 1 AS v FROM range({n})").write.saveAsTable(TABLE)
spark.stop()
