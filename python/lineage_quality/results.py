"""Outcome of evaluating one rule on one dataset."""

from __future__ import annotations

import enum
import math

import attrs

from lineage_quality.measures import DatasetMeasures
from lineage_quality.rules import Rule, Unit
from lineage_quality.samples import Samples

# skip_reason of the rules of an output whose run failed: reported in the run's test facet only.
RUN_FAILED = "RUN_FAILED"
# skip_reason of the rules of an output the run dropped, truncated or renamed: no data of the run
# to judge there; reported in the run's test facet only.
DATASET_REMOVED = "DATASET_REMOVED"
# skip_reason of a history rule with fewer earlier runs than it needs ("needs 5 runs, has 2").
HISTORY_TOO_SHORT = "HISTORY_TOO_SHORT"
# Skip reasons of datasets nothing was evaluated on: no dataset facet claims anything about them.
NOT_EVALUATED = frozenset({RUN_FAILED, DATASET_REMOVED})
# skip_reason of a reconciliation on one dataset alone (`check`, or a dataset the run read): it
# compares a run's output with the inputs that run read (kinds/reconcile.py).
ACROSS_DATASETS = "ACROSS_DATASETS"
ACROSS_MESSAGE = (
    "a reconciliation compares a run's output with the inputs it read: judged where a run "
    "writes the dataset (serve, attach), not on the dataset alone"
)


# A non-finite value (NaN measured on real data) has no JSON number: everywhere we write one, it is
# this string instead (docs/reliability.md); never a number in the history store.
NON_FINITE = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}


def finite(value: object) -> object:
    """`value` with every non-finite float (at any depth of dicts, lists and tuples) replaced by
    its name in `NON_FINITE`."""
    if isinstance(value, float):
        return value if math.isfinite(value) else NON_FINITE[repr(value)]
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    return value


class Cause(enum.Enum):
    """Why a rule could not run (an ERROR, or a SKIPPED for want of history): reported to
    DataHub as its error type (datahub/run_events.py)."""

    INVALID_RULE = "INVALID_RULE"  # the rule does not fit the data: column, type, pattern, query
    QUERY_FAILED = "QUERY_FAILED"  # the scan or the rule's query failed on the data
    UNREADABLE = "UNREADABLE"  # the dataset (or the history store) could not be read
    INSUFFICIENT_HISTORY = "INSUFFICIENT_HISTORY"  # too few earlier runs, or no history kept
    NO_RUN = "NO_RUN"  # a reconciliation on one dataset alone: no run's inputs to compare with


class Status(enum.Enum):
    PASSED = "PASSED"
    FAILED = "FAILED"
    ERROR = "ERROR"  # the rule could not run (missing column, bad regex, unreadable data, timeout)
    SKIPPED = "SKIPPED"  # not run because a rule it depends on failed (see `skip_reason`)


@attrs.frozen
class Quarantined:
    """Where a QUARANTINE rule's failing rows were written: `rows` written (at most the
    configured bound), or `error` when writing them failed."""

    path: str
    rows: int | None = None
    error: str | None = None


@attrs.frozen
class RuleResult:
    """A verdict. `actual` is in the rule's unit; `failing_rows` is the raw offending count."""

    rule: Rule
    status: Status
    actual: int | float | None = None  # ints stay exact (sums and bounds above 2^53)
    failing_rows: int | None = None
    row_count: int | None = None
    message: str | None = None
    skip_reason: str | None = None
    code: str | None = None  # machine-readable failure cause: FIELD_MISSING, TYPE_MISMATCH, ...
    # a non-numeric observation (a column's type), or a masked column's value as shown
    # (masked_values.py: then `actual` is None); shown as actual
    observed: str | None = None
    quarantine: Quarantined | None = None  # failing rows written aside (action QUARANTINE)
    scope: str | None = None  # which data the verdict covers, where that needs saying
    # History rules: what the value was compared with (the band, the previous value), and the
    # baseline behind it (n, mean, stddev, previous value...) as (key, value) pairs.
    expected_text: str | None = None
    baseline: tuple[tuple[str, object], ...] | None = None
    measured: int | float | None = None  # the metric itself, where `actual` is a change of it
    # A reconciliation: the other side it was compared with (the input, the version the run
    # read, both numbers) as (key, value) pairs.
    compared: tuple[tuple[str, object], ...] | None = None
    # What the evaluation's scan measured on the whole dataset (row count, column statistics):
    # the same object on every result of one evaluation; None when nothing was scanned. Not
    # part of the verdict's identity (eq): two results saying the same thing stay equal.
    measures: DatasetMeasures | None = attrs.field(default=None, eq=False, repr=False)
    # Why an ERROR (or a SKIPPED history rule) could not be judged, where that is known.
    cause: Cause | None = attrs.field(default=None, eq=False)
    # A verdict not measured here but reused from the evaluation of the same dataset version
    # with the same rules (evaluation/reuse.py): that run's id and time, as (key, value) pairs.
    reused_from: tuple[tuple[str, object], ...] | None = attrs.field(default=None, eq=False)
    # A streaming query's micro-batches the verdict covers (several when evaluation fell behind
    # and batches were merged into one evaluation: evaluation/batches.py).
    batches: tuple[int, ...] | None = attrs.field(default=None, eq=False)
    # A few of the rows a FAILED verdict counted, already masked (lineage_quality.samples);
    # not part of the verdict's identity.
    samples: Samples | None = attrs.field(default=None, eq=False, repr=False)

    @property
    def success(self) -> bool:
        """Only a PASSED rule is a success: an error is never reported as a pass."""
        return self.status is Status.PASSED

    @property
    def expected(self) -> str:
        if self.expected_text is not None:
            return self.expected_text
        rule = self.rule
        declared = rule.kind.expected(rule)
        if declared is not None:
            return declared
        suffix = "%" if rule.unit is Unit.PERCENT else ""
        return rule.threshold.describe() + suffix

    def actual_text(self) -> str | None:
        if self.observed is not None:
            return self.observed
        if self.actual is None:
            return None
        value = self.actual
        if isinstance(value, int):
            text = str(value)
        elif not math.isfinite(value):  # as JSON's readers spell them (docs/reliability.md)
            text = NON_FINITE[repr(value)]
        else:
            text = str(int(value)) if value.is_integer() else f"{value:.6g}"
        return text + ("%" if self.rule.unit is Unit.PERCENT else "")


def error_result(rule: Rule, message: str, cause: Cause | None = None) -> RuleResult:
    return RuleResult(rule=rule, status=Status.ERROR, message=message, cause=cause)


def skipped_result(rule: Rule, reason: str, message: str | None = None) -> RuleResult:
    return RuleResult(rule=rule, status=Status.SKIPPED, skip_reason=reason, message=message)
