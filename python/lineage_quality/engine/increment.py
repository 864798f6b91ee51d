"""Judging an append by its own rows: the table's verdicts from the kept states of the version
before it merged with the states of the rows the run added (engine/states.py).

The run's rows are measured by the same passes as a whole dataset (footers, dictionaries, the
fused scan, the key-set shuffle), so the price of a verdict follows the append, not the table.
What cannot be merged from counts is a key's uniqueness across the table: the run's distinct
keys are looked up in the older rows, reading only their key columns, and only where the first
key column's value falls within the range of the run's keys. Parquet and ORC readers skip every
row group whose footer's min/max lies outside that range, so an increasing key (an id, a time)
reads the older files' footers only; a random key (a UUID) reads the older key column whole:
still one column of the table, not all of them (docs/evaluation.md, "Scopes").
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from typing import Any

import attrs
from pyspark.sql import DataFrame
from pyspark.sql import functions as SF

from lineage_quality.engine.columns import quote
from lineage_quality.engine.plan import Metric, Plan, build_plan, stat_metric
from lineage_quality.engine.run import VARCHAR_KEY, Measured, judge, measure, run_plan
from lineage_quality.engine.states import (
    States,
    key_set_key,
    mergeable,
    merged_key_counts,
    merged_value,
    metric_key,
    states_of,
    value_of,
    with_state_metrics,
)
from lineage_quality.engine.uniqueness import KeyCounts
from lineage_quality.results import RuleResult
from lineage_quality.rules import Rule
from lineage_quality.values.metric import Measure

log = logging.getLogger(__name__)

# Atomic types whose values Spark orders as the files' footers do: a range on the first key
# column then prunes the older files' row groups.
_RANGED = ("tinyint", "smallint", "int", "bigint", "date", "timestamp", "timestamp_ntz", "string")


def _plan(df: DataFrame, rules: Sequence[Rule], profile: bool) -> Plan:
    fields = df.schema.fields
    schema = [(f.name, f.dataType.simpleString()) for f in fields]
    declared = {f.name: f.metadata[VARCHAR_KEY] for f in fields if VARCHAR_KEY in f.metadata}
    return build_plan(rules, schema, profile, declared)


_INTEGRAL = ("tinyint", "smallint", "int", "bigint")


def _stateful(plan: Plan, df: DataFrame) -> Plan:
    """`plan` with what its states need: the counts that merge averages and deviations, and the
    range (min, max) of each key set's first column where it is an integer, so that an append
    whose keys all lie outside the table's range needs no look at the older rows."""
    types = {f.name: f.dataType.simpleString() for f in df.schema.fields}
    extra = [
        stat_metric(keys[0], types[keys[0]], arg)
        for keys in plan.key_sets
        if types.get(keys[0]) in _INTEGRAL
        for arg in ("min", "max")
    ]
    metrics = with_state_metrics([*plan.metrics, *(m for m in extra if m not in plan.metrics)])
    return attrs.evolve(plan, metrics=tuple(metrics))


def _key_range(metrics: dict[Metric, Any], keys: Sequence[str]) -> tuple[Any, Any] | None:
    """The (min, max) of `keys[0]` among `metrics` (as merged or measured), None if not there
    (or the column holds no value)."""
    bounds = {
        m.arg: v
        for m, v in metrics.items()
        if m.column == keys[0] and m.kind is Measure.STAT and m.arg in ("min", "max")
    }
    low, high = bounds.get("min"), bounds.get("max")
    if low is None or high is None or isinstance(low, Exception) or isinstance(high, Exception):
        return None
    return low, high


def why_not_merged(rules: Sequence[Rule], plan: Plan) -> str | None:
    """Why this evaluation's table verdicts cannot come from merged states (the table is then
    scanned whole), or None."""
    active = [r for r in rules if r.active]
    if any(r.filter_condition for r in active):
        return "a rule has a filter condition"
    if any(s.sql for s in plan.steps):
        return "a rule is a SQL query"
    kept_out = [m for m in plan.metrics if not mergeable(m)]
    if kept_out:
        what = kept_out[0]
        name = what.arg if what.arg else getattr(what.kind, "value", what.kind)
        return f"the {name} of {what.column or 'the dataset'} has no mergeable state"
    return None


