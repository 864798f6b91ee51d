"""A history rule's verdict: its measurement against the values it measured before. Pure.

Which earlier points form the baseline is baseline.py's choice (normal runs, accepted ones and
lasting changes by default; every run with `baseline: all`), after the rule's latest rebaseline.
A change rule compares with the latest run of its baseline and, when the runs after that one
failed, with the latest of those too (it passes if either change holds). Freshness reads every
measured point: it asks when the value last changed. A point whose value is not a finite number
(NaN, an infinity) is in no baseline, freshness's included: one would make every mean, deviation
and ratio after it NaN.

A stddev or seasonal rule is SKIPPED until its baseline holds its minimum history (the rule's
`minHistory`, else `HistoryMinimums`: the producer's setting), whatever a smaller `minRuns`
says: a band drawn from 2-3 runs is too tight, and normal values fail it.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

import attrs

from lineage_quality.history.baseline import Baseline, choose
from lineage_quality.history.feedback import NO_FEEDBACK, FeedbackState
from lineage_quality.history.points import Point
from lineage_quality.history.times import iso_ms
from lineage_quality.results import (
    HISTORY_TOO_SHORT,
    NON_FINITE,
    Cause,
    RuleResult,
    Status,
    error_result,
)
from lineage_quality.rules.history import (
    DEFAULT_MINIMUMS,
    SEASON_TOLERANCE_SECONDS,
    Compare,
    HistoryCheck,
    HistoryMinimums,
)

WEEK_MS = 7 * 24 * 3600 * 1000

__all__ = ["WEEK_MS", "Point", "history_verdict", "history_window_ms"]


def history_window_ms(check: HistoryCheck) -> int | None:
    """How far back a check reads, None for `the last N points` (read by count)."""
    if check.compare is Compare.SEASONAL:
        return check.runs * WEEK_MS + int(SEASON_TOLERANCE_SECONDS * 1000)
    return None


def history_verdict(
    result: RuleResult,
    past: Sequence[Point],
    event_ms: int,
    feedback: FeedbackState = NO_FEEDBACK,
    minimums: HistoryMinimums = DEFAULT_MINIMUMS,
) -> RuleResult:
    """`result` (the engine's measurement of a history rule) judged against `past` (earlier
    points of the same rule and dataset, any order), with what users said about them
    (`feedback`: accepted runs, a rebaseline), a band only once its minimum history is kept
    (`minimums`, for rules that declare none). Errors stay errors."""
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
    base = attrs.evolve(result, measured=value, failing_rows=result.failing_rows)
    if check.compare is Compare.FRESHNESS:
        since = feedback.since_ms
        kept = [p for p in earlier if since is None or p.event_ms >= since]
        return _freshness(base, check, value, kept, event_ms)
    chosen = choose(earlier, check, feedback)
    if check.compare in (Compare.ABSOLUTE_CHANGE, Compare.RELATIVE_CHANGE):
        return _change(base, check, value, chosen)
    window = list(chosen.joined[-check.runs :])
    held = len(chosen.joined)  # a stddev rule's history: every run its baseline holds
    if check.compare is Compare.SEASONAL:
        window = _same_season(list(chosen.joined), event_ms, check.runs)
        held = len(window)  # a seasonal one's: the runs of this weekday and hour
    needed = check.needed(minimums)
    if held < needed:
        what = "runs" if check.compare is Compare.STDDEV else "runs of the same weekday and hour"
        return _too_short(base, check, held, what, chosen, needed)
    return _band(base, check, value, window, chosen)


def _too_short(
    result: RuleResult,
    check: HistoryCheck,
    has: int,
    what: str,
    chosen: Baseline | None = None,
    needed: int | None = None,
) -> RuleResult:
    account = () if chosen is None else tuple(chosen.params([], check.baseline).items())
    needed = check.min_runs if needed is None else needed
    message = f"needs {needed} {what}, has {has}"
    if needed > check.min_runs:  # the minimum history, not minRuns
        setting = f"--history-min-{check.compare.value}"
        message = (
            f"needs {needed} {what} before it can fail, has {has} kept (the minimum history "
            f"of a {check.compare.value} rule: its minHistory, or {setting})"
        )
    return attrs.evolve(
        result,
        status=Status.SKIPPED,
        actual=None,
        skip_reason=HISTORY_TOO_SHORT,
        cause=Cause.INSUFFICIENT_HISTORY,
        message=message,
        expected_text=check.describe(),
        baseline=(("runs", has), ("needed", needed), *((k, v) for k, v in account if k != "runs")),
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


def _change(result: RuleResult, check: HistoryCheck, value: float, chosen: Baseline) -> RuleResult:
    if len(chosen.joined) < check.min_runs:
        return _too_short(result, check, len(chosen.joined), "earlier run(s)", chosen)
    threshold = result.rule.threshold
    expected = f"{check.describe()} {threshold.describe()}"
    previous = chosen.joined[-1]
    quantity = _quantity(check, value, previous.value)
    newer = chosen.pending[-1] if chosen.pending else None
    if (quantity is None or not threshold.holds(quantity)) and newer is not None:
        # the runs after the baseline's latest failed: this one may confirm their new level
        confirmed = _quantity(check, value, newer.value)
        if confirmed is not None and threshold.holds(confirmed):
            account = _previous(newer, "the latest run, FAILED: this run confirms its level")
            used = [newer]
            return _judged(
                result, True, confirmed, expected, (*account, *_account(chosen, used, check))
            )
    baseline = (
        *_previous(previous, "the latest run of the baseline"),
        *_account(chosen, [previous], check),
    )
    if quantity is None:
        return attrs.evolve(
            error_result(
                result.rule,
                "the previous value is 0: no ratio to compare",
                Cause.INSUFFICIENT_HISTORY,
            ),
            measured=value,
            baseline=baseline,
        )
    return _judged(result, threshold.holds(quantity), quantity, expected, baseline)


def _quantity(check: HistoryCheck, value: float, previous: float) -> float | None:
    """The compared change: a difference, or a ratio (None: no ratio to a previous 0)."""
    if check.compare is Compare.ABSOLUTE_CHANGE:
        return value - previous
    return None if previous == 0 else value / previous


def _previous(point: Point, why: str) -> tuple[tuple[str, object], ...]:
    return (
        ("previous", point.value),
        ("previousRun", point.run_id),
        ("previousTime", _iso(point.event_ms)),
        ("previousWhy", why),
    )


def _account(
    chosen: Baseline, used: Sequence[Point], check: HistoryCheck
) -> tuple[tuple[str, object], ...]:
    return tuple(chosen.params(used, check.baseline).items())


def _band(
    result: RuleResult, check: HistoryCheck, value: float, window: list[Point], chosen: Baseline
) -> RuleResult:
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
        *_account(chosen, window, check),
    )
    passed = not math.isnan(value) and lower <= value <= upper
    expected = check.band_text(f"{lower:.6g}", f"{upper:.6g}")
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
