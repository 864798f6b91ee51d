"""serve's garbage-collector policy (producer/gc_policy.py): what exists at the start is frozen
out of collections and the youngest generation is collected less often."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from lineage_quality.producer import gc_policy


@pytest.fixture
def restored() -> Iterator[None]:
    before = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*before)


def test_steady_freezes_what_exists_and_collects_less_often(restored: None) -> None:
    kept = [{"held": [i]} for i in range(1000)]
    gc.unfreeze()
    assert gc.get_freeze_count() == 0
    gc_policy.steady()
    assert gc.get_freeze_count() >= len(kept)  # these and everything before them
    assert gc.get_threshold() == (gc_policy.YOUNGEST, *gc_policy.OLDER)
    assert gc_policy.YOUNGEST > 700  # CPython's default, the cost measured
    cycle: list[object] = []
    cycle.append(cycle)
    del cycle
    assert gc.collect() >= 1  # a cycle made after the start is still collected