def evaluate_keeping_states(
    df: DataFrame, rules: Sequence[Rule], profile: bool
) -> tuple[list[RuleResult], States | None]:
    """The rules' results on the whole of `df`, and the states to keep for the next append (None
    when they cannot be merged later: `why_not_merged`)."""
    plan = _plan(df, rules, profile)
    why = why_not_merged(rules, plan)
    if why is not None:
        log.info("no states kept: %s", why)
        return run_plan(df, plan), None
    stateful = _stateful(plan, df)
    measured = measure(df, stateful)
    if isinstance(measured, list):
        log.info("no states kept: nothing measured")
        return measured, None
    shown = Measured(measured.values[: len(plan.metrics)], measured.counted, measured.rows)
    results = judge(df, plan, shown)
    counted = [measured.counted[i] for i in range(len(plan.key_sets))]
    states = states_of(stateful.metrics, measured.values, plan.key_sets, counted, measured.rows)
    return results, states


def evaluate_increment(
    added: DataFrame,
    before: Callable[[], DataFrame],
    rules: Sequence[Rule],
    profile: bool,
    kept: States,
) -> tuple[list[RuleResult], States] | None:
    """The table's results after an append, from `kept` (the states of `before()`, the version
    the run appended to, opened only where a key set needs its keys) and the run's `added`
    rows. None when that cannot be done exactly (the caller reads the table whole)."""
    plan = _plan(added, rules, profile)
    if why_not_merged(rules, plan) is not None:
        return None
    stateful = _stateful(plan, added)
    if not kept.covers(stateful.metrics, plan.key_sets):
        return None  # the rules changed since the kept version: whole scan, states anew
    measured = measure(added, stateful)
    if isinstance(measured, list):
        return None  # nothing measured (unreadable, or decided from the schema alone)
    counted = [measured.counted[i] for i in range(len(plan.key_sets))]
    new = states_of(stateful.metrics, measured.values, plan.key_sets, counted, measured.rows)
    if new is None:
        return None
    merged_states: dict[str, Any] = {}
    values: list[Any] = []
    ranges_before = {m: value_of(m, kept.metrics[metric_key(m)]) for m in stateful.metrics}
    ranges_added = dict(zip(stateful.metrics, measured.values, strict=True))
    for metric in stateful.metrics:
        key = metric_key(metric)
        state = merged_value(metric, kept.metrics[key], new.metrics[key])
        merged_states[key] = state
        values.append(value_of(metric, state))
        if metric.arg == "stddev" and _overflowed(values[-1]):
            return None  # measured again on the whole table only: read it whole
    merged_keys: dict[int, KeyCounts | Exception] = {}
    key_states: dict[str, tuple[int, int]] = {}
    for i, columns in enumerate(plan.key_sets):
        count = counted[i]
        assert not isinstance(count, Exception)  # states_of gave none for an error
        older, newer = _key_range(ranges_before, columns), _key_range(ranges_added, columns)
        if newer is None and older is not None and count.rows == 0:
            overlap = 0  # no whole key among the run's rows
        elif older is not None and newer is not None and (
            newer[0] > older[1] or newer[1] < older[0]
        ):
            overlap = 0  # every key of the run's rows lies outside the table's range
        else:
            overlap = keys_already_there(added, before(), columns)
        total = merged_key_counts(kept.key_sets[key_set_key(columns)], count, overlap)
        merged_keys[i] = total
        key_states[key_set_key(columns)] = (total.rows, total.distinct)
    rows = kept.rows + measured.rows
    shown = Measured(values[: len(plan.metrics)], merged_keys, rows)
    # `added` for the columns' names: no rule here measures anything again (the one that would,
    # an overflowing deviation, sent the table to be read whole above)
    results = judge(added, plan, shown)
    states = States(rows, merged_states, key_states, merged=kept.merged + 1)
    return results, states


def keys_already_there(added: DataFrame, before: DataFrame, columns: Sequence[str]) -> int:
    """How many of the distinct keys (every part non-null) in `added` are also in `before`:
    reading `before`'s key columns only, where the first one lies within `added`'s range."""
    names = [f"k{i}" for i in range(len(columns))]
    picked = [SF.col(quote(c)).alias(n) for c, n in zip(columns, names, strict=True)]
    present = SF.lit(True)
    for n in names:
        present = present & SF.col(n).isNotNull()
    new_keys = added.select(*picked).where(present).distinct()
    older = before.select(*picked).where(present)
    first = (
        before.schema[columns[0]].dataType.simpleString() if columns[0] in before.columns else ""
    )
    if first in _RANGED:
        bounds = new_keys.agg(SF.min("k0"), SF.max("k0")).first()
        if bounds is None or bounds[0] is None:
            return 0  # no key of the run's rows is whole: none can be in the table already
        older = older.where(SF.col("k0").between(SF.lit(bounds[0]), SF.lit(bounds[1])))
    return int(new_keys.join(older.distinct(), names, "left_semi").count())


def _overflowed(value: Any) -> bool:
    return isinstance(value, float) and not math.isfinite(value)
