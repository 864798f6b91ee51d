"""A job that writes the same table once per "day", in-driver mode, verifying after each write so
that each day's history verdict is judged against the days before it (issue 42).

    history_days.py CONTRACT DATA_DIR EVENTS_FILE SPOOL HISTORY DAYS_JSON

DAYS_JSON: a list of [rows, amount_factor], one per write.
"""

import json
import sys

from pyspark.sql import SparkSession

import lineage_quality

contract, data, events, spool, history, days = sys.argv[1:7]
spark = lineage_quality.attach(
    SparkSession.builder.appName("history_days"),
    contracts=contract,
    transport={"type": "file", "log_file_path": events, "append": True},
    spool=spool,
    history=history,
    namespace="in-driver-history",
).getOrCreate()

path = f"{data}/history-days/orders"
for day, (rows, factor) in enumerate(json.loads(days)):
    values = [(i, (10.0 + i % 7) * factor) for i in range(rows)]
    spark.createDataFrame(values, "id INT, amount DOUBLE").write.mode("overwrite").parquet(path)
    lineage_quality.verify()  # judged before the next day's write
    print(f"day {day}: {rows} rows", flush=True)
spark.stop()
