"""Value-list and pattern rules of dictionary-encoded Parquet string columns, answered on the
dictionaries instead of in the scan.

A status or country column holds a handful of distinct values whatever its row count, and
Parquet writes such a column as a dictionary per chunk plus an id per row. Testing every row's
string (`isin`, a pattern) means building a string per row; testing each dictionary value once
and adding up the rows of the failing ones does not. For a column whose only rules are value
tests and null counts (ODCS `validValues`, `pattern`, `missingValues`, `required`), the JVM
helper `DictionaryValues`:
1. reads each chunk's dictionary page and returns the union of the values as a small local
   DataFrame, on which each rule's own per-row predicate (its analyzer's `condition`, as the
   scan would count it) is evaluated on the driver: the answer is Spark's for every value;
2. adds up, per rule, the rows holding a failing value: a chunk whose dictionary holds none
   costs its dictionary page only; any other has its ids decoded, with no string built.
The fused scan then leaves the column out. As with the footers' null counts (footer_nulls.py),
the scan still counts the rows, and when the files' row total differs from it (files replaced
between the reads) nothing of this is used and the scan tests the values after all.

Only where the answer is certainly the scan's: exactly a read of plain Parquet files (no Delta
or Iceberg, whose deletes the files do not show), each chunk of the column wholly
dictionary-encoded, plain (non-collated) strings that are valid UTF-8, at most `MAX_VALUES`
distinct values; and only where it pays: values that repeat (a chunk's dictionary of more than
1,024 values holds at most one per 4 of its rows, judged on the page header before a value is
decoded: DictionaryValues.ROWS_PER_VALUE), and `MIN_FILE_BYTES` of files or more, divided by the
columns answered.
`LINEAGE_QUALITY_DICTIONARY_VALUES=0` turns it off.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import attrs
from pyspark.sql import DataFrame

from lineage_quality.engine.analyzers import failing_condition
from lineage_quality.engine.expressions import Expr, column
from lineage_quality.engine.footer_nulls import MAX_FILES, MAX_FOOTER_BYTES
from lineage_quality.engine.jvm_helpers import jvm_helper
from lineage_quality.engine.plan import Measure, Metric

log = logging.getLogger(__name__)

MAX_VALUES = 65_536  # distinct values per column: past it the scan tests the rows
MAX_BYTES = 16 * 1024 * 1024  # of those values, held on the driver
# The two passes cost ~25 ms on the driver whatever the size (the footers, a query on the local
# relation, a second read of the dictionaries); each column they answer spares the scan about
# that much per 32 MiB of files (1M rows of the bench's table). So they run from this many bytes
# of files divided by the columns they answer: one column from 32 MiB, two from 16 MiB (judged
# on the columns asked before a file is read, on those found servable after the first pass).
MIN_FILE_BYTES = 32 * 1024 * 1024
_TESTS = (Measure.INVALID, Measure.MISSING)
_SERVED = {Measure.NULLS, *_TESTS}


@attrs.frozen
class DictionaryCounts:
    rows: int
    values: dict[int, int]  # metric index -> its value, for each metric of a served column


def dictionary_columns(metrics: Sequence[Metric], types: dict[str, str]) -> list[str]:
    """The string columns whose fused metrics are all value tests or null counts, with at least
    one value test (a MISSING without values is a null count): what the dictionaries can
    answer, so the scan needs nothing of them."""
    kinds: dict[str, set[Measure | str]] = {}
    for m in metrics:
        if m.column is not None:
            kinds.setdefault(m.column, set()).add(m.kind)
    tested = {m.column for m in metrics if m.kind in _TESTS and (m.values or m.pattern)}
    return [
        c
        for c, found in kinds.items()
        if types.get(c) == "string" and found <= _SERVED and c in tested
    ]


def dictionary_counts(
    df: DataFrame, metrics: Sequence[Metric], columns: Sequence[str], now: float
) -> DictionaryCounts | None:
    """The values of the metrics of those `columns` the dictionaries answer, or None when they
    answer none (or the helper jar is not in the session)."""
    helper = jvm_helper("DictionaryValues", "DICTIONARY_VALUES")
    if helper is None or not columns:
        return None
    try:
        return _counts(helper, df, metrics, columns, now)
    except Exception as exc:  # an unreadable file or page: the scan reads it and says what is wrong
        log.info("values not tested on Parquet dictionaries: %s", str(exc).strip()[:300])
        return None


def _condition(metric: Metric, now: float) -> Expr:
    condition = failing_condition(metric, now)  # the predicate the scan counts
    assert condition is not None  # value tests count rows
    return condition


def _answers(helper: Any, selected: DataFrame, width: int) -> list[list[bool]]:
    """Per distinct value, whether each of the `width` predicates of `selected` is true of it (a
    null answer is not true). Read off the plan Spark's optimizer made of it
    (`DictionaryValues.answers`: the same rows a `collect` returns, without running the query),
    else collected."""
    encoded = helper.answers(selected._jdf)
    if encoded is None:
        return [[value is True for value in row] for row in selected.collect()]
    text = str(encoded)
    return [[c == "1" for c in text[at : at + width]] for at in range(0, len(text), width)]


def _counts(
    helper: Any, df: DataFrame, metrics: Sequence[Metric], columns: Sequence[str], now: float
) -> DictionaryCounts | None:
    found = helper.distinct(
        df._jdf, list(columns), MAX_FILES, MAX_FOOTER_BYTES, MAX_VALUES, MAX_BYTES, MIN_FILE_BYTES
    )
    if found is None:
        return None
    layout = [item.split(":") for item in str(found.layout()).split(",") if item]
    if not layout:
        return None
    served = [columns[int(index)] for index, _ in layout]
    sizes = [int(size) for _, size in layout]
    starts = [sum(sizes[:j]) for j in range(len(sizes))]
    tests = [i for i, m in enumerate(metrics) if m.column in served and m.kind in _TESTS]
    frame = DataFrame(found.frame(), df.sparkSession)
    # each test's own predicate, as the scan counts it, on each distinct value (a local
    # relation: evaluated on the driver, no job)
    predicates = [column(_condition(metrics[i], now)).alias(f"t{k}") for k, i in enumerate(tests)]
    fails = _answers(helper, frame.select(*predicates), len(tests)) if tests else []
    owners: list[int] = []
    items: list[str] = []
    for k, i in enumerate(tests):
        j = served.index(metrics[i].column or "")
        owners.append(j)
        failing = [v for v in range(sizes[j]) if fails[starts[j] + v][k]]
        items.append(f"{j}:{','.join(map(str, failing))}")
    # plain strings both ways: a py4j list costs a round trip per element
    counted = helper.count(df._jdf, found, "/".join(items))
    if counted is None:
        return None
    values = [int(v) for v in str(counted).split(",")]
    rows, per_test, nulls = values[0], values[1 : 1 + len(tests)], values[1 + len(tests) :]
    out: dict[int, int] = {}
    for k, i in enumerate(tests):
        own = nulls[owners[k]] if metrics[i].kind is Measure.MISSING else 0
        out[i] = per_test[k] + own  # a missing value is also a null one
    for i, m in enumerate(metrics):
        if m.kind is Measure.NULLS and m.column in served:
            out[i] = nulls[served.index(m.column)]
    return DictionaryCounts(rows, out)
