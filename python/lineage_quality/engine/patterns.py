"""The column a pattern rule tests: the byte-level DFA (engine/regex_dfa.py, run by the JVM
helper `lineagequality.RegexDfa` from jvm-config/src) where it applies, else Spark's `rlike`.

Both give the same verdict; the DFA is used only when the pattern is within the translated
subset and the helper jar is part of the session's `spark.jars` (so executors have it too, not
just the driver). `LINEAGE_QUALITY_PATTERN_DFA=0` turns it off (to compare timings)."""

from __future__ import annotations

import os
from functools import lru_cache
from typing import Any

from pyspark import SparkContext
from pyspark.sql import Column

from lineage_quality.engine.regex_dfa import compile_dfa

ENGINE_JAR_NAME = "lineage-quality-engine.jar"
HELPER_CLASS = "lineagequality.RegexDfa"

_helpers: dict[int, Any] = {}  # id of the SparkContext -> the helper class, or None


@lru_cache(maxsize=512)
def dfa_table(pattern: str) -> bytes | None:
    return compile_dfa(pattern)


def _helper() -> Any:
    if os.environ.get("LINEAGE_QUALITY_PATTERN_DFA", "1") == "0":
        return None
    sc = SparkContext._active_spark_context
    if sc is None:
        return None
    key = id(sc)
    if key not in _helpers:
        _helpers.clear()  # one live context at a time
        helper = None
        if ENGINE_JAR_NAME in (sc.getConf().get("spark.jars") or ""):
            from py4j.java_gateway import JavaClass

            jvm: Any = sc._jvm
            found = getattr(jvm.lineagequality, "RegexDfa", None)
            helper = found if isinstance(found, JavaClass) else None
        _helpers[key] = helper
    return _helpers[key]


def pattern_matches(value: Column, pattern: str) -> Column:
    """True where the string `value` contains a match of the Java regex `pattern` (as `rlike`),
    null where `value` is null."""
    table = dfa_table(pattern)
    helper = _helper() if table is not None else None
    if helper is None:
        return value.rlike(pattern)
    return Column(helper.column(value._jc, table, pattern))
