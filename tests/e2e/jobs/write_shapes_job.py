"""Write shapes whose verdicts must describe exactly the run's data (issue 8): a path overwritten
twice (3 rows, then 20), a saveAsTable (reported as two runs with a COMPLETE each), and a write
that fails (the listener sends FAIL, then COMPLETE). Knows nothing of data quality."""

import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import IntegerType


def boom(value: int) -> int:
    raise ValueError(f"this write fails on purpose ({value})")


def main(base: str) -> None:
    spark = (
        SparkSession.builder.appName("e2e_write_shapes")
        .config("spark.sql.warehouse.dir", base + "/warehouse")
        .getOrCreate()
    )
    spark.range(3).withColumn("v", F.lit(None).cast("int")).write.mode("overwrite").parquet(
        base + "/twice"
    )
    spark.range(20).withColumn("v", F.col("id").cast("int")).write.mode("overwrite").parquet(
        base + "/twice"
    )
    spark.range(5).write.mode("overwrite").saveAsTable("default.shapes_table")
    try:
        spark.range(4).withColumn("v", F.udf(boom, IntegerType())("id")).write.mode(
            "overwrite"
        ).parquet(base + "/failed")
    except Exception:
        print("the failed write failed, as planned")
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1])
