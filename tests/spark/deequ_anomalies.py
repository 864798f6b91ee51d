"""Asks Deequ's own anomaly detection strategies whether the LAST value of each series is an
anomaly (run in a process of its own, with the Deequ jar on the class path).

    python deequ_anomalies.py DEEQU_JAR  < cases.json  > answers.json

A case is {"strategy": "relative"|"absolute"|"batchNormal", "low": x, "high": y, "series": [...]}
(for batchNormal, low/high are the deviation factors); the answer is true when Deequ reports an
anomaly at the last index."""

import json
import sys

from pyspark.sql import SparkSession

spark = (
    SparkSession.builder.master("local[1]")
    .config("spark.driver.extraClassPath", sys.argv[1])
    .config("spark.ui.enabled", "false")
    .getOrCreate()
)
jvm = spark.sparkContext._jvm
detection = jvm.com.amazon.deequ.anomalydetection


def some(value: float):
    return jvm.scala.Some(float(value))


answers = []
for case in json.load(sys.stdin):
    kind = case["strategy"]
    if kind == "relative":
        strategy = detection.RelativeRateOfChangeStrategy(some(case["low"]), some(case["high"]), 1)
    elif kind == "absolute":
        strategy = detection.AbsoluteChangeStrategy(some(case["low"]), some(case["high"]), 1)
    else:
        strategy = detection.BatchNormalStrategy(some(case["low"]), some(case["high"]), False)
    values = jvm.java.util.ArrayList()
    for value in case["series"]:
        values.add(jvm.java.lang.Double(float(value)))
    series = jvm.scala.collection.JavaConverters.asScalaBufferConverter(values).asScala().toVector()
    last = len(case["series"]) - 1
    found = strategy.detect(series, jvm.scala.Tuple2(last, last + 1))
    answers.append(found.size() > 0)
json.dump(answers, sys.stdout)
spark.stop()
