"""The py4j handles the engine keeps for building its expressions from Python (engine/
expressions.py, without the helper jar) belong to one SparkContext: a new context, as after
`spark.stop()` and a new session, starts them afresh, so nothing of an earlier gateway is used.
Without Spark: the contexts here are stand-ins that record what is looked up in them."""

from __future__ import annotations

from typing import Any

from pyspark import SparkContext

from lineage_quality.engine import columns
from lineage_quality.engine import functions as F
from lineage_quality.engine.expressions import Expr, _eager


def _built(*exprs: Expr) -> list[Any]:
    return [c._jc for c in _eager(list(exprs))]


class _Functions:
    def __init__(self, context: _Context) -> None:
        self.context = context

    def __getattr__(self, name: str) -> Any:
        self.context.lookups.append(name)
        tag = self.context.tag  # a py4j handle holds the gateway client, not the context
        return lambda *args: (tag, name, args)


class _Context:
    """What engine/expressions.py reads of a SparkContext: `_jvm.org.apache.spark.sql.functions`."""

    def __init__(self, tag: str) -> None:
        self.tag = tag
        self.lookups: list[str] = []
        sql = type("sql", (), {"functions": _Functions(self)})()
        spark = type("spark", (), {"sql": sql})()
        apache = type("apache", (), {"spark": spark})()
        self._jvm = type("jvm", (), {"org": type("org", (), {"apache": apache})()})()


def test_handles_start_afresh_in_a_new_context(monkeypatch: Any) -> None:
    first = _Context("first")
    monkeypatch.setattr(SparkContext, "_active_spark_context", first)
    assert _built(F.lit(1)) == [("first", "lit", (1,))]
    assert _built(F.lit(2), columns.col("x")) == [
        ("first", "lit", (2,)),
        ("first", "col", ("`x`",)),
    ]
    assert first.lookups == ["lit", "col"]  # each looked up once

    second = _Context("second")
    monkeypatch.setattr(SparkContext, "_active_spark_context", second)
    assert _built(F.lit(3), columns.col("x")) == [
        ("second", "lit", (3,)),
        ("second", "col", ("`x`",)),
    ]
    assert second.lookups == ["lit", "col"]


def test_a_call_shared_by_several_columns_is_made_once(monkeypatch: Any) -> None:
    context = _Context("one")
    monkeypatch.setattr(SparkContext, "_active_spark_context", context)
    shared = F.lit(5)
    a, b = _built(F.count(shared), F.sum(shared))
    assert a == ("one", "count", (("one", "lit", (5,)),))
    assert b == ("one", "sum", (("one", "lit", (5,)),))
    assert context.lookups == ["lit", "count", "sum"]


def test_a_context_gone_is_not_kept_alive() -> None:
    import gc
    import weakref

    before = SparkContext._active_spark_context
    context = _Context("short-lived")
    try:
        # set by hand: monkeypatch would keep the value it replaced, to restore it
        SparkContext._active_spark_context = context  # type: ignore[assignment]
        _built(F.lit(1), columns.col("y"))
        gone = weakref.ref(context)
        SparkContext._active_spark_context = None
        del context
        gc.collect()
        assert gone() is None
    finally:
        SparkContext._active_spark_context = before
