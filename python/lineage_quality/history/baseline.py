"""Which earlier runs a history rule compares with (its baseline), and which it leaves out and
why. Pure; docs/history.md "Which runs form the baseline" says the same in prose.

`baseline: normal` (the default), from the earlier runs with a finite value since the rule's
latest rebaseline:
- a run that PASSED, or was SKIPPED for too little history, joins;
- a FAILED run that a user accepted (`history accept`, not undone) joins;
- a FAILED run of a stddev or seasonal rule within twice its band (mean ± 2k sd) joins: the band,
  from few runs or from runs that happened to be close, was too tight for a normal value;
- a FAILED run that is one of `recover_after` (default 3) or more failed runs in a row joins,
  with the whole streak: a change that lasts (a new level, or a band that started too tight and
  keeps failing normal values) becomes the baseline instead of failing run after run;
- any other FAILED run is left out: an isolated anomaly fails once and skews nothing after it.
The failed runs after the last joined one (fewer than `recover_after`) are `pending`: a change
rule also compares with the latest of them (a new level confirmed by the next run), so neither a
spike nor one legitimate jump fails the runs after it.

`baseline: all`: every earlier run since the rebaseline, whatever its verdict (Deequ's
strategies: the previous run, the last N runs).
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from lineage_quality.history.feedback import FeedbackState
from lineage_quality.history.points import Point
from lineage_quality.history.times import iso_ms
from lineage_quality.results import Status
from lineage_quality.rules.history import BaselineMode, HistoryCheck

LISTED = 10  # runs named in params.baseline's lists (the latest); the rest are counted


@attrs.frozen
class Baseline:
    """The runs a rule may compare with (`joined`), the ones left out and why, and the failed
    runs since the latest joined one (`pending`)."""

    joined: tuple[Point, ...]  # oldest first
    left_out: tuple[tuple[Point, str], ...]  # oldest first, with why
    pending: tuple[Point, ...]  # failed runs after the latest joined one, not joined (yet)
    why_joined: tuple[tuple[str, str], ...] = ()  # (run id, why) of failed runs that joined
    since_ms: int | None = None

    def params(self, used: Sequence[Point], mode: BaselineMode) -> dict[str, object]:
        """params.baseline's account of it: the runs `used` (the window the verdict read), and
        those left out since the oldest of them (the latest LISTED of each list, and counts)."""
        oldest = min((p.event_ms for p in used), default=None)
        out: dict[str, object] = {"mode": mode.value}
        if self.since_ms is not None:
            out["since"] = iso_ms(self.since_ms, "milliseconds")  # rebaselined: none before
        if used:
            out["runIds"] = [p.run_id for p in used[-LISTED:]]
            out["from"] = iso_ms(used[0].event_ms, "milliseconds")
            out["to"] = iso_ms(used[-1].event_ms, "milliseconds")
        ids = {p.run_id for p in used}
        joined = [{"run": run, "why": why} for run, why in self.why_joined if run in ids]
        if joined:
            out["failedButJoined"] = joined[-LISTED:]
        left = [
            {"run": p.run_id, "time": iso_ms(p.event_ms, "milliseconds"), "value": p.value,
             "why": why}
            for p, why in self.left_out
            if (oldest is None or p.event_ms >= oldest) and p.run_id not in ids
        ]  # fmt: skip
        if left:
            out["leftOut"] = left[-LISTED:]
            out["leftOutCount"] = len(left)
        return out


def choose(earlier: Sequence[Point], check: HistoryCheck, feedback: FeedbackState) -> Baseline:
    """The baseline of `check` among `earlier` (finite values, oldest first)."""
    since = feedback.since_ms
    candidates = [p for p in earlier if since is None or p.event_ms >= since]
    if check.baseline is BaselineMode.ALL:
        return Baseline(tuple(candidates), (), (), (), since)
    joined: list[Point] = []
    left: list[tuple[Point, str]] = []
    why_joined: list[tuple[str, str]] = []
    streak: list[Point] = []

    def close(streak: list[Point], final: bool) -> None:
        if len(streak) >= check.recover_after:
            why = f"{len(streak)} failed runs in a row: a lasting change"
            joined.extend(streak)
            why_joined.extend((p.run_id, why) for p in streak)
        elif not final:
            why = (
                f"FAILED: an isolated anomaly ({len(streak)} failed run(s) in a row; "
                f"a change joins after {check.recover_after})"
            )
            left.extend((p, why) for p in streak)

    for point in candidates:
        if point.status == Status.FAILED.value and point.run_id in feedback.accepted:
            close(streak, final=False)
            streak = []
            joined.append(point)
            who = dict(feedback.accepted_by).get(point.run_id, "")
            why_joined.append((point.run_id, f"accepted as normal by {who}".rstrip()))
        elif point.status == Status.FAILED.value and check.judges_level and _marginal(point):
            close(streak, final=False)
            streak = []
            joined.append(point)
            why_joined.append(
                (point.run_id, "FAILED within twice its band: the band was too tight")
            )
        elif point.status == Status.FAILED.value:
            streak.append(point)
        else:
            close(streak, final=False)
            streak = []
            joined.append(point)
    close(streak, final=True)
    pending: tuple[Point, ...] = ()
    if len(streak) < check.recover_after:
        pending = tuple(streak)
        left.extend(
            (
                p,
                f"FAILED: {len(streak)} failed run(s) in a row so far; a change joins after "
                f"{check.recover_after}",
            )
            for p in streak
        )
    joined.sort(key=lambda p: p.event_ms)
    left.sort(key=lambda pw: pw[0].event_ms)
    return Baseline(tuple(joined), tuple(left), pending, tuple(why_joined), since)


def _marginal(point: Point) -> bool:
    """A failed value within twice its band (mean ± 2k sd): a normal value the band, formed from
    few runs or from runs that happened to be close, was too tight for."""
    if point.lower is None or point.upper is None:
        return False
    half = (point.upper - point.lower) / 2
    return point.lower - half <= point.value <= point.upper + half
