"""Kafka out's pipelined hand-over keeps each refused event's count for its retry; counts of
events that never come back (dead-lettered or deleted by another path) must not pile up."""

from __future__ import annotations

import threading
from typing import Any

from lineage_quality.producer import outbound
from lineage_quality.producer.backoff import RefusedForGood
from lineage_quality.producer.outbound import Outbound


class _Spool:
    def sending(self, item: Any) -> bool:
        return True

    def attempted(self, event_id: int) -> None:
        pass

    def reported(
        self, lane: str, event_id: int, ok: bool
    ) -> tuple[list[int], list[int], list[int]]:
        return [], [event_id], []


class _Refusing:
    pipelined = True

    def produce(self, text: str, event: Any, told: Any) -> None:
        told(RefusedForGood("too large"))


class _Item:
    def __init__(self, event_id: int) -> None:
        self.id = event_id
        self.lane = f"run-{event_id}"


def test_refusal_counts_are_bounded_and_the_newest_kept(monkeypatch: Any) -> None:
    monkeypatch.setattr(outbound, "MAX_REFUSED", 50)
    out = Outbound(_Refusing(), _Spool(), 10, lambda name: None, threading.Event())  # type: ignore[arg-type]
    for event_id in range(1, 201):
        out.send(_Item(event_id), "{}", None, ["r"], 0)  # type: ignore[arg-type]
    assert out.out == 0  # every hand-over answered
    assert len(out._refused) == 50
    assert out.refusals(200) == 1  # the newest counts are the ones kept
    assert out.refusals(1) == 0  # the oldest forgotten
