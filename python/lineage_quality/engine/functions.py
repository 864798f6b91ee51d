"""The few `pyspark.sql.functions` the engine builds its expressions with, as `Expr`s
(engine/expressions.py): recorded in Python, made in the JVM a whole aggregation at a time, with
the same JVM function and arguments PySpark's function of that name passes."""

from __future__ import annotations

from collections.abc import Callable

from lineage_quality.engine.expressions import Expr, Scalar, function


def lit(value: Scalar) -> Expr:
    """A literal of a Python scalar (bool, int, float, str), typed as `F.lit` types it."""
    return function("lit", value)


def col(name: str) -> Expr:
    return function("col", name)


def expr(text: str) -> Expr:
    return function("expr", text)


def least(*columns: Expr) -> Expr:
    return Expr("f", "least", (list(columns),))  # Column* is a Seq: one list argument


def call_function(name: str, *columns: Expr) -> Expr:
    """`functions.call_function(name, *columns)`: a SQL function by its name, resolved by the
    analyzer as the SQL parser's call of it would be."""
    return Expr("f", "call_function", (name, list(columns)))


def when(condition: Expr, value: Expr) -> Expr:
    return function("when", condition, value)


def to_timestamp(c: Expr, pattern: str) -> Expr:
    return function("to_timestamp", c, pattern)


def _of_column(name: str) -> Callable[[Expr], Expr]:
    """`functions.<name>(c)`: the functions of one column."""

    def call(c: Expr) -> Expr:
        return function(name, c)

    call.__name__ = name
    return call


# Spark's names; in this module they hide the builtins, which it does not use.
count = _of_column("count")
sum = _of_column("sum")
avg = _of_column("avg")
stddev_samp = _of_column("stddev_samp")
median = _of_column("median")
min = _of_column("min")
max = _of_column("max")
size = _of_column("size")
length = _of_column("length")
isnan = _of_column("isnan")
abs = _of_column("abs")
