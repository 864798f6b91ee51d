"""values/cached.py: a fact computed on first read, kept, and never computed under a lock shared
by every instance (Python 3.11's `functools.cached_property` serializes all instances' first
reads: the Kafka intake and the workers waited on each other)."""

from __future__ import annotations

import threading

from lineage_quality.values.cached import cached_property
from lineage_quality.values.event import Event


class _Slow:
    started = threading.Event()
    other_ran = threading.Event()

    def __init__(self, first: bool) -> None:
        self.first = first
        self.calls = 0

    @cached_property
    def fact(self) -> int:
        self.calls += 1
        if self.first:  # waits, mid-computation, for another instance's computation
            _Slow.started.set()
            assert _Slow.other_ran.wait(5), "the other instance's read waited on this one"
            return 1
        _Slow.other_ran.set()
        return 2


def test_two_instances_compute_at_once() -> None:
    a, b = _Slow(True), _Slow(False)
    got: list[int] = []
    thread = threading.Thread(target=lambda: got.append(a.fact))
    thread.start()
    assert _Slow.started.wait(5)
    assert b.fact == 2  # under functools' 3.11 lock this read blocked until a's 5 s ran out
    thread.join(10)
    assert got == [1]


def test_computed_once_then_kept() -> None:
    b = _Slow(False)
    assert (b.fact, b.fact, b.calls) == (2, 2, 1)
    assert "fact" in vars(b)


def test_event_facts_read_through_it() -> None:
    event = Event.of({"run": {"runId": "r1", "facets": {"parent": {"run": {"runId": "p1"}}}}})
    assert event.run_ids == ("r1", "p1")
    assert vars(event)["run_ids"] == ("r1", "p1")  # kept in the instance
