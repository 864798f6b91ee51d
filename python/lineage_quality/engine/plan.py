"""Turn the rules of one dataset into one fused aggregation plus grouped passes.

Pure: works on column names and Spark type strings, never touches Spark. In the manner of Deequ's
analyzers, each rule declares the aggregate it needs; identical aggregates are computed once;
schema preconditions (the column exists, has a usable type, the pattern compiles) are checked
here, before any scan, and a rule that fails them becomes an error result instead of breaking the
scan for the others. Schema rules (column type, extra columns) are decided here outright, and
rules depending on a failed schema rule are SKIPPED (the schema-rules JSON semantics).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from typing import Any

import attrs

from lineage_quality.engine.dates import java_pattern
from lineage_quality.engine.types import (
    is_array,
    is_numeric,
    is_temporal,
    spark_type,
    type_mismatch,
)
from lineage_quality.engine.verdicts import verdict
from lineage_quality.results import RuleResult, Status, error_result, skipped_result
from lineage_quality.rules import Rule, RuleKind
from lineage_quality.rules.patterns import pattern_refusal


class MetricKind(enum.Enum):
    ROWS = "rows"  # count(*)
    NULLS = "nulls"  # rows where the column is null
    MISSING = "missing"  # rows where the column is null or one of the missing values
    INVALID = "invalid"  # non-null rows that are not valid (value list and/or pattern)
    OUT_OF_RANGE = "out_of_range"  # non-null rows outside [low, high]
    LENGTH_OUT = "length_out"  # non-null rows whose length is outside [low, high]
    CARDINALITY_OUT = "cardinality_out"  # rows whose value count is outside [low, high]
    BAD_DATE = "bad_date"  # non-null string rows that do not parse with `arg`
    TOO_NEW = "too_new"  # rows newer than now - low seconds
    TOO_OLD = "too_old"  # rows older than now - low seconds
    STAT = "stat"  # the statistic `arg` of the column


@attrs.frozen
class Metric:
    """One aggregate expression of the fused scan."""

    kind: MetricKind
    column: str | None = None
    values: tuple[Any, ...] | None = None
    pattern: str | None = None
    low: float | None = None
    high: float | None = None
    arg: str | None = None
    array: bool = False  # the column is an array (length = element count)
    typed: bool = False  # BAD_DATE on a date/timestamp column: nothing can be malformed
    integral: bool = False  # STAT on an integer column: sum/min/max are computed exactly
    wide: bool = False  # ... a 64-bit one: its sum can pass 2^63, a sum of narrower ones cannot


ROWS = Metric(MetricKind.ROWS)


@attrs.frozen
class Step:
    """How one rule gets its verdict: a metric slot, a grouped pass, its own SQL query, or a
    result already decided from the schema (pass, fail, error, skip)."""

    rule: Rule
    metric: int | None = None  # index into Plan.metrics
    key_set: int | None = None  # index into Plan.key_sets
    sql: bool = False
    result: RuleResult | None = None

    @property
    def error(self) -> str | None:
        if self.result is not None and self.result.status is Status.ERROR:
            return self.result.message
        return None


@attrs.frozen
class Plan:
    metrics: tuple[Metric, ...]  # metrics[0] is always ROWS: every verdict needs the row count
    key_sets: tuple[tuple[str, ...], ...]
    steps: tuple[Step, ...]
    profiled: bool = False  # the profile's metrics are among `metrics`: scan even if no rule needs


def resolve_column(name: str, columns: Sequence[str], case_insensitive: bool = True) -> str | None:
    """The dataset's spelling of `name`: exact, else case-insensitive (Spark's default)."""
    if name in columns:
        return name
    if not case_insensitive:
        return None
    folded = [c for c in columns if c.lower() == name.lower()]
    return folded[0] if len(folded) == 1 else None


_NUMERIC_KINDS = (RuleKind.VALUE_RANGE, RuleKind.STATISTIC)
# per-row counts checked against [min, max]: string length / array size, values per row
_PER_ROW_RANGES = {
    RuleKind.LENGTH_RANGE: MetricKind.LENGTH_OUT,
    RuleKind.CARDINALITY: MetricKind.CARDINALITY_OUT,
}


def stat_metric(column: str, ctype: str, statistic: str) -> Metric:
    """The statistic `statistic` of a numeric column: one slot whether a rule or the profile
    asks for it."""
    integral = spark_type(ctype).family == "integer"
    wide = integral and ctype.lower() in ("bigint", "long")
    return Metric(MetricKind.STAT, column, arg=statistic, integral=integral, wide=wide)


# The profile's statistics of a numeric column: cheap streaming aggregates (no sort, no sketch),
# each one more buffer slot in the same scan.
PROFILE_STATISTICS = ("min", "max", "sum")


def profile_metrics(schema: Sequence[tuple[str, str]]) -> list[Metric]:
    """The opt-in profile: every column's null count, and min, max and sum of numeric ones."""
    out: list[Metric] = []
    for column, ctype in schema:
        out.append(Metric(MetricKind.NULLS, column))
        if is_numeric(ctype):
            out.extend(stat_metric(column, ctype, arg) for arg in PROFILE_STATISTICS)
    return out


