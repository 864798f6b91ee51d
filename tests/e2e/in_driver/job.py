"""A job using the in-driver mode: `lineage_quality.attach(...)` on its builder, nothing else.

    job.py CONTRACTS DATA_DIR EVENTS_FILE QUARANTINE SPOOL pass|fail [OUTPUTS_JSON]

`fail` writes a row with a null amount (a BLOCK rule fails) and ends without spark.stop(), so
the gate runs at interpreter exit; `pass` stops the session itself. Both write two rows whose
status is not valid (a QUARANTINE rule fails), then read the table back (a job of their own).
OUTPUTS_JSON, when given: attach's `outputs` (DataHub, alerts), a JSON list.
"""

import json
import sys

from pyspark.sql import SparkSession

import lineage_quality

contracts, data, events, quarantine, spool, mode = sys.argv[1:7]
outputs = json.loads(sys.argv[7]) if len(sys.argv) > 7 else []
spark = lineage_quality.attach(
    SparkSession.builder.appName("in_driver_job"),
    contracts=contracts,
    transport={"type": "file", "log_file_path": events, "append": True},
    quarantine=quarantine,
    spool=spool,
    namespace="in-driver",
    outputs=outputs,
).getOrCreate()

rows = [(1, 10.0, "open"), (2, 20.0, "bogus"), (3, 30.0, "closed"), (4, 40.0, "OPEN")]
if mode == "fail":
    rows.append((5, None, "open"))
orders = f"{data}/in-driver-data/orders"
spark.createDataFrame(rows, "id INT, amount DOUBLE, status STRING").write.mode("overwrite").parquet(
    orders
)
print("rows read back:", spark.read.parquet(orders).count(), flush=True)
if mode == "pass":
    spark.stop()
