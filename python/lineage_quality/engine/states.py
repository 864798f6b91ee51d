"""Metric states: what an evaluation keeps of a dataset version so that the next append is judged
on its own rows and the table's numbers still come out exact. Pure.

Deequ's incremental computation keeps each analyzer's state per partition and merges them; here
one evaluation's state is read off the values its scan already returned (no extra aggregate but
a non-null count beside an average or a deviation, `with_state_metrics`), and merging the kept
state of the version before with the state of the run's own rows gives the table's values:

    rows, offending-row counts, null counts   added
    sum                                       added (exact: ints and decimals stay exact)
    min, max                                  the smaller / larger
    avg                                       weighted by the non-null counts
    stddev (sample)                           Chan's parallel formula on (n, mean, M2)
    a key set's (rows, distinct keys)         added, less the new keys already in the table
                                              (counted by the caller: engine/increment.py)

A metric that has no such state (a median, a freshness count that moves with the clock, a
kind's own analyzer, a `type: sql` query) makes `mergeable` false: the version is then scanned
whole, and its state kept for the next one.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

import attrs

from lineage_quality.engine.uniqueness import KeyCounts
from lineage_quality.values.metric import Measure, Metric

# Kinds whose value is a count of rows: two versions' counts add up.
_ADDED = frozenset(
    {
        Measure.ROWS,
        Measure.NULLS,
        Measure.MISSING,
        Measure.INVALID,
        Measure.OUT_OF_RANGE,
        Measure.LENGTH_OUT,
        Measure.CARDINALITY_OUT,
        Measure.BAD_DATE,
    }
)
_STATISTICS = frozenset({"sum", "min", "max", "avg", "stddev"})  # not the median: no exact merge
STATE_FORMAT = 1  # bumped when a state's meaning changes: an older one is never merged


def metric_key(metric: Metric) -> str:
    """A stable name for `metric` across processes (its fields, not its analyzer object)."""
    fields = attrs.asdict(metric, filter=lambda a, _: a.name != "measure", recurse=False)
    kind = metric.kind.value if isinstance(metric.kind, Measure) else f"kind:{metric.kind}"
    fields["kind"] = kind
    text = json.dumps(fields, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def key_set_key(columns: Sequence[str]) -> str:
    return "keys:" + json.dumps(sorted(columns))


def mergeable(metric: Metric) -> bool:
    """Whether `metric`'s value over a table follows from the values over its parts."""
    if metric.kind in _ADDED:
        return True
    return metric.kind is Measure.STAT and metric.arg in _STATISTICS


def with_state_metrics(metrics: Sequence[Metric]) -> list[Metric]:
    """`metrics`, plus what their states need and the plan may lack: the non-null count (NULLS)
    of a column whose average or deviation is measured, and the average of one whose deviation
    is. Appended after the plan's own, so the plan's indices stay valid."""
    out = list(metrics)
    seen = set(out)
    for metric in metrics:
        if metric.kind is not Measure.STAT or metric.arg not in ("avg", "stddev"):
            continue
        needed = [Metric(Measure.NULLS, metric.column)]
        if metric.arg == "stddev":
            needed.append(attrs.evolve(metric, arg="avg"))
        for extra in needed:
            if extra not in seen:
                seen.add(extra)
                out.append(extra)
    return out


@attrs.frozen
class States:
    """A version's kept states: each metric's value (by `metric_key`) with what merging it needs,
    each key set's (rows, distinct) counts, and the version's row count."""

    rows: int
    metrics: Mapping[str, Any] = attrs.field(factory=dict)
    key_sets: Mapping[str, tuple[int, int]] = attrs.field(factory=dict)
    merged: int = 0  # how many appends were merged into it since the last whole scan

    def covers(self, metrics: Sequence[Metric], key_sets: Sequence[Sequence[str]]) -> bool:
        """Whether every metric and key set asked for has a kept state here."""
        return all(metric_key(m) in self.metrics for m in metrics) and all(
            key_set_key(k) in self.key_sets for k in key_sets
        )

    def to_json(self) -> str:
        return json.dumps(
            {
                "format": STATE_FORMAT,
                "rows": self.rows,
                "metrics": {k: _encoded(v) for k, v in self.metrics.items()},
                "keySets": {k: list(v) for k, v in self.key_sets.items()},
                "merged": self.merged,
            },
            sort_keys=True,
            allow_nan=False,
        )

    @classmethod
    def from_json(cls, text: str) -> States | None:
        """The states in `text`, None when they are not of this format (never merged then)."""
        try:
            doc = json.loads(text)
            if doc.get("format") != STATE_FORMAT:
                return None
            return cls(
                rows=int(doc["rows"]),
                metrics={k: _decoded(v) for k, v in doc["metrics"].items()},
                key_sets={k: (int(v[0]), int(v[1])) for k, v in doc["keySets"].items()},
                merged=int(doc.get("merged", 0)),
            )
        except (ValueError, KeyError, TypeError, AttributeError, IndexError):
            return None


