"""The engine's cached py4j handles (engine/functions.py) and column references
(engine/columns.py) belong to one SparkContext: a new context, as after `spark.stop()` and a new
session, starts them afresh, so nothing of an earlier gateway is used. Without Spark: the
contexts here are stand-ins that record what is looked up in them."""

from __future__ import annotations

from typing import Any

from pyspark import SparkContext

from lineage_quality.engine import columns
from lineage_quality.engine import functions as F


class _Functions:
    def __init__(self, context: _Context) -> None:
        self.context = context

    def __getattr__(self, name: str) -> Any:
        self.context.lookups.append(name)
        tag = self.context.tag  # a py4j handle holds the gateway client, not the context
        return lambda *args: (tag, name, args)


class _Context:
    """What engine/functions.py reads of a SparkContext: `_jvm.org.apache.spark.sql.functions`."""

    def __init__(self, tag: str) -> None:
        self.tag = tag
        self.lookups: list[str] = []
        sql = type("sql", (), {"functions": _Functions(self)})()
        spark = type("spark", (), {"sql": sql})()
        apache = type("apache", (), {"spark": spark})()
        self._jvm = type("jvm", (), {"org": type("org", (), {"apache": apache})()})()


def test_handles_and_references_start_afresh_in_a_new_context(monkeypatch: Any) -> None:
    first = _Context("first")
    monkeypatch.setattr(SparkContext, "_active_spark_context", first)
    assert F.lit(1)._jc == ("first", "lit", (1,))
    assert F.lit(2)._jc == ("first", "lit", (2,))
    reference = columns.col("x")
    assert reference._jc == ("first", "col", ("`x`",))
    assert first.lookups == ["lit", "col"]  # each looked up once
    assert columns.col("x") is reference

    second = _Context("second")
    monkeypatch.setattr(SparkContext, "_active_spark_context", second)
    assert F.lit(3)._jc == ("second", "lit", (3,))
    assert columns.col("x")._jc == ("second", "col", ("`x`",))
    assert second.lookups == ["lit", "col"]


def test_a_context_gone_is_not_kept_alive() -> None:
    import gc
    import weakref

    before = SparkContext._active_spark_context
    context = _Context("short-lived")
    try:
        # set by hand: monkeypatch would keep the value it replaced, to restore it
        SparkContext._active_spark_context = context  # type: ignore[assignment]
        F.lit(1)
        columns.col("y")
        gone = weakref.ref(context)
        SparkContext._active_spark_context = None
        del context
        gc.collect()
        assert gone() is None
    finally:
        SparkContext._active_spark_context = before