def _metric_for(rule: Rule, column: str, ctype: str) -> Metric | str:
    """The metric a fused rule needs, or why it cannot run on this column."""
    kind = rule.kind
    if kind is RuleKind.NULL_VALUES:
        return Metric(MetricKind.NULLS, column)
    if kind is RuleKind.MISSING_VALUES:
        values = tuple(v for v in (rule.missing_values or ()) if v is not None)
        return Metric(MetricKind.MISSING, column, values=values)
    if kind is RuleKind.INVALID_VALUES:
        # A null is never invalid, so a null in the list changes nothing (and must not make
        # `value IN (..., NULL)` null for every value that is not listed).
        if rule.pattern is not None:
            refused = pattern_refusal(rule.pattern)
            if refused:
                return refused
        valid = None
        if rule.valid_values is not None:
            valid = tuple(v for v in rule.valid_values if v is not None)
        return Metric(MetricKind.INVALID, column, values=valid, pattern=rule.pattern)
    if kind in _NUMERIC_KINDS and not is_numeric(ctype):
        return f"{rule.assertion} needs a numeric column; {column} is {ctype}"
    if kind is RuleKind.VALUE_RANGE:
        return Metric(MetricKind.OUT_OF_RANGE, column, low=rule.min_value, high=rule.max_value)
    if kind is RuleKind.STATISTIC:
        return stat_metric(column, ctype, rule.statistic or "")
    if kind in _PER_ROW_RANGES:
        return Metric(
            _PER_ROW_RANGES[kind],
            column,
            low=rule.min_value,
            high=rule.max_value,
            array=is_array(ctype),
        )
    if kind is RuleKind.DATE_FORMAT:
        family = spark_type(ctype).family
        if family not in ("string", "date", "timestamp"):
            return f"dateFormat needs a string column; {column} is {ctype}"
        try:
            pattern = java_pattern(rule.date_format or "")
        except ValueError as exc:
            return str(exc)
        return Metric(MetricKind.BAD_DATE, column, arg=pattern, typed=family != "string")
    if kind is RuleKind.FRESHNESS:
        if not is_temporal(ctype):
            return f"freshness needs a date or timestamp column; {column} is {ctype}"
        if rule.min_age_seconds is not None:
            return Metric(MetricKind.TOO_NEW, column, low=rule.min_age_seconds)
        return Metric(MetricKind.TOO_OLD, column, low=rule.max_age_seconds)
    return f"no fused metric for {kind.value}"


