"""serve's garbage-collector policy (producer/gc_policy.py): what exists at the start is frozen
out of collections, automatic collections are off, and a thread collects by the clock -- a cycle
made after the start is still collected, within a tick."""

from __future__ import annotations

import gc
import threading
import weakref
from collections.abc import Iterator

import pytest

from lineage_quality.producer import gc_policy


@pytest.fixture
def restored() -> Iterator[None]:
    before = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*before)
    gc.enable()


class _Node:
    def __init__(self) -> None:
        self.me = self


def test_steady_freezes_what_exists_and_collects_by_the_clock(
    restored: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gc_policy, "EVERY", 0.05)
    kept = [{"held": [i]} for i in range(1000)]
    gc.unfreeze()
    assert gc.get_freeze_count() == 0
    stop = threading.Event()
    thread = gc_policy.steady(stop)
    try:
        assert gc.get_freeze_count() >= len(kept)  # these and everything before them
        assert not gc.isenabled()  # no collection on allocation counts
        cycle = _Node()
        gone = weakref.ref(cycle)
        del cycle
        assert gone() is not None  # a cycle: reference counting alone never frees it
        for _ in range(100):  # the clock's collection frees it
            if gone() is None:
                break
            threading.Event().wait(0.02)
        assert gone() is None
    finally:
        stop.set()
        thread.join(5)
    assert not thread.is_alive() and gc.isenabled()  # stopped: automatic collections again