def states_of(
    metrics: Sequence[Metric],
    values: Sequence[Any],
    key_sets: Sequence[Sequence[str]],
    counted: Sequence[KeyCounts | Exception],
    rows: int,
) -> States | None:
    """The states of one evaluation (`values`: the metrics' values, as the scan gave them); None
    when a value failed (an error is never kept as a state)."""
    found: dict[str, Any] = {}
    by_metric = dict(zip(metrics, values, strict=True))
    for metric, value in by_metric.items():
        if isinstance(value, Exception):
            return None
        if not mergeable(metric):
            continue
        state: Any = value
        if metric.kind is Measure.STAT and metric.arg in ("avg", "stddev"):
            nulls = by_metric.get(Metric(Measure.NULLS, metric.column))
            if nulls is None or isinstance(nulls, Exception):
                continue
            n = rows - int(nulls)
            if metric.arg == "avg":
                state = [value, n]
            else:
                mean = by_metric.get(attrs.evolve(metric, arg="avg"))
                if (mean is None and n > 0) or isinstance(mean, Exception):
                    continue
                state = [value, mean, n]
        found[metric_key(metric)] = state
    keys: dict[str, tuple[int, int]] = {}
    for columns, count in zip(key_sets, counted, strict=True):
        if isinstance(count, Exception):
            return None
        keys[key_set_key(columns)] = (count.rows, count.distinct)
    return States(rows=rows, metrics=found, key_sets=keys)


def merged_value(metric: Metric, kept: Any, new: Any) -> Any:
    """`metric`'s state over the table from the kept state and the run's rows' state."""
    if metric.kind in _ADDED:
        return int(kept) + int(new)
    arg = metric.arg
    if arg == "sum":
        if kept is None or new is None:
            return new if kept is None else kept
        return _add(kept, new)
    if arg in ("min", "max"):
        present = [v for v in (kept, new) if v is not None]
        if not present:
            return None
        return min(present) if arg == "min" else max(present)
    if arg == "avg":
        (a1, n1), (a2, n2) = kept, new
        n = n1 + n2
        if n == 0:
            return [None, 0]
        return [((a1 or 0.0) * n1 + (a2 or 0.0) * n2) / n, n]
    if arg == "stddev":
        return _merged_deviation(kept, new)
    raise ValueError(f"no merge for {metric}")


def value_of(metric: Metric, state: Any) -> Any:
    """The value the plan's slot holds for `metric`, from its state."""
    if metric.kind is Measure.STAT and metric.arg in ("avg", "stddev"):
        return state[0]
    return state


def merged_key_counts(kept: tuple[int, int], new: KeyCounts, overlap: int) -> KeyCounts:
    """A key set's counts over the table: the kept and the run's rows added; `overlap` of the
    run's distinct keys were already in the table."""
    rows, distinct = kept
    return KeyCounts(rows + new.rows, distinct + new.distinct - overlap)


def _add(a: Any, b: Any) -> Any:
    if isinstance(a, float) or isinstance(b, float):
        return float(a) + float(b)
    return Decimal(a) + Decimal(b) if isinstance(a, Decimal) or isinstance(b, Decimal) else a + b


def _merged_deviation(kept: Sequence[Any], new: Sequence[Any]) -> list[Any]:
    """(sample stddev, mean, n) of the union of two parts, from each part's own."""
    s1, m1, n1 = kept
    s2, m2, n2 = new
    if n1 == 0:
        return list(new)
    if n2 == 0:
        return list(kept)
    m2_1 = (s1 or 0.0) ** 2 * (n1 - 1) if n1 > 1 else 0.0
    m2_2 = (s2 or 0.0) ** 2 * (n2 - 1) if n2 > 1 else 0.0
    n = n1 + n2
    delta = float(m2) - float(m1)
    mean = float(m1) + delta * n2 / n
    total = m2_1 + m2_2 + delta * delta * n1 * n2 / n
    deviation = math.sqrt(total / (n - 1)) if n > 1 else None
    return [deviation, mean, n]


def _encoded(value: Any) -> Any:
    """A state as JSON: decimals and non-finite floats as tagged text (exact, and valid JSON)."""
    if isinstance(value, list):
        return [_encoded(v) for v in value]
    if isinstance(value, Decimal):
        return {"decimal": str(value)}
    if isinstance(value, float) and not math.isfinite(value):
        return {"float": repr(value)}
    return value


def _decoded(value: Any) -> Any:
    if isinstance(value, list):
        return [_decoded(v) for v in value]
    if isinstance(value, dict):
        if "decimal" in value:
            return Decimal(value["decimal"])
        return float(value["float"])
    return value