def _schema_result(rule: Rule, schema: Sequence[tuple[str, str]]) -> RuleResult:
    names = [n for n, _ in schema]
    types = dict(schema)
    if rule.kind is RuleKind.EXTRA_COLUMNS:
        declared = list(rule.valid_values or ())
        extra = [n for n in names if resolve_column(n, declared, not rule.case_sensitive) is None]
        result = verdict(rule, len(extra), len(names))
        message = f"undeclared columns: {', '.join(extra)}" if extra else None
        return attrs.evolve(result, failing_rows=len(extra), row_count=None, message=message)
    name = rule.columns[0]
    found = resolve_column(name, names, not rule.case_sensitive)
    if found is None:
        failed = verdict(rule, 1, len(names))
        return attrs.evolve(
            failed,
            code="FIELD_MISSING",
            message=f"column {name} not found",
            observed="missing",
            row_count=None,
        )
    actual = types[found]
    problem = None
    if rule.expected_type is not None:
        problem = type_mismatch(
            rule.expected_type, actual, rule.precision, rule.scale, exact=rule.exact_type
        )
    result = verdict(rule, 1 if problem else 0, len(names))
    if problem:
        result = attrs.evolve(result, code="TYPE_MISMATCH", message=problem)
    # Schema rules count mismatching columns, not rows.
    return attrs.evolve(result, observed=actual, row_count=None)


def build_plan(
    rules: Iterable[Rule], schema: Sequence[tuple[str, str]], profile: bool = False
) -> Plan:
    """`schema` is the dataset's (column name, Spark simpleString type) in order. `profile` adds
    the cheap metrics of every column (`profile_metrics`) to the same fused aggregation."""
    rules = list(rules)
    columns = [n for n, _ in schema]
    types = dict(schema)
    metrics: list[Metric] = [ROWS]
    key_sets: list[tuple[str, ...]] = []
    steps: list[Step] = []

    # Schema rules first: their failures decide which dependents are skipped.
    decided: dict[str, RuleResult] = {}
    for rule in rules:
        if rule.kind.is_schema:
            decided[rule.id] = _schema_result(rule, schema)

    # By hash, not a list search: the profile of a wide table brings thousands of metrics.
    slots: dict[Any, int] = {ROWS: 0}

    def slot(metric: Metric) -> int:
        key: Any = metric
        try:
            hash(metric)
        except TypeError:  # a value list holding lists or maps (YAML allows it): by its text
            key = repr(metric)
        found = slots.get(key)
        if found is None:
            found = slots[key] = len(metrics)
            metrics.append(metric)
        return found

    for rule in rules:
        if rule.kind.is_schema:
            steps.append(Step(rule, result=decided[rule.id]))
            continue
        blocking = [decided[d] for d in rule.depends_on if d in decided and not decided[d].success]
        if blocking:
            first = blocking[0]
            reason = first.code or first.status.value
            steps.append(Step(rule, result=skipped_result(rule, reason, first.message)))
            continue
        if rule.kind is RuleKind.SQL:
            steps.append(Step(rule, sql=True))
            continue
        resolved = [resolve_column(c, columns, not rule.case_sensitive) for c in rule.columns]
        missing = [c for c, r in zip(rule.columns, resolved, strict=True) if r is None]
        if missing:
            message = f"column not found in dataset: {', '.join(missing)}"
            steps.append(Step(rule, result=error_result(rule, message)))
            continue
        cols = tuple(r for r in resolved if r is not None)
        if rule.kind is RuleKind.ROW_COUNT:
            steps.append(Step(rule, metric=0))
        elif rule.kind.is_grouped:
            # (a, b) and (b, a) are one key set: the duplicate count does not depend on order.
            found = next((i for i, k in enumerate(key_sets) if set(k) == set(cols)), None)
            if found is None:
                key_sets.append(cols)
                found = len(key_sets) - 1
            steps.append(Step(rule, key_set=found))
        else:
            metric = _metric_for(rule, cols[0], types[cols[0]])
            if isinstance(metric, str):
                steps.append(Step(rule, result=error_result(rule, metric)))
            else:
                steps.append(Step(rule, metric=slot(metric)))
    if profile:
        for metric in profile_metrics(schema):
            slot(metric)  # a metric a rule already asked for is not computed twice
    return Plan(
        metrics=tuple(metrics), key_sets=tuple(key_sets), steps=tuple(steps), profiled=profile
    )
