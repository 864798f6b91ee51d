"""Column references that Spark reads literally, whatever characters a name holds."""

from __future__ import annotations

import weakref

from pyspark import SparkContext
from pyspark.sql import Column

from lineage_quality.engine import functions as F

# Each reference costs a round trip to the JVM, and a plan of 100 rules asks for ~200 of them,
# most to the same few columns: one unresolved reference per name and context serves them all (it
# is immutable, and resolved against whichever DataFrame uses it).
_refs: dict[tuple[str, bool], Column] = {}  # for the context in _owner
_owner: list[weakref.ref[SparkContext]] = []  # weak: see engine/functions.py
_MAX_REFS = 4096


def quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _ref(name: str, not_null: bool) -> Column:
    sc = SparkContext._active_spark_context
    if not _owner or _owner[0]() is not sc or len(_refs) >= _MAX_REFS:
        _refs.clear()  # one live context at a time, and a bounded cache
        _owner[:] = [weakref.ref(sc)] if sc is not None else []
    key = (name, not_null)
    found = _refs.get(key)
    if found is None:
        found = col(name).isNotNull() if not_null else F.col(quote(name))
        _refs[key] = found
    return found


def col(name: str) -> Column:
    """The column `name` (a dot or a backtick in it is part of the name)."""
    return _ref(name, False)


def is_not_null(name: str) -> Column:
    """`col(name).isNotNull()`."""
    return _ref(name, True)
