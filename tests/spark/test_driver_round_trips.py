"""Building a plan's expressions costs the driver a few round trips to the JVM, not one per
function and operator: the engine's `Expr`s are built in the JVM a DataFrame operation at a
time (engine/expressions.py, helper `ColumnProgram`). At ~0.13 ms a round trip the fused
aggregation of 100 rules cost ~1,100 of them, ~0.15 s per evaluation whatever the data's size.
The columns must be those PySpark builds: the program's aggregation is compared with the same
calls made from Python one at a time, as PySpark makes them."""

from __future__ import annotations

import math
import time
from decimal import Decimal
from typing import Any

import pytest
from py4j.protocol import MEMORY_COMMAND_NAME, MEMORY_DEL_SUBCOMMAND_NAME
from pyspark.sql import DataFrame
from pyspark.sql import functions as PF

from lineage_quality.engine import expressions as E
from lineage_quality.engine import functions as F
from lineage_quality.engine.plan import ROWS, Measure, Metric
from lineage_quality.engine.run import _aggregate

pytestmark = pytest.mark.spark


def _metrics() -> list[Metric]:
    out = [ROWS]
    for i in range(20):
        out.append(Metric(Measure.NULLS, f"c{i % 5}"))
        out.append(Metric(Measure.OUT_OF_RANGE, f"c{i % 5}", low=-i, high=1000.0 + i))
        out.append(Metric(Measure.STAT, f"c{i % 5}", arg=["avg", "min", "max", "sum"][i % 4]))
        out.append(Metric(Measure.INVALID, f"s{i % 3}", values=("a", "b", f"x{i}")))
        out.append(Metric(Measure.INVALID, f"s{i % 3}", pattern=f"^[a-z]{{1,{i + 1}}}$"))
        out.append(Metric(Measure.LENGTH_OUT, f"s{i % 3}", low=1, high=10 + i))
    out.append(Metric(Measure.OUT_OF_RANGE, "c0", low=None, high=float("nan")))
    out.append(Metric(Measure.OUT_OF_RANGE, "c1", low=-(2**40), high=2**62))
    out.append(Metric(Measure.INVALID, "s0", values=("it's", 'say "hi"', "a\\b", "é\n✓", "")))
    return out


@pytest.fixture(scope="module")
def frame(spark: Any) -> DataFrame:
    rows = [
        (float(i % 7) - 3.0, i, float(i) * 2.5, i % 3, -i, f"x{i}", "abc"[: i % 4], "é\n✓")
        for i in range(40)
    ]
    rows.append((None, None, None, None, None, None, None, None))
    schema = "c0 double, c1 long, c2 double, c3 int, c4 int, s0 string, s1 string, s2 string"
    return spark.createDataFrame(rows, schema)


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


def test_the_fused_aggregation_of_many_metrics_costs_few_round_trips(
    spark: Any, frame: DataFrame, monkeypatch: Any
) -> None:
    metrics = _metrics()
    now = time.time()
    _aggregate(frame, metrics, now)  # first use: helper classes looked up
    trips = _round_trips(spark, monkeypatch, lambda: _aggregate(frame, metrics, now))
    # the program: shared columns, gates, the aggregation, then the job and its one row
    assert trips < 30, trips
    monkeypatch.setenv("LINEAGE_QUALITY_COLUMN_PROGRAM", "0")
    _aggregate(frame, metrics, now)
    eager = _round_trips(spark, monkeypatch, lambda: _aggregate(frame, metrics, now))
    assert eager > 10 * len(metrics) // 2, eager  # one per call: what the program spares


def _canonical(df: DataFrame) -> Any:
    return df._jdf.queryExecution().analyzed().canonicalized()


def test_the_program_builds_the_columns_pyspark_builds(frame: DataFrame, monkeypatch: Any) -> None:
    metrics = _metrics()
    now = time.time()
    captured: list[DataFrame] = []
    real = E.agg

    def agg(df: DataFrame, columns: Any) -> DataFrame:
        out = real(df, columns)
        captured.append(out)
        return out

    monkeypatch.setattr("lineage_quality.engine.run.agg", agg)
    program = _aggregate(frame, metrics, now)
    monkeypatch.setenv("LINEAGE_QUALITY_COLUMN_PROGRAM", "0")
    eager = _aggregate(frame, metrics, now)
    assert program == eager
    built, made = captured
    assert "lq_gate_" in str(built._jdf.queryExecution().analyzed())  # helpers took part
    assert "regexdfa" in str(built._jdf.queryExecution().analyzed()).lower()
    assert _canonical(built) == _canonical(made)


