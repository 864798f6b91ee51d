"""An event is parsed once (issue 27.2): the receiver's parse, with numbers as written, is what the
worker evaluates, enriches and hands to the forwarder; nothing parses the event again on the way.
Before, an evaluated COMPLETE went text -> dict -> text -> dict -> tree -> text -> dict."""

from __future__ import annotations

import http.client
import json
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from lineage_quality import rawjson
from lineage_quality.engine import verdict
from lineage_quality.kinds import RuleKind
from lineage_quality.producer import Producer, Spool
from lineage_quality.producer import spooled as spooled_module
from lineage_quality.producer.settings import Settings
from lineage_quality.results import RuleResult
from lineage_quality.rules import Operator, Rule, Threshold
from lineage_quality.values.refs import DatasetRef

OUT = DatasetRef("outputs", 0, "file", "/out")
RULE = Rule(
    id="n", kind=RuleKind.NULL_VALUES, columns=["a"], threshold=Threshold(Operator.MUST_BE, 0)
)


def complete(run: str) -> str:
    return (
        json.dumps(
            {
                "eventType": "COMPLETE",
                "eventTime": "2026-11-22T06:00:00.000Z",
                "producer": "p",
                "run": {"runId": run},
                "job": {"namespace": "n", "name": "j"},
                "outputs": [
                    {
                        "namespace": "file",
                        "name": "/out",
                        "outputFacets": {"outputStatistics": {"rowCount": 5, "size": 1.50}},
                    }
                ],
            }
        ).replace("1.5", "1.50")
        + "\n"
    )  # a number a plain parse would not write back as written


class Evaluator:
    """Binds the output of every COMPLETE; remembers each event it was given."""

    def __init__(self) -> None:
        self.seen: list[Mapping[str, Any]] = []

    def bound(self, event: Mapping[str, Any]) -> dict[DatasetRef, list[Any]]:
        return {OUT: [object()]} if event.get("eventType") == "COMPLETE" else {}

    def evaluate_each(
        self, event: Mapping[str, Any], job_group: str, bound: Any
    ) -> Iterator[tuple[DatasetRef, list[RuleResult]]]:
        self.seen.append(event)
        yield OUT, [verdict(RULE, 0, 5)]


class Sink:
    def __init__(self) -> None:
        self.sent: list[str] = []

    def send(self, body: str) -> None:
        self.sent.append(body)

    def close(self) -> None:
        pass


def test_an_evaluated_complete_is_parsed_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parses: list[str] = []
    real_loads = rawjson.loads

    def counting(text: str) -> Any:
        parses.append(text)
        return real_loads(text)

    monkeypatch.setattr(rawjson, "loads", counting)
    monkeypatch.setattr(spooled_module, "parse", lambda body: pytest.fail("parsed again"))
    evaluator, sink = Evaluator(), Sink()
    producer = Producer(evaluator, sink, Spool(tmp_path / "s.db"), Settings.of(port=0))  # type: ignore[arg-type]
    producer.start()
    try:
        conn = http.client.HTTPConnection(*producer.receiver.address, timeout=10)
        body = complete("0190e6f0-0000-7000-8000-000000000001")
        conn.request("POST", "/api/v1/lineage", body, {"Content-Type": "application/json"})
        assert conn.getresponse().status == 201
        deadline = time.monotonic() + 10
        while not sink.sent and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        producer.stop()
    assert len(parses) == 1  # the receiver's, and no other
    (seen,) = evaluator.seen
    assert seen == real_loads(body)  # the evaluation got the receiver's parse (numbers as text)
    (text,) = sink.sent
    assert "dataQualityAssertions" in text  # enriched
    assert '"size":1.50' in text  # numbers as written


def test_an_evaluated_complete_is_bound_once(tmp_path: Path) -> None:
    """Issue 38: the binding of an event's datasets is computed once, at the intake, and the
    worker and the evaluation take it from the event's envelope."""
    calls: list[Any] = []

    class Counting(Evaluator):
        def bound(self, event: Mapping[str, Any]) -> dict[DatasetRef, list[Any]]:
            calls.append(event.get("eventType"))
            return super().bound(event)

    evaluator, sink = Counting(), Sink()
    producer = Producer(evaluator, sink, Spool(tmp_path / "s.db"), Settings.of(port=0))  # type: ignore[arg-type]
    producer.start()
    try:
        body = complete("0190e6f0-0000-7000-8000-000000000002")
        producer._accept(body, rawjson.loads(body))
        assert producer.spool.wait_empty(timeout=10)
    finally:
        producer.stop()
    assert calls == ["COMPLETE"]
    (text,) = sink.sent
    assert "dataQualityAssertions" in text


def test_the_in_driver_intake_hands_the_worker_its_parse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In-driver mode (driver/runtime.py): the receiver's parse travels in the envelope through
    the own-runs filter and the spool to the worker; before, the spool got the text alone and
    the worker parsed it again."""
    from lineage_quality.driver.runtime import OwnRunIntake

    parses: list[str] = []
    real_loads = rawjson.loads

    def counting(text: str) -> Any:
        parses.append(text)
        return real_loads(text)

    monkeypatch.setattr(rawjson, "loads", counting)
    monkeypatch.setattr(spooled_module, "parse", lambda body: pytest.fail("parsed again"))
    spool = Spool(tmp_path / "s.db")
    intake = OwnRunIntake(spool, hold_seconds=60, on_first_event=lambda: None)
    body = complete("0190e6f0-0000-7000-8000-000000000003")
    intake.accept(body, None)  # the in-driver receiver hands over its text: parsed here, once
    intake.release_held()  # a COMPLETE without job details is held until the run is known
    item = spool.claim(timeout=5)
    assert item is not None and item.body == body
    envelope = spooled_module.opened(item)  # what the worker works on
    assert envelope.tree == real_loads(body) and envelope.complete
    assert envelope.run_ids == ("0190e6f0-0000-7000-8000-000000000003",)
    assert len(parses) == 1
