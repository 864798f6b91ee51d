"""A Structured Streaming job in the in-driver mode (issue 51.3): a file source (three Parquet
files of 10, 20 and 30 rows, one per micro-batch) into a Parquet file sink, a Delta sink and a
foreachBatch writing Parquet, each with trigger availableNow; then the batches that read rows,
per query, written to BATCHES_JSON. Knows nothing of quality but `attach`.

    job.py CONTRACTS DATA_DIR EVENTS_FILE SPOOL BATCHES_JSON
"""

import json
import sys

from pyspark.sql import SparkSession

import lineage_quality

contracts, data, events, spool, batches_file = sys.argv[1:6]
spark = lineage_quality.attach(
    SparkSession.builder.appName("stream_job")
    .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
    .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
    .config("spark.sql.shuffle.partitions", "1"),
    contracts=contracts,
    transport={"type": "file", "log_file_path": events, "append": True},
    spool=spool,
    namespace="stream",
).getOrCreate()

base = f"{data}/stream"
for i, rows in enumerate((10, 20, 30)):
    spark.range(rows).selectExpr("id AS value").coalesce(1).write.parquet(f"{base}/incoming/{i}")


def source():  # one file per micro-batch
    reader = spark.readStream.schema("value LONG").option("maxFilesPerTrigger", 1)
    return reader.parquet(f"{base}/incoming/*")


def each(frame, batch_id):
    frame.write.mode("append").parquet(f"{base}/each_sink")


done = {}
for name, writer in (
    ("file_sink", lambda w: w.format("parquet").start(f"{base}/file_sink")),
    ("delta_sink", lambda w: w.format("delta").start(f"{base}/delta_sink")),
    ("each_sink", lambda w: w.foreachBatch(each).start()),
):
    stream = source().writeStream.queryName(name).option("checkpointLocation", f"{base}/ck_{name}")
    query = writer(stream.trigger(availableNow=True))
    query.awaitTermination()
    progress = query.recentProgress
    done[name] = {str(p["batchId"]): p["numInputRows"] for p in progress if p["numInputRows"]}
with open(batches_file, "w") as out:
    json.dump(done, out)
spark.stop()
