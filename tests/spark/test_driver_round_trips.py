"""Building a plan's expressions costs the driver one round trip to the JVM per step, not three:
`engine/functions.py` keeps the py4j handle of each Spark function, `engine/columns.py` one
reference per column. At ~0.2 ms a round trip this was ~0.3 s per evaluation of 100 rules,
whatever the data's size. The expressions themselves are the ones PySpark builds (the engine's
other tests check the verdicts)."""

from __future__ import annotations

import time
from typing import Any

from py4j.protocol import MEMORY_COMMAND_NAME, MEMORY_DEL_SUBCOMMAND_NAME
from pyspark.sql import functions as pyspark_functions

from lineage_quality.engine import functions as F
from lineage_quality.engine.columns import col, is_not_null
from lineage_quality.engine.plan import Metric, MetricKind
from lineage_quality.engine.run import metric_column


def _metrics() -> list[Metric]:
    out = [Metric(MetricKind.ROWS)]
    for i in range(20):
        out.append(Metric(MetricKind.NULLS, f"c{i % 5}"))
        out.append(Metric(MetricKind.OUT_OF_RANGE, f"c{i % 5}", low=-i, high=1000.0 + i))
        out.append(Metric(MetricKind.STAT, f"c{i % 5}", arg=["avg", "min", "max", "sum"][i % 4]))
        out.append(Metric(MetricKind.INVALID, f"s{i % 3}", values=("a", "b", f"x{i}")))
        out.append(Metric(MetricKind.LENGTH_OUT, f"s{i % 3}", low=1, high=10 + i))
    return out


def _round_trips(spark: Any, monkeypatch: Any, build: Any) -> int:
    """Commands sent to the JVM while `build` runs, counted at the gateway client every py4j
    object calls through (pinned-thread mode or not). Not counted: the deletes of Python proxies
    that garbage collection sends whenever it runs, for this test's objects or any other's."""
    client = spark.sparkContext._gateway._gateway_client
    calls = [0]
    send = client.send_command

    def counted(command: str, *args: Any, **kwargs: Any) -> Any:
        if not command.startswith(MEMORY_COMMAND_NAME + MEMORY_DEL_SUBCOMMAND_NAME):
            calls[0] += 1
        return send(command, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(client, "send_command", counted)
        build()
    return calls[0]


def test_a_function_costs_one_round_trip(spark: Any, monkeypatch: Any) -> None:
    F.lit(1)  # the handles are looked up on first use
    assert _round_trips(spark, monkeypatch, lambda: F.lit(7)) == 1
    # PySpark 3.5 looks up the class and the method each time: what the handles save
    assert _round_trips(spark, monkeypatch, lambda: pyspark_functions.lit(7)) == 3


def test_a_column_reference_is_built_once(spark: Any, monkeypatch: Any) -> None:
    first, not_null = col("a`b.c"), is_not_null("a`b.c")
    assert _round_trips(spark, monkeypatch, lambda: (col("a`b.c"), is_not_null("a`b.c"))) == 0
    assert col("a`b.c") is first and is_not_null("a`b.c") is not_null
    assert col("A`b.c") is not first  # Spark may compare names case-blind; the cache does not


def test_one_hundred_metrics_cost_few_round_trips(spark: Any, monkeypatch: Any) -> None:
    metrics = _metrics()
    now = time.time()
    [metric_column(m, now) for m in metrics]  # first use: handles and column references
    trips = _round_trips(spark, monkeypatch, lambda: [metric_column(m, now) for m in metrics])
    # with PySpark's own functions and a reference per use: 2,942 round trips (29 a metric);
    # now ~10 a metric (a value list alone is 5: py4j sends its list element by element)
    assert trips < 12 * len(metrics), trips
