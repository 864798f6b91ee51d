"""One evaluation against the history: judge its history rules on their earlier values, then
keep every measured value (one transaction). A store that cannot be read or written makes the
history rules ERRORs saying so; the other rules' verdicts stand. A value that is not a finite
number is kept as such (store.py) and read into no baseline; an evaluation whose event time the
store would not keep (a day ahead of the clock, past the retention) says so in each verdict."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import attrs

from lineage_quality.errors import HistoryUnreadable
from lineage_quality.history.database import first_line
from lineage_quality.history.feedback import FeedbackState
from lineage_quality.history.points import Point
from lineage_quality.history.store import HistoryStore, Measured
from lineage_quality.history.verdicts import history_verdict, history_window_ms
from lineage_quality.masked_values import kept_text
from lineage_quality.results import (
    HISTORY_TOO_SHORT,
    Cause,
    RuleResult,
    Status,
    error_result,
    skipped_result,
)
from lineage_quality.rules import Operator
from lineage_quality.rules.history import DEFAULT_MINIMUMS, Compare, HistoryMinimums
from lineage_quality.samples import Sampling

log = logging.getLogger(__name__)

NO_HISTORY_STORE = "no history is kept here (serve --history off): history rules cannot be judged"
NOT_IN_CHECK = (
    "history rules are judged where a history is kept (serve, in-driver mode), not by check"
)

# Runs a freshness rule reads back to find when its value last changed; a longer unchanged
# streak is dated from the oldest of these (the age is then at least what it says).
FRESHNESS_LOOKBACK = 10_000


def judge_and_record(
    store: HistoryStore,
    dataset: str,
    run_id: str,
    event_ms: int,
    results: Sequence[RuleResult],
    version: str | None = None,
    minimums: HistoryMinimums = DEFAULT_MINIMUMS,
    masking: Sampling | None = None,
) -> list[RuleResult]:
    """`results` with each history rule judged on its past; every PASSED or FAILED value kept.
    `minimums`: the minimum history of the stddev and seasonal rules that declare none.
    `masking`: the contracts' masking, for the text the store's readers show instead of a
    masked column's value (masked_values.py); the raw value is kept, and returned, for the
    caller to mask."""
    judged: list[RuleResult] = []
    try:
        for result in results:
            check = result.rule.history
            if check is None:
                judged.append(result)
                continue
            feedback = FeedbackState.of(store.feedback(dataset, result.rule.id))
            window = history_window_ms(check)
            # enough runs for the window, the failed ones left out, and a streak of them
            limit = None if window is not None else check.runs * 4 + 10 + check.recover_after
            if check.compare is Compare.FRESHNESS:
                limit = FRESHNESS_LOOKBACK  # the streak of unchanged values may be long
            since = None if window is None else event_ms - window
            if feedback.since_ms is not None:
                since = max(since or feedback.since_ms, feedback.since_ms)
            past: list[Point] = store.series(
                dataset,
                result.rule.id,
                before_ms=event_ms,
                limit=limit,
                since_ms=since,
                finite_only=True,  # a NaN or an infinity is in no baseline
            )
            judged.append(history_verdict(result, past, event_ms, feedback, minimums))
    except Exception as exc:
        log.error("history of %s cannot be read: %s", dataset, exc)
        # a HistoryUnreadable names the store, the row and the column (history/rows.py)
        said = first_line(exc)
        unreadable = isinstance(exc, HistoryUnreadable)
        message = said if unreadable else f"the history store cannot be read: {said}"
        return [
            error_result(r.rule, message, Cause.UNREADABLE) if r.rule.history else r
            for r in results
        ]
    rows = [
        Measured(
            dataset=dataset,
            rule_id=r.rule.id,
            run_id=run_id,
            metric=r.rule.kind.value,
            value=float(value),
            status=r.status.value,
            event_ms=event_ms,
            version=version,
            lower=band_of(r)[0],
            upper=band_of(r)[1],
            shown=None if masking is None else kept_text(r, masking),
        )
        for r in judged
        if _kept(r) and (value := r.measured if r.measured is not None else r.actual) is not None
    ]
    why = store.why_not_kept(event_ms) if rows else None
    if why is not None:
        note = f"not kept in the history ({why})"
        return [attrs.evolve(r, scope=(r.scope + "; " if r.scope else "") + note) for r in judged]
    try:
        store.append(rows)
        sampled = [(r.rule.id, r.samples) for r in judged if r.samples is not None]
        if sampled:  # beside their values, expiring with them (history/samples.py)
            store.keep_samples(dataset, run_id, event_ms, sampled)
    except Exception as exc:
        log.error("history of %s cannot be written: %s", dataset, exc)
        note = f"not kept in the history (the store failed: {str(exc).splitlines()[0][:200]})"
        return [attrs.evolve(r, scope=(r.scope + "; " if r.scope else "") + note) for r in judged]
    return judged


def band_of(result: RuleResult) -> tuple[float | None, float | None]:
    """The band a verdict held its value to, in the value's own terms: a history rule's mean ±
    k sd, or its threshold around the previous value; a plain rule's threshold."""
    baseline = dict(result.baseline or ())
    if "lower" in baseline and "upper" in baseline:
        return _num(baseline["lower"]), _num(baseline["upper"])
    threshold = result.rule.threshold
    low, high = _bounds(threshold.operator, float(threshold.value), threshold.high)
    check = result.rule.history
    if check is None:
        return low, high
    previous = _num(baseline.get("previous"))
    if previous is None or check.compare not in (Compare.ABSOLUTE_CHANGE, Compare.RELATIVE_CHANGE):
        return None, None
    if check.compare is Compare.ABSOLUTE_CHANGE:
        return (None if low is None else previous + low, None if high is None else previous + high)
    ends = [None if b is None else previous * b for b in (low, high)]
    if previous < 0:
        ends.reverse()
    return ends[0], ends[1]


def _bounds(op: Operator, value: float, high: float | None) -> tuple[float | None, float | None]:
    if op is Operator.BETWEEN:
        return value, None if high is None else float(high)
    if op in (Operator.GREATER_THAN, Operator.GREATER_OR_EQUAL):
        return value, None
    if op in (Operator.LESS_THAN, Operator.LESS_OR_EQUAL):
        return None, value
    if op is Operator.MUST_BE:
        return value, value
    return None, None


def _num(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def without_history(results: Sequence[RuleResult], status: Status, why: str) -> list[RuleResult]:
    """Where no history is kept: each history rule an ERROR (or SKIPPED) saying so, never its
    threshold applied to the raw measurement."""
    out = []
    for r in results:
        if r.rule.history is None or r.status not in (Status.PASSED, Status.FAILED):
            out.append(r)
        elif status is Status.ERROR:
            out.append(
                attrs.evolve(
                    error_result(r.rule, why, Cause.INSUFFICIENT_HISTORY), measured=r.actual
                )
            )
        else:
            out.append(
                attrs.evolve(
                    skipped_result(r.rule, "NO_HISTORY", why), cause=Cause.INSUFFICIENT_HISTORY
                )
            )
    return out


def _kept(result: RuleResult) -> bool:
    """A measurement: PASSED or FAILED, or a history rule SKIPPED for too little history (its
    value is what the next runs' baselines are made of)."""
    if result.status in (Status.PASSED, Status.FAILED):
        return True
    return result.status is Status.SKIPPED and result.skip_reason == HISTORY_TOO_SHORT