LITERALS: list[Any] = [
    0, -1, 2**31 - 1, 2**31, -(2**31), -(2**31) - 1, 2**63 - 1, -(2**63), 0.0, -0.0, 1.5,
    1e300, 5e-324, float("nan"), float("inf"), float("-inf"), True, False, "", "it's",
    "a\\b\n\t\"'`", "é✓😀", Decimal("123.4500"), Decimal("-1E+3"),
]  # fmt: skip


@pytest.mark.parametrize("value", LITERALS, ids=repr)
def test_a_literal_has_the_type_and_value_pyspark_gives_it(spark: Any, value: Any) -> None:
    one = spark.range(1)
    ours = one.select(E.column(F.lit(value).alias("v")))
    theirs = one.select(PF.lit(value).alias("v"))
    assert ours.schema == theirs.schema
    got, expected = ours.first()[0], theirs.first()[0]  # type: ignore[index]
    if isinstance(expected, float) and math.isnan(expected):
        assert math.isnan(got)
    else:
        assert got == expected and type(got) is type(expected)
        if isinstance(expected, float):
            assert math.copysign(1, got) == math.copysign(1, expected)


def test_equal_subtrees_are_sent_once_and_alike_values_of_other_types_are_not() -> None:
    program = E._Program()
    a = F.col("`x`") > F.lit(1)
    b = F.col("`x`") > F.lit(1)  # equal, not the same object
    c = F.col("`x`") > F.lit(1.0)
    d = F.col("`x`") > F.lit(True)
    e = F.col("`x`") > F.lit(-0.0)
    f = F.col("`x`") > F.lit(0.0)
    out = [program.add(x) for x in (a, b, c, d, e, f)]
    assert out[0] == out[1]
    assert len(set(out)) == 5
    literals = [n[2][0] for n in program.nodes if n[1] == "lit"]
    assert literals == [["i", 1], ["d", "1.0"], ["b", True], ["d", "-0.0"], ["d", "0.0"]]


def test_values_spark_cannot_take_are_refused_in_python() -> None:
    program = E._Program()
    with pytest.raises(ValueError, match="64-bit"):
        program.add(F.lit(2**63))
    with pytest.raises(TypeError, match="not a literal"):
        program.add(F.lit(object()))  # type: ignore[arg-type]


def test_a_program_calls_only_spark_functions_columns_and_the_engines_helpers(spark: Any) -> None:
    builder = spark._jvm.lineagequality.ColumnProgram
    bad = [
        ('[["h", "java.lang.Runtime.getRuntime", []]]', "not an engine helper"),
        ('[["h", "FooterNulls.count", []]]', "not an engine helper"),
        ('[["m", "isNull", [["s", "x"]]]]', "receiver is not a Column"),
        ('[["f", "col", [["n", 0]]]]', "node 0 refers to node 0"),
        ('[["f", "no_such_function", [["i", 1]]]]', "no method functions.no_such_function"),
        ('[["f", "lit", [["x", 1]]]]', "unknown argument tag x"),
    ]
    for nodes, message in bad:
        with pytest.raises(Exception, match=message):
            builder.column('{"nodes": ' + nodes + ', "out": [0]}')
    ok = builder.column('{"nodes": [["f", "lit", [["i", 7]]]], "out": [0]}')
    assert spark.range(1).select(E.Column(ok)).first()[0] == 7


def test_a_program_too_long_for_the_jvm_parser_is_built_from_python(
    spark: Any, monkeypatch: Any
) -> None:
    # a value of 20 M characters: Jackson in Spark 3.5 refuses a string that long
    values = ["x" * 20_000_001, "short"]
    frame = spark.createDataFrame([("short",), ("other",), (None,)], "v string")
    condition = F.col("`v`").isin(values)
    program = E._Program()
    assert len(program.text([program.add(condition)])) > E.MAX_PROGRAM_CHARS
    trips = _round_trips(spark, monkeypatch, lambda: frame.where(E.column(condition)).count())
    assert trips > 5  # the eager way: a call per value and per operation
    assert frame.where(E.column(condition)).count() == 1
    monkeypatch.setattr(E, "MAX_PROGRAM_CHARS", 10**9)  # what the limit avoids
    with pytest.raises(Exception, match=r"(?i)string.*length|exceeds"):
        E.column(condition)
