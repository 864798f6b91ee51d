"""Metric states (engine/states.py) and where they are kept (history/states.py). Pure: no Spark."""

from __future__ import annotations

import statistics
from decimal import Decimal
from pathlib import Path

import pytest

from lineage_quality.engine.states import (
    States,
    merged_key_counts,
    merged_value,
    metric_key,
    states_of,
    value_of,
    with_state_metrics,
)
from lineage_quality.engine.uniqueness import KeyCounts
from lineage_quality.evaluation.increments import files_version, scope_of, split_append
from lineage_quality.evaluation.storage import StoredFile
from lineage_quality.evaluation.written import LeftByRun, Written
from lineage_quality.history import open_history
from lineage_quality.history import states as state_store
from lineage_quality.history.states import StateStore
from lineage_quality.values.metric import ROWS, Measure, Metric

AVG = Metric(Measure.STAT, "x", arg="avg")
STDDEV = Metric(Measure.STAT, "x", arg="stddev")
NULLS = Metric(Measure.NULLS, "x")


def _state(values: list[float | None]) -> States:
    present = [v for v in values if v is not None]
    metrics = with_state_metrics([ROWS, AVG, STDDEV])
    measured = {
        ROWS: len(values),
        NULLS: len(values) - len(present),
        AVG: statistics.fmean(present) if present else None,
        STDDEV: statistics.stdev(present) if len(present) > 1 else None,
    }
    found = states_of(metrics, [measured[m] for m in metrics], [], [], len(values))
    assert found is not None
    return found


def test_avg_and_stddev_merge_to_the_whole_ones() -> None:
    a, b = [1.0, 2.0, None, 4.0], [10.0, 11.5, 3.0]
    kept, new = _state(a), _state(b)
    whole = [v for v in a + b if v is not None]
    for metric, expected in ((AVG, statistics.fmean(whole)), (STDDEV, statistics.stdev(whole))):
        key = metric_key(metric)
        merged = merged_value(metric, kept.metrics[key], new.metrics[key])
        assert value_of(metric, merged) == pytest.approx(expected, rel=1e-12)


def test_sums_stay_exact_and_bounds_ignore_empty_parts() -> None:
    total = Metric(Measure.STAT, "x", arg="sum", integral=True, wide=True)
    big = Decimal(2**70)
    assert merged_value(total, big, Decimal(1)) == big + 1
    low = Metric(Measure.STAT, "x", arg="min")
    assert merged_value(low, None, 3) == 3 and merged_value(low, 2, 3) == 2
    assert merged_value(Metric(Measure.INVALID, "x"), 4, 5) == 9


def test_key_counts_merge_less_the_keys_already_there() -> None:
    merged = merged_key_counts((100, 98), KeyCounts(10, 9), overlap=3)
    assert (merged.rows, merged.distinct, merged.duplicates) == (110, 104, 6)


def test_states_round_trip_and_refuse_another_format() -> None:
    kept = States(rows=3, metrics={"a": Decimal("12345678901234567890123"), "b": float("nan")})
    back = States.from_json(kept.to_json())
    assert back is not None and back.metrics["a"] == kept.metrics["a"]
    assert States.from_json('{"format": 99}') is None
    assert States.from_json("not json") is None


def _file(name: str, size: int, ms: int) -> StoredFile:
    return StoredFile(f"/t/{name}", f"/{name}", size, ms)


def test_the_runs_files_are_the_newest_when_they_match_its_statistics() -> None:
    old, new = _file("a", 10, 1), _file("b", 5, 2)
    left = LeftByRun(3, (new, old), ())
    split = split_append(left, Written("r", 7, 5, 1, replaced=False, version=None))
    assert split is not None and split.added == (new,) and split.before == (old,)
    # another size than the run wrote, a tie in times, or a replacing write: not sure
    assert split_append(left, Written("r", 7, 6, 1, False, None)) is None
    tied = LeftByRun(3, (_file("b", 5, 1), old), ())
    assert split_append(tied, Written("r", 7, 5, 1, False, None)) is None
    assert split_append(left, Written("r", 7, 5, 1, True, None)) is None
    assert files_version([old]) != files_version([_file("a", 10, 9)])  # rewritten: another


def test_scope_of_contracts_is_the_strictest() -> None:
    class G:
        def __init__(self, scope: str) -> None:
            self.scope = scope

    assert scope_of([G("write"), G("table")]) == "table"  # type: ignore[list-item]
    assert scope_of([G("write")]) == "write"  # type: ignore[list-item]
    assert scope_of([G("exact"), G("write")]) == "exact"  # type: ignore[list-item]


def test_state_store_keeps_the_newest_versions_of_a_dataset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = StateStore(open_history(tmp_path / "h.db"))
    monkeypatch.setattr(state_store, "PER_DATASET", 2)
    for i in range(4):
        assert store.put("d", f"v{i}", States(rows=i), "run")
    assert store.get("d", "v0") is None and store.get("d", "v1") is None
    found = store.get("d", "v3")
    assert found is not None and found[0].rows == 3 and found[1] == "run"
    monkeypatch.setattr(state_store, "MAX_STATE_BYTES", 10)
    assert not store.put("d", "v9", States(rows=1, metrics={"x": 1}), "run")
