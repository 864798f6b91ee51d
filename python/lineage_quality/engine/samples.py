"""Failing-row samples, taken in the evaluation that judged the rules (docs/rules.md,
"Failing-row samples").

Only for a FAILED rule that judges rows: its failing rows are those its own per-row predicate
selects (failing_rows.py), so a sample is always among the rows the verdict counted. The cost is
one bounded Spark job per failed rule, never one per passing rule: `where(predicate).limit(N)`,
which Spark runs partition by partition, stopping as soon as N rows are found (one file's split
when 1 % of rows fail; a full scan only when the failing rows are few and at the end). The rows
taken are the first N failing rows in the order the scan reads the files (the same for the same
data), shown sorted by their key columns. A duplicate-key rule groups its keys again (one
shuffle, the only way to find the repeated ones) and takes the N smallest repeated keys with
their row counts.

Values are masked here, as they are collected (lineage_quality.samples): nothing past this module
holds a raw value of a classified column. A capture that fails leaves the verdict as it is and
says so in the samples, naming the error's class only (a Spark message may quote a value).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Sequence
from typing import Any

import attrs
from pyspark import InheritableThread
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from lineage_quality.engine.failing_rows import FailingRows, failing_rows
from lineage_quality.engine.filters import filtered
from lineage_quality.engine.plan import resolve_column
from lineage_quality.engine.sql_sandbox import UnsafeQueryError
from lineage_quality.engine.uniqueness import col
from lineage_quality.results import RuleResult, Status
from lineage_quality.rules import Rule
from lineage_quality.samples import Masking, Samples, Sampling, sample_columns

log = logging.getLogger(__name__)

AT_ONCE = 4  # sample jobs run side by side
COUNT_COLUMN = "rows"  # a duplicated key's sample: how many rows carry it
_COUNT_ALIAS = "lq_sample_rows"


def take_samples(
    df: DataFrame, results: Sequence[RuleResult], sampling: Sampling
) -> list[RuleResult]:
    """`results` with `samples` set on each FAILED rule that judges rows; a rule with a
    `filter_condition` samples among the rows it selects (engine/filters.py)."""
    wanted: dict[str, list[Rule]] = {}  # by filter condition ("": none)
    for r in results:
        if r.status is Status.FAILED and sampling.rows_of(r.rule.id) > 0:
            wanted.setdefault(r.rule.filter_condition or "", []).append(r.rule)
    taken: dict[str, Samples] = {}
    for condition, rules in sorted(wanted.items()):
        if not condition:
            taken.update(_sampled(df, rules, sampling))
            continue
        try:
            with filtered(df, condition) as selected:
                taken.update(_sampled(selected, rules, sampling))
        except UnsafeQueryError:  # its rules are errors, not failures: never here
            continue
    return [attrs.evolve(r, samples=taken[r.rule.id]) if r.rule.id in taken else r for r in results]


def _sampled(df: DataFrame, rules: Sequence[Rule], sampling: Sampling) -> dict[str, Samples]:
    """Each rule's samples, `AT_ONCE` jobs at a time: a job's fixed cost (scheduling, planning)
    is most of a sample's, and jobs run side by side overlap it."""
    keys = _keys(df.columns, sampling.policy.keys)
    found = list(failing_rows(df, rules, time.time(), grouped=True))
    taken: dict[str, Samples] = {}
    for start in range(0, len(found), AT_ONCE):
        batch = found[start : start + AT_ONCE]
        if len(batch) == 1:
            taken[batch[0].rule.id] = _taken(df, batch[0], keys, sampling)
            continue
        out: dict[str, Samples] = {}
        threads = [
            # inherits the caller's Spark local properties: its job group, cancelled with it
            InheritableThread(target=_take_into, args=(out, df, f, keys, sampling), daemon=True)
            for f in batch
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        taken.update(out)
    return taken


def _take_into(
    out: dict[str, Samples], df: DataFrame, found: FailingRows, keys: tuple[str, ...], how: Sampling
) -> None:
    spark = df.sparkSession  # the caller's session, active on this JVM thread too (key_sets.py)
    with contextlib.suppress(Exception):  # the JVM gone: _taken says so, as any failed capture
        spark._jvm.org.apache.spark.sql.SparkSession.setActiveSession(  # type: ignore[union-attr]
            spark._jsparkSession
        )
    out[found.rule.id] = _taken(df, found, keys, how)


def _keys(columns: Sequence[str], declared: Sequence[str]) -> tuple[str, ...]:
    found = (resolve_column(k, columns) for k in declared)
    return tuple(k for k in found if k is not None)


def _taken(df: DataFrame, found: FailingRows, keys: tuple[str, ...], how: Sampling) -> Samples:
    n = how.rows_of(found.rule.id)
    try:
        if found.grouped:
            columns: tuple[str, ...] = (*found.columns, COUNT_COLUMN)
            rows = _duplicated(df, found.columns, n)
        else:
            columns = sample_columns(keys, found.columns)
            assert found.where is not None
            picked = df.where(found.where).select(*(col(c) for c in columns)).limit(n)
            rows = sorted((tuple(r) for r in picked.collect()), key=_order)
    except Exception as exc:  # the verdict stands; a Spark message may quote a value: not shown
        log.warning("samples of rule %s not taken: %s", found.rule.id, type(exc).__name__)
        error = f"capture failed ({type(exc).__name__})"
        return Samples(columns=(), error=error, facets=how.in_facets)
    if found.grouped:  # the count is no value of the data: never masked
        shown = tuple((*_masked(how, columns[:-1], r[:-1]), str(r[-1])) for r in rows)
        columns_masked = columns[:-1]
    else:
        shown = tuple(_masked(how, columns, r) for r in rows)
        columns_masked = columns
    masked = tuple(c for c in columns_masked if how.policy.masking(c) != Masking.SHOW)
    return Samples(columns=columns, rows=shown, masked=masked, facets=how.in_facets)


def _masked(how: Sampling, columns: Sequence[str], row: Sequence[Any]) -> tuple[str | None, ...]:
    return tuple(how.shown(c, v) for c, v in zip(columns, row, strict=True))


def _duplicated(df: DataFrame, keys: Sequence[str], n: int) -> list[tuple[Any, ...]]:
    """The `n` smallest keys carried by more than one row (all parts non-null, as the rule
    counts them), each with its row count."""
    present = df
    for k in keys:
        present = present.where(col(k).isNotNull())
    grouped = present.groupBy(*(col(k) for k in keys)).agg(F.count(F.lit(1)).alias(_COUNT_ALIAS))
    repeated = grouped.where(F.col(_COUNT_ALIAS) > 1)
    ordered = repeated.orderBy(*(col(k) for k in keys)).limit(n)
    return [tuple(r) for r in ordered.collect()]


def _order(row: tuple[Any, ...]) -> tuple[tuple[bool, str], ...]:
    # nulls last, then by the value's text: any mix of types sorts, the same way every time
    return tuple((v is None, "" if v is None else str(v)) for v in row)
