"""A job of a two-hop pipeline in in-driver mode with `upstream="block"` (issue 39).

    upstream_block.py STEP CONTRACT DATA_DIR EVENTS_FILE SPOOL HISTORY

STEP `raw-healthy`: write raw without null ids, `verify()`, then read it and write clean (the
guard lets a healthy dataset be read); `raw-nulls`: write raw with null ids (its rule is not
BLOCK: the job itself ends well); `clean`: read raw and write clean (refused while raw is
unhealthy, before anything is written).
"""

import sys

from pyspark.sql import SparkSession

import lineage_quality

step, contract, data, events, spool, history = sys.argv[1:7]
spark = lineage_quality.attach(
    SparkSession.builder.appName(f"upstream_block_{step.replace('-', '_')}"),
    contracts=contract,
    transport={"type": "file", "log_file_path": events, "append": True},
    spool=spool,
    history=history,
    namespace="in-driver-upstream",
    upstream="block",
).getOrCreate()

raw, clean = f"{data}/upstream-data/raw", f"{data}/upstream-data/clean"
if step.startswith("raw"):
    nulls = step == "raw-nulls"
    rows = [(None if nulls and i % 4 == 0 else i, f"c{i % 3}", float(i)) for i in range(40)]
    frame = spark.createDataFrame(rows, "customer_id INT, country STRING, amount DOUBLE")
    frame.write.mode("overwrite").parquet(raw)
    lineage_quality.verify()  # judged, and the guard told, before anything reads raw
if step in ("raw-healthy", "clean"):
    read = spark.read.parquet(raw)
    read.groupBy("customer_id").sum("amount").write.mode("overwrite").parquet(clean)
print(f"step {step} done", flush=True)
spark.stop()
