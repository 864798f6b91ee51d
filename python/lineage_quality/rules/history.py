"""How a rule compares its measurement with the past (a history rule). No Spark, no store.

A history rule measures what any rule of its metric measures (row count, null count, a statistic,
...), then compares that value with the values it measured on earlier runs of the same dataset:

- `absoluteChange`: value - previous value, against the rule's threshold (Deequ's
  AbsoluteChangeStrategy);
- `relativeChange`: value / previous value, against the threshold (Deequ's
  RelativeRateOfChangeStrategy: a drop of 40 % is 0.6);
- `stddev`: within `k` standard deviations of the mean of the last `runs` runs (Deequ's
  BatchNormalStrategy on that window);
- `seasonal`: the same, over the runs of the same weekday and hour (UTC) in the last `runs` weeks;
- `freshness`: seconds since the value last changed (no new rows, no new commits), against the
  threshold.

With fewer than `min_runs` earlier runs the result is SKIPPED with the reason, never a pass. A
stddev or seasonal rule also needs a minimum history before it can fail (`min_history`, default
`HistoryMinimums`: 7 runs in its baseline; 3 runs of the same weekday and hour): a band drawn
from 2-3 runs is too tight, and normal values fail it (docs/history.md says why these numbers).

Which earlier runs form the baseline is the rule's `baseline` (history/baseline.py): `normal`
(the default: runs judged normal or accepted as such, and a change that lasted `recover_after`
runs) or `all` (every measured run, as Deequ's strategies).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any

import attrs


class Compare(enum.Enum):
    ABSOLUTE_CHANGE = "absoluteChange"
    RELATIVE_CHANGE = "relativeChange"
    STDDEV = "stddev"
    SEASONAL = "seasonal"
    FRESHNESS = "freshness"

    @property
    def uses_threshold(self) -> bool:
        """Kinds whose compared quantity is checked against the rule's threshold (the band of
        stddev and seasonal comes from `k` instead)."""
        return self not in (Compare.STDDEV, Compare.SEASONAL)


class BaselineMode(enum.Enum):
    NORMAL = "normal"  # normal runs: passed, accepted, or part of a lasting change
    ALL = "all"  # every measured run (Deequ's strategies)


# Defaults: the previous run for changes; a week of daily runs for stddev; four weeks for seasonal.
_DEFAULT_RUNS = {
    Compare.ABSOLUTE_CHANGE: 1,
    Compare.RELATIVE_CHANGE: 1,
    Compare.STDDEV: 7,
    Compare.SEASONAL: 4,
    Compare.FRESHNESS: 1,
}
MAX_RUNS = 1000  # the longest window a rule may ask for (bounds what one evaluation reads)
DEFAULT_RECOVER_AFTER = 3  # consecutive failed runs after which they join the baseline
SEASON_TOLERANCE_SECONDS = 1800.0  # a run counts as "the same hour" within half an hour of it


# The minimum history of a band (docs/history.md, "The minimum history"): with n runs the band
# mean ± 3 sd lets a normal value fall outside with the probability P(|t(n-1)| > 3 / sqrt(1 +
# 1/n)): 25 % at 2 runs, 12 % at 3, 3 % at 7 (0.3 % with no estimation at all).
DEFAULT_MIN_STDDEV = 7  # runs in the baseline: a week of daily runs, every weekday in it
DEFAULT_MIN_SEASONAL = 3  # runs of the same weekday and hour: three weeks of daily runs


@attrs.frozen
class HistoryMinimums:
    """The minimum history of the stddev and seasonal rules that declare none (`minHistory`):
    `serve --history-min-stddev / --history-min-seasonal`, `check`'s and `attach`'s alike."""

    stddev: int = attrs.field(default=DEFAULT_MIN_STDDEV)
    seasonal: int = attrs.field(default=DEFAULT_MIN_SEASONAL)

    @stddev.validator
    @seasonal.validator
    def _check(self, attribute: attrs.Attribute[int], value: int) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or not 2 <= value <= MAX_RUNS:
            raise ValueError(
                f"the minimum history of a {attribute.name} rule must be a whole number from 2 "
                f"to {MAX_RUNS} (runs), not {value!r}"
            )


DEFAULT_MINIMUMS = HistoryMinimums()


def _positive_int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_RUNS:
        raise ValueError(f"history {name} must be a whole number from 1 to {MAX_RUNS}")
    return value


@attrs.frozen
class HistoryCheck:
    compare: Compare
    runs: int  # the window: earlier runs (stddev), weeks (seasonal)
    min_runs: int  # fewer earlier runs than this: SKIPPED
    k: float = 3.0  # standard deviations (stddev, seasonal)
    baseline: BaselineMode = BaselineMode.NORMAL
    recover_after: int = DEFAULT_RECOVER_AFTER  # a streak this long of failed runs joins
    min_history: int | None = None  # stddev, seasonal: before it, SKIPPED; None: the setting's

    def needed(self, minimums: HistoryMinimums = DEFAULT_MINIMUMS) -> int:
        """The runs a verdict needs: `min_runs`, and for a band (stddev, seasonal) at least
        its minimum history (a seasonal one at most `runs`: the weeks its window holds)."""
        if self.compare is Compare.STDDEV:
            floor = minimums.stddev if self.min_history is None else self.min_history
            return max(self.min_runs, floor)
        if self.compare is Compare.SEASONAL:
            floor = minimums.seasonal if self.min_history is None else self.min_history
            return max(self.min_runs, min(floor, self.runs))
        return self.min_runs

    @property
    def judges_level(self) -> bool:
        """Kinds whose baseline is a set of earlier values (stddev, seasonal), not one run."""
        return self.compare in (Compare.STDDEV, Compare.SEASONAL)

    def band_text(self, lower: str, upper: str) -> str:
        """A band verdict's expected text, its ends as shown (numbers, or masked:
        masked_values.py)."""
        return f"between {lower} and {upper} ({self.describe()})"

    def describe(self) -> str:
        if self.compare is Compare.STDDEV:
            return f"within {self.k:g} sd of the last {self.runs} runs"
        if self.compare is Compare.SEASONAL:
            return f"within {self.k:g} sd of the same weekday and hour, last {self.runs} weeks"
        return {
            Compare.ABSOLUTE_CHANGE: "change from the previous run",
            Compare.RELATIVE_CHANGE: "ratio to the previous run",
            Compare.FRESHNESS: "seconds since the value last changed",
        }[self.compare]

    def params(self) -> dict[str, Any]:
        return {
            "compare": self.compare.value,
            "runs": self.runs,
            "minRuns": self.min_runs,
            **({"k": self.k} if not self.compare.uses_threshold else {}),
            # only when not the defaults: the params are part of a DataHub assertion's identity,
            # which a rule declared before these settings existed keeps
            **(
                {"baseline": self.baseline.value}
                if self.baseline is not BaselineMode.NORMAL
                else {}
            ),
            **(
                {"recoverAfter": self.recover_after}
                if self.recover_after != DEFAULT_RECOVER_AFTER
                else {}
            ),
            **({"minHistory": self.min_history} if self.min_history is not None else {}),
        }


def parse_history(value: Any) -> HistoryCheck:
    """The `lineageQuality.history` custom property (ODCS) or `history` key (JSON rules):
    `{compare: stddev, runs: 7, k: 3, minRuns: 5, baseline: normal, recoverAfter: 3,
    minHistory: 7}`, or just the compare name."""
    if isinstance(value, str):
        value = {"compare": value}
    if not isinstance(value, Mapping):
        raise ValueError("history must be an object such as {compare: stddev, runs: 7}")
    unknown = sorted(str(k) for k in value if k not in HISTORY_KEYS)
    if unknown:
        raise ValueError(f"unknown history key(s) {', '.join(unknown)} ({', '.join(HISTORY_KEYS)})")
    names = ", ".join(c.value for c in Compare)
    try:
        compare = Compare(value.get("compare"))
    except ValueError:
        raise ValueError(f"history compare must be one of {names}") from None
    runs = _positive_int(value.get("runs", _DEFAULT_RUNS[compare]), "runs")
    if compare in (Compare.STDDEV, Compare.SEASONAL) and runs < 2:
        raise ValueError("a standard deviation needs a window of at least 2 runs")
    min_runs = _positive_int(value.get("minRuns", runs), "minRuns")
    if min_runs > runs:
        raise ValueError(f"history minRuns ({min_runs}) is more than runs ({runs})")
    if compare in (Compare.STDDEV, Compare.SEASONAL) and min_runs < 2:
        raise ValueError("a standard deviation needs minRuns of at least 2")
    k = value.get("k", 3.0)
    if isinstance(k, bool) or not isinstance(k, (int, float)) or not 0 < k <= 100:
        raise ValueError("history k must be a number above 0 (standard deviations)")
    if "k" in value and compare.uses_threshold:
        raise ValueError(f"history k applies to stddev and seasonal, not {compare.value}")
    modes = ", ".join(m.value for m in BaselineMode)
    try:
        mode = BaselineMode(value.get("baseline", BaselineMode.NORMAL.value))
    except ValueError:
        raise ValueError(f"history baseline must be one of {modes}") from None
    recover_after = _positive_int(value.get("recoverAfter", DEFAULT_RECOVER_AFTER), "recoverAfter")
    if compare is Compare.FRESHNESS and ("baseline" in value or "recoverAfter" in value):
        raise ValueError("a freshness history rule reads every run: it takes no baseline")
    if mode is BaselineMode.ALL and "recoverAfter" in value:
        raise ValueError("history recoverAfter applies to baseline: normal, not all")
    min_history = None
    if "minHistory" in value:
        if compare.uses_threshold:
            raise ValueError(
                f"history minHistory applies to stddev and seasonal, not {compare.value}"
            )
        min_history = _positive_int(value["minHistory"], "minHistory")
        if min_history < 2:
            raise ValueError("a standard deviation needs minHistory of at least 2")
        if compare is Compare.SEASONAL and min_history > runs:
            raise ValueError(
                f"history minHistory ({min_history}) is more than runs ({runs}): a seasonal "
                "window holds one run of each weekday and hour per week"
            )
    return HistoryCheck(compare, runs, min_runs, float(k), mode, recover_after, min_history)


HISTORY_KEYS = ("compare", "runs", "minRuns", "k", "baseline", "recoverAfter", "minHistory")
