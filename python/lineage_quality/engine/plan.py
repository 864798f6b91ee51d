"""Turn the rules of one dataset into one fused aggregation plus grouped passes.

Pure: works on column names and Spark type strings, never touches Spark. In the manner of Deequ's
analyzers, each rule's kind declares the aggregate it needs (`Kind.metric`, kinds/); identical
aggregates are computed once;
schema preconditions (the column exists, has a usable type, the pattern compiles) are checked
here, before any scan, and a rule that fails them becomes an error result instead of breaking the
scan for the others. Schema rules (column type, extra columns) are decided here outright, and
rules depending on a failed schema rule are SKIPPED (the schema-rules JSON semantics).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from lineage_quality.engine.types import is_numeric, spark_type, type_mismatch
from lineage_quality.engine.verdicts import verdict
from lineage_quality.results import (
    ACROSS_DATASETS,
    ACROSS_MESSAGE,
    Cause,
    RuleResult,
    Status,
    error_result,
    skipped_result,
)
from lineage_quality.rules import Rule
from lineage_quality.values.metric import ROWS, Measure, Metric


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


__all__ = ["ROWS", "Measure", "Metric", "Plan", "Step", "build_plan", "resolve_column"]


def resolve_column(name: str, columns: Sequence[str], case_insensitive: bool = True) -> str | None:
    """The dataset's spelling of `name`: exact, else case-insensitive (Spark's default)."""
    if name in columns:
        return name
    if not case_insensitive:
        return None
    folded = [c for c in columns if c.lower() == name.lower()]
    return folded[0] if len(folded) == 1 else None


def stat_metric(column: str, ctype: str, statistic: str) -> Metric:
    """The statistic `statistic` of a numeric column: one slot whether a rule or the profile
    asks for it."""
    integral = spark_type(ctype).family == "integer"
    wide = integral and ctype.lower() in ("bigint", "long")
    return Metric(Measure.STAT, column, arg=statistic, integral=integral, wide=wide)


# The profile's statistics of a numeric column: cheap streaming aggregates (no sort, no sketch),
# each one more buffer slot in the same scan.
PROFILE_STATISTICS = ("min", "max", "sum")


def profile_metrics(schema: Sequence[tuple[str, str]]) -> list[Metric]:
    """The opt-in profile: every column's null count, and min, max and sum of numeric ones."""
    out: list[Metric] = []
    for column, ctype in schema:
        out.append(Metric(Measure.NULLS, column))
        if is_numeric(ctype):
            out.extend(stat_metric(column, ctype, arg) for arg in PROFILE_STATISTICS)
    return out


_DECLARED_LENGTH = re.compile(r"^\s*(?:var)?char\s*\(\s*(\d+)\s*\)\s*$", re.IGNORECASE)


def _length_mismatch(rule: Rule, declared: str | None) -> str | None:
    """Seed 002's `max_length`: the column's declared length must be the one stated. Spark
    declares one only for char/varchar columns of a catalog table (kept in the column's metadata
    when read); for any other column there is nothing to compare here, and the rule's values are
    checked instead (the MAX_LENGTH rule)."""
    if rule.max_length is None or declared is None:
        return None
    found = _DECLARED_LENGTH.match(declared)
    if found is None or int(found.group(1)) == rule.max_length:
        return None
    return f"declared {declared}, expected max_length {rule.max_length}"


def _schema_result(
    rule: Rule, schema: Sequence[tuple[str, str]], lengths: Mapping[str, str] | None = None
) -> RuleResult:
    names = [n for n, _ in schema]
    types = dict(schema)
    if rule.kind.columns == "none":  # on the dataset: the columns that were not declared
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
    if problem is None:
        problem = _length_mismatch(rule, (lengths or {}).get(found))
    result = verdict(rule, 1 if problem else 0, len(names))
    if problem:
        result = attrs.evolve(result, code="TYPE_MISMATCH", message=problem)
    # Schema rules count mismatching columns, not rows.
    return attrs.evolve(result, observed=actual, row_count=None)


def build_plan(
    rules: Iterable[Rule],
    schema: Sequence[tuple[str, str]],
    profile: bool = False,
    declared: Mapping[str, str] | None = None,
) -> Plan:
    """`schema` is the dataset's (column name, Spark simpleString type) in order. `profile` adds
    the cheap metrics of every column (`profile_metrics`) to the same fused aggregation.
    `declared`: the char/varchar types the catalog declared (column -> `varchar(100)`)."""
    rules = list(rules)
    columns = [n for n, _ in schema]
    types = dict(schema)
    metrics: list[Metric] = [ROWS]
    key_sets: list[tuple[str, ...]] = []
    steps: list[Step] = []

    # Schema rules first: their failures decide which dependents are skipped.
    decided: dict[str, RuleResult] = {}
    for rule in rules:
        if rule.kind.scan == "schema" and rule.active:
            decided[rule.id] = _schema_result(rule, schema, declared)

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
        if not rule.active:  # seed 002's `is_active: false`: declared, not evaluated
            steps.append(Step(rule, result=skipped_result(rule, "INACTIVE", "is_active: false")))
            continue
        if rule.kind.scan == "schema":
            steps.append(Step(rule, result=decided[rule.id]))
            continue
        blocking = [decided[d] for d in rule.depends_on if d in decided and not decided[d].success]
        if blocking:
            first = blocking[0]
            reason = first.code or first.status.value
            steps.append(Step(rule, result=skipped_result(rule, reason, first.message)))
            continue
        if rule.kind.scan == "sql":
            steps.append(Step(rule, sql=True))
            continue
        if rule.kind.scan == "across":  # the evaluator judges it with the run's other datasets
            skipped = skipped_result(rule, ACROSS_DATASETS, ACROSS_MESSAGE)
            steps.append(Step(rule, result=attrs.evolve(skipped, cause=Cause.NO_RUN)))
            continue
        resolved = [resolve_column(c, columns, not rule.case_sensitive) for c in rule.columns]
        missing = [c for c, r in zip(rule.columns, resolved, strict=True) if r is None]
        if missing:
            message = f"column not found in dataset: {', '.join(missing)}"
            steps.append(Step(rule, result=error_result(rule, message, Cause.INVALID_RULE)))
            continue
        cols = tuple(r for r in resolved if r is not None)
        if rule.kind.scan == "rows":
            steps.append(Step(rule, metric=0))
        elif rule.kind.scan == "grouped":
            # (a, b) and (b, a) are one key set: the duplicate count does not depend on order.
            found = next((i for i, k in enumerate(key_sets) if set(k) == set(cols)), None)
            if found is None:
                key_sets.append(cols)
                found = len(key_sets) - 1
            steps.append(Step(rule, key_set=found))
        else:
            metric = rule.kind.metric(rule, cols[0], types[cols[0]])
            if isinstance(metric, str):
                steps.append(Step(rule, result=error_result(rule, metric, Cause.INVALID_RULE)))
            else:
                if isinstance(metric.kind, str) and metric.measure is None:
                    metric = attrs.evolve(metric, measure=rule.kind.analyzer())
                steps.append(Step(rule, metric=slot(metric)))
    if profile:
        for metric in profile_metrics(schema):
            slot(metric)  # a metric a rule already asked for is not computed twice
    return Plan(
        metrics=tuple(metrics), key_sets=tuple(key_sets), steps=tuple(steps), profiled=profile
    )
