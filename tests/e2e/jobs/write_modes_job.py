"""Every write mode a user writes, to plain files and to catalog tables (issue 25): the default
ErrorIfExists, overwrite, append, ignore, saveAsTable, insertInto, INSERT, INSERT OVERWRITE, CTAS,
TRUNCATE, DROP and re-create. Later writes change what earlier runs wrote, so a verdict that read
anything but what each run left shows. Knows nothing of data quality."""

import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def main(base: str) -> None:
    spark = (
        SparkSession.builder.appName("e2e_write_modes")
        .config("spark.sql.warehouse.dir", base + "/warehouse")
        .getOrCreate()
    )

    def rows(n: int, v: int | None) -> object:
        return spark.range(n).withColumn("v", F.lit(v).cast("int")).coalesce(1)

    # default mode (ErrorIfExists: no lifecycle state in the event), then overwritten
    rows(3, None).write.parquet(base + "/default_then_overwrite")
    rows(20, 1).write.mode("overwrite").parquet(base + "/default_then_overwrite")
    # appends, then one more append: each append's verdict is the data as of its own completion
    rows(4, 1).write.mode("overwrite").parquet(base + "/appends")
    rows(5, 1).write.mode("append").parquet(base + "/appends")
    rows(6, 1).write.mode("append").parquet(base + "/appends")
    # an append, then an overwrite that removes what it appended
    rows(3, 1).write.mode("overwrite").parquet(base + "/append_then_overwrite")
    rows(2, 1).write.mode("append").parquet(base + "/append_then_overwrite")
    rows(10, 1).write.mode("overwrite").parquet(base + "/append_then_overwrite")
    # ignore: on an existing path nothing is written (the event has no statistics)
    rows(7, 1).write.mode("overwrite").parquet(base + "/ignored")
    rows(100, 1).write.mode("ignore").parquet(base + "/ignored")
    # catalog tables: saveAsTable, insertInto, INSERT, then a table overwritten by INSERT OVERWRITE
    rows(5, 1).write.saveAsTable("default.modes_t")
    rows(2, 1).write.insertInto("default.modes_t")
    spark.sql("INSERT INTO default.modes_t VALUES (100, 1)")
    spark.sql("CREATE TABLE default.modes_u USING parquet AS SELECT id, 1 AS v FROM range(6)")
    spark.sql("INSERT OVERWRITE TABLE default.modes_u SELECT id, 1 AS v FROM range(2)")
    # two overwrites with equal statistics (rows, bytes, files) but other values: two writes
    rows(5, 1).write.mode("overwrite").parquet(base + "/same_stats")
    rows(5, 2).write.mode("overwrite").parquet(base + "/same_stats")
    # TRUNCATE; DROP and re-create under the same name
    rows(4, 1).write.saveAsTable("default.modes_gone")
    spark.sql("TRUNCATE TABLE default.modes_gone")
    # The OpenLineage listener describes the TRUNCATE from the catalog when it handles the
    # statement's end on Spark's listener bus: let it, before the table is dropped (on a slow host
    # the DROP came first and the TRUNCATE's event had no output).
    spark.sparkContext._jsc.sc().listenerBus().waitUntilEmpty(60000)
    spark.sql("DROP TABLE default.modes_gone")
    rows(9, 1).write.saveAsTable("default.modes_gone")
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1])
