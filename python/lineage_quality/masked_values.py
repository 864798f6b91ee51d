"""A masked column's values in verdicts: an order statistic (min, max, median) of a column the
contract masks is one row's raw value, so every output shows it masked as that column's
failing-row samples are (lineage_quality.samples; docs/rules.md, "Failing-row samples"). Pure.

Applied where results leave an evaluation (evaluation/evaluator.py, cli/check.py): after the
history step, which judges history rules on the raw value and keeps it (a baseline needs it;
`kept_text` gives the store the masked text its readers show instead), and before any output.
The verdict was judged on the raw value: only what is shown changes.

- A statistic rule's `actual`: `observed` holds the masked text (`hmac:` and 16 hex digits, or
  `***`) and `actual` no number, so every output shows that text or no number at all.
- A history rule on such a statistic: its `measured` value is left out, and so are the numbers
  in the value's own terms (the previous value, the band's mean and ends, the left-out runs'
  values: masked) and the band in the expected text; a change, a ratio or an age is no row's
  value and stays.
- The evaluation's `measures` (`dataQualityMetrics`): the column's min, max and median are left
  out (a facet's number has no masked form).

An aggregate of many rows (avg, sum, stddev, counts, percentages) is no row's value: as it is.
Masking twice changes nothing (a masked number is text), so verdicts kept for reuse before a
column was classified are masked on their way out too.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from lineage_quality.measures import DatasetMeasures
from lineage_quality.results import RuleResult
from lineage_quality.rules import Rule
from lineage_quality.samples import Masking, SamplePolicy, Sampling

STATISTIC = "statistic"  # the rule kind whose value may be one row's (kinds/statistic.py)
ORDER_STATISTICS = frozenset({"min", "max", "median"})
# A history verdict's baseline entries in the value's own terms (history/verdicts.py), and the
# list of runs left out of the baseline, each with its value (history/baseline.py).
VALUE_TERMS = frozenset({"previous", "mean", "lower", "upper"})
LEFT_OUT = "leftOut"


def masked_column(rule: Rule, policy: SamplePolicy) -> str | None:
    """The masked column whose row's value `rule` measures (an order statistic), or None."""
    column = rule.column
    if rule.kind.value != STATISTIC or rule.statistic not in ORDER_STATISTICS or column is None:
        return None
    return None if policy.masking(column) == Masking.SHOW else column


def kept_text(result: RuleResult, sampling: Sampling) -> str | None:
    """How the history's readers show the value kept of `result` (the raw one is kept for the
    baselines): its masked text, or None where the value is shown as it is."""
    column = masked_column(result.rule, sampling.policy)
    if column is None:
        return None
    value = result.measured if result.measured is not None else result.actual
    return None if value is None else sampling.shown(column, _whole(value))


def masked_results(results: Sequence[RuleResult], sampling: Sampling) -> list[RuleResult]:
    """`results` as outputs may show them (the module docstring). The results of one scan share
    one `measures` object, and still do (producer/enrich.py tells scans apart by it)."""
    if all(how == Masking.SHOW for _, how in sampling.policy.masks):
        return list(results)
    measures: dict[int, DatasetMeasures] = {}
    out = []
    for result in results:
        found = result.measures
        if found is not None and id(found) not in measures:
            measures[id(found)] = masked_measures(found, sampling.policy)
        result = masked_result(result, sampling)
        if found is not None:
            result = attrs.evolve(result, measures=measures[id(found)])
        out.append(result)
    return out


def masked_result(result: RuleResult, sampling: Sampling) -> RuleResult:
    """One verdict as outputs may show it (its `measures` aside: `masked_measures`)."""
    column = masked_column(result.rule, sampling.policy)
    if column is None:
        return result

    def shown(value: object) -> object:
        if isinstance(value, bool) or not isinstance(value, int | float):
            return value  # masked already, or no number
        return sampling.shown(column, _whole(value))

    changes: dict[str, Any] = {"measured": None}
    check = result.rule.history
    # the value itself, not a change, a ratio or an age of it
    if result.actual is not None and (check is None or check.judges_level):
        changes.update(actual=None, observed=shown(result.actual))
    if result.baseline is not None:
        baseline = tuple((k, _entry(k, v, shown)) for k, v in result.baseline)
        changes["baseline"] = baseline
        ends = dict(result.baseline)
        lower, upper = ends.get("lower"), ends.get("upper")
        if check is not None and result.expected_text is not None and _number(lower, upper):
            changes["expected_text"] = check.band_text(str(shown(lower)), str(shown(upper)))
    return attrs.evolve(result, **changes)


def _entry(key: str, value: object, shown: Callable[[object], object]) -> object:
    if key in VALUE_TERMS:
        return shown(value)
    if key == LEFT_OUT and isinstance(value, list | tuple):
        return [
            {**run, "value": shown(run.get("value"))} if isinstance(run, dict) else run
            for run in value
        ]
    return value


def _whole(value: int | float) -> int | float:
    """A whole number as an int: the store keeps values as doubles, and an integer column's
    987653 must hash as its 987653.0 read back (a previous value, a band) does."""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return value


def _number(*values: object) -> bool:
    return all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)


def masked_measures(measures: DatasetMeasures, policy: SamplePolicy) -> DatasetMeasures:
    """`measures` without the min, max and median of masked columns (a column left with no
    number is left out); the same object when nothing is masked."""
    columns = []
    changed = False
    for name, found in measures.columns:
        order = (found.min, found.max, found.median)
        if policy.masking(name) != Masking.SHOW and any(v is not None for v in order):
            changed = True
            found = attrs.evolve(found, min=None, max=None, median=None)
            if found.empty:
                continue
        columns.append((name, found))
    return attrs.evolve(measures, columns=tuple(columns)) if changed else measures
