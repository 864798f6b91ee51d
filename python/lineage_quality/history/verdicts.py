"""A history rule's verdict: its measurement against the values it measured before. Pure.

The baseline is built from earlier points that did not fail (PASSED, or SKIPPED while the history
was too short): a run that failed is an anomaly, and one anomaly must not make the next, normal
run fail too (as Deequ's OnlineNormalStrategy ignores
anomalies). Freshness reads every measured point: it asks when the value last changed. A point
whose value is not a finite number (NaN, an infinity) is in no baseline, freshness's included:
one would make every mean, deviation and ratio after it NaN.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

import attrs

from lineage_quality.history.times import iso_ms
from lineage_quality.results import (
    HISTORY_TOO_SHORT,
    NON_FINITE,
    Cause,
    RuleResult,
    Status,
    error_result,
)
from lineage_quality.rules.history import SEASON_TOLERANCE_SECONDS, Compare, HistoryCheck

WEEK_MS = 7 * 24 * 3600 * 1000


@attrs.frozen
class Point:
    """One measured value of a rule on a dataset, from one run."""

    run_id: str
    event_ms: int
    value: float
    status: str  # PASSED / FAILED, or SKIPPED (a history rule with too little history yet)
    lower: float | None = None  # the band the verdict used, in the value's terms, if any
    upper: float | None = None


def history_window_ms(check: HistoryCheck) -> int | None:
    """How far back a check reads, None for `the last N points` (read by count)."""
    if check.compare is Compare.SEASONAL:
        return check.runs * WEEK_MS + int(SEASON_TOLERANCE_SECONDS * 1000)
    return None


def history_verdict(result: RuleResult, past: Sequence[Point], event_ms: int) -> RuleResult:
    """`result` (the engine's measurement of a history rule) judged against `past` (earlier
    points of the same rule and dataset, any order). Errors stay errors."""
    check = result.rule.history
    if check is None or result.status not in (Status.PASSED, Status.FAILED):
        return result
    if result.actual is None:
        return error_result(result.rule, result.message or "nothing was measured to compare")
    value = result.actual
    if isinstance(value, float) and not math.isfinite(value):
        # docs/rules.md: a NaN (or infinite) statistic meets no threshold, however short the
        # history: never SKIPPED run after run (a skip never blocks)
        return attrs.evolve(
            result,
            status=Status.FAILED,
            measured=value,
            message=f"the value is {NON_FINITE[repr(value)]}: it meets no threshold",
            expected_text=check.describe(),
        )
    earlier = sorted(
        (p for p in past if p.event_ms < event_ms and math.isfinite(p.value)),
        key=lambda p: p.event_ms,
    )
    # a run judged too early to compare was a normal measurement: it belongs to baselines
    accepted = [p for p in earlier if p.status in (Status.PASSED.value, Status.SKIPPED.value)]
    base = attrs.evolve(result, measured=value, failing_rows=result.failing_rows)
    if check.compare in (Compare.ABSOLUTE_CHANGE, Compare.RELATIVE_CHANGE):
        return _change(base, check, value, accepted)
    if check.compare is Compare.FRESHNESS:
        return _freshness(base, check, value, earlier, event_ms)
    window = accepted[-check.runs :]
    if check.compare is Compare.SEASONAL:
        window = _same_season(accepted, event_ms, check.runs)
    return _band(base, check, value, window)


def _too_short(result: RuleResult, check: HistoryCheck, has: int, what: str) -> RuleResult:
    return attrs.evolve(
        result,
        status=Status.SKIPPED,
        actual=None,
        skip_reason=HISTORY_TOO_SHORT,
        cause=Cause.INSUFFICIENT_HISTORY,
        message=f"needs {check.min_runs} {what}, has {has}",
        expected_text=check.describe(),
        baseline=(("runs", has),),
    )


def _judged(
    result: RuleResult,
    passed: bool,
    actual: float,
    expected: str,
    baseline: tuple[tuple[str, object], ...],
) -> RuleResult:
    return attrs.evolve(
        result,
        status=Status.PASSED if passed else Status.FAILED,
        actual=actual,
        expected_text=expected,
        baseline=baseline,
    )


def _change(
    result: RuleResult, check: HistoryCheck, value: float, accepted: list[Point]
) -> RuleResult:
    if len(accepted) < check.min_runs:
        return _too_short(result, check, len(accepted), "earlier run(s)")
    previous = accepted[-1]
    baseline = (
        ("previous", previous.value),
        ("previousRun", previous.run_id),
        ("previousTime", _iso(previous.event_ms)),
    )
    if check.compare is Compare.ABSOLUTE_CHANGE:
        quantity = value - previous.value
    else:
        if previous.value == 0:
            return attrs.evolve(
                error_result(
                    result.rule,
                    "the previous value is 0: no ratio to compare",
                    Cause.INSUFFICIENT_HISTORY,
                ),
                measured=value,
                baseline=baseline,
            )
        quantity = value / previous.value
    threshold = result.rule.threshold
    expected = f"{check.describe()} {threshold.describe()}"
    return _judged(result, threshold.holds(quantity), quantity, expected, baseline)


def _band(result: RuleResult, check: HistoryCheck, value: float, window: list[Point]) -> RuleResult:
    what = "runs" if check.compare is Compare.STDDEV else "runs of the same weekday and hour"
    if len(window) < check.min_runs:
        return _too_short(result, check, len(window), what)
    values = [p.value for p in window]
    mean = statistics.fmean(values)
    sd = statistics.stdev(values)  # sample standard deviation, as Deequ's BatchNormalStrategy
    lower, upper = mean - check.k * sd, mean + check.k * sd
    baseline = (
        ("n", len(values)),
        ("mean", mean),
        ("stddev", sd),
        ("lower", lower),
        ("upper", upper),
    )
    passed = not math.isnan(value) and lower <= value <= upper
    expected = f"between {lower:.6g} and {upper:.6g} ({check.describe()})"
    return _judged(result, passed, value, expected, baseline)


def _same_season(accepted: list[Point], event_ms: int, weeks: int) -> list[Point]:
    """Per earlier week, the point closest to the same weekday and hour (within the tolerance)."""
    tolerance = SEASON_TOLERANCE_SECONDS * 1000
    chosen = []
    for week in range(1, weeks + 1):
        target = event_ms - week * WEEK_MS
        near = [p for p in accepted if abs(p.event_ms - target) <= tolerance]
        if near:
            chosen.append(min(near, key=lambda p: abs(p.event_ms - target)))
    return sorted(chosen, key=lambda p: p.event_ms)


def _freshness(
    result: RuleResult, check: HistoryCheck, value: float, earlier: list[Point], event_ms: int
) -> RuleResult:
    if len(earlier) < check.min_runs:
        return _too_short(result, check, len(earlier), "earlier run(s)")
    since = event_ms
    same = 0
    for point in reversed(earlier):  # the streak of runs that measured the same value
        if point.value != value:
            break
        since = point.event_ms
        same += 1
    age = (event_ms - since) / 1000.0
    threshold = result.rule.threshold
    baseline = (("lastChange", _iso(since)), ("sameValueRuns", same))
    expected = f"{check.describe()} {threshold.describe()}"
    return _judged(result, threshold.holds(age), age, expected, baseline)


def _iso(ms: int) -> str:
    return iso_ms(ms, "milliseconds")
