"""The few `pyspark.sql.functions` the engine builds its expressions with, each called through a
py4j handle looked up once per SparkContext.

`pyspark.sql.functions.lit(5)` costs three round trips to the JVM: it looks up the `functions`
class, then its `lit` method, then calls it. A plan of 100 rules builds ~400 such calls, and at
~0.2 ms a round trip that was ~0.25 s of driver time per evaluation, whatever the data's size.
Here the lookups are kept, so each call is one round trip; the JVM method called, with the same
arguments, is the one PySpark calls: the expressions are the same.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

from pyspark import SparkContext
from pyspark.sql import Column

_members: dict[str, Any] = {}  # name -> py4j JavaMember, for the context in _owner
# A weak reference: a stopped context is not kept alive, and once it is gone a later context
# at the same address still counts as new.
_owner: list[weakref.ref[SparkContext]] = []


def _call(name: str, *args: Any) -> Column:
    """`functions.<name>(*args)` in the JVM; each argument a Column or a Python scalar (PySpark's
    own functions also take column names and lists; the engine never passes them)."""
    sc = SparkContext._active_spark_context
    assert sc is not None, "no active SparkContext"
    if not _owner or _owner[0]() is not sc:  # a new context: its gateway knows none of them
        _members.clear()
        _owner[:] = [weakref.ref(sc)]
    member = _members.get(name)
    if member is None:
        jvm: Any = sc._jvm
        member = getattr(jvm.org.apache.spark.sql.functions, name)
        _members[name] = member
    return Column(member(*[a._jc if isinstance(a, Column) else a for a in args]))


def lit(value: Any) -> Column:
    """A literal of a Python scalar (bool, int, float, str), typed as `F.lit` types it."""
    return _call("lit", value)


def col(name: str) -> Column:
    return _call("col", name)


def expr(text: str) -> Column:
    return _call("expr", text)


def when(condition: Column, value: Column) -> Column:
    return _call("when", condition, value)


def to_timestamp(c: Column, pattern: str) -> Column:
    return _call("to_timestamp", c, pattern)


def _of_column(name: str) -> Callable[[Column], Column]:
    """`functions.<name>(c)`: the functions of one column."""

    def call(c: Column) -> Column:
        return _call(name, c)

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
