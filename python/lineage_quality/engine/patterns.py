"""The column a pattern rule tests: the byte-level DFA (engine/regex_dfa.py, run by the JVM
helper `lineagequality.RegexDfa` from jvm-config/src) where it applies, else Spark's `rlike`.

Both give the same verdict; the DFA is used only when the pattern is within the translated
subset and the helper jar is part of the session's `spark.jars` (so executors have it too, not
just the driver). `LINEAGE_QUALITY_PATTERN_DFA=0` turns it off (to compare timings)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from lineage_quality.engine.expressions import Expr, helper
from lineage_quality.engine.jvm_helpers import ENGINE_JAR_NAME, jvm_helper
from lineage_quality.engine.regex_dfa import compile_dfa

__all__ = ["ENGINE_JAR_NAME", "dfa_table", "pattern_matches"]


@lru_cache(maxsize=512)
def dfa_table(pattern: str) -> bytes | None:
    return compile_dfa(pattern)


def _helper() -> Any:
    return jvm_helper("RegexDfa", "PATTERN_DFA")


def pattern_matches(value: Expr, pattern: str) -> Expr:
    """True where the string `value` contains a match of the Java regex `pattern` (as `rlike`),
    null where `value` is null."""
    table = dfa_table(pattern)
    if table is None or _helper() is None:
        return value.rlike(pattern)
    return helper("RegexDfa", "column", value, table, pattern)
