"""Nothing accepted is stuck (issue 44): ordinary data (a NaN, an infinity), an odd string (a lone
surrogate), a huge integer or a dataset listed many times never holds a worker; every accepted
event reaches the sink or the dead letters, promptly.

On 465917b the first three looped forever ("unexpected error handling event N; retrying it" every
0.5 s): the sink never got the event (these tests then fail on their deadline).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from faultkit import AMOUNTS_CONTRACT, RawSink, Sender, make_event
from openlineage.client.transport.file import FileConfig, FileTransport
from openlineage.client.transport.http import HttpConfig, HttpTransport

from lineage_quality.contracts import load_contracts
from lineage_quality.history.store import open_history
from lineage_quality.producer import Evaluator, Forwarder, Producer, Spool
from lineage_quality.producer.backoff import Backoff
from lineage_quality.producer.settings import Settings

pytestmark = pytest.mark.spark


@pytest.fixture
def raw_sink() -> Iterator[RawSink]:
    s = RawSink()
    yield s
    s.close()


@pytest.fixture(scope="module")
def amounts(tmp_path_factory: pytest.TempPathFactory, spark: Any) -> Path:
    """A float column holding NaN and Infinity, as real data does."""
    path = tmp_path_factory.mktemp("poison") / "amounts"
    rows = [(1, 1.0), (2, float("nan")), (3, float("inf")), (4, 2.0)]
    spark.createDataFrame(rows, "id INT, amount DOUBLE").write.parquet(str(path))
    return path


def _producer(
    tmp_path: Path, spark: Any, path: Path, transport: Any, history: Any = None
) -> Producer:
    folder = tmp_path / "contracts"
    folder.mkdir(exist_ok=True)
    (folder / "amounts.yaml").write_text(AMOUNTS_CONTRACT.format(path=path, profile="false"))
    return Producer(
        Evaluator(load_contracts([folder]), spark=spark, history=history),
        Forwarder(transport),
        Spool(tmp_path / "spool.db"),
        Settings.of(port=0, retry=Backoff(initial=0.05, maximum=0.2), write_through_below=None),
    )


def _http(url: str) -> HttpTransport:
    return HttpTransport(HttpConfig.from_dict({"url": url, "timeout": 30, "retry": {"total": 0}}))


def _complete(run: int, seq: int, path: Path, **extra: Any) -> dict[str, Any]:
    return make_event(
        run, seq, "COMPLETE", inputs=[{"namespace": "file", "name": str(path)}], **extra
    )


def _not_json(name: str) -> None:
    raise AssertionError(f"{name} is not JSON")


def _assertions(body: bytes) -> dict[str, dict[str, Any]]:
    event = json.loads(body)  # Python's json reads "NaN" strings as strings: they are JSON
    facet = event["inputs"][0]["inputFacets"]["dataQualityAssertions"]
    return {a["name"]: a for a in facet["assertions"]}


@pytest.mark.parametrize("history", ["sqlite", "off"])
def test_a_nan_in_the_data_is_carried_as_text_and_every_event_goes_out(
    tmp_path: Path, spark: Any, amounts: Path, raw_sink: RawSink, history: str
) -> None:
    store = open_history(tmp_path / "history.db") if history == "sqlite" else None
    producer = _producer(tmp_path, spark, amounts, _http(raw_sink.url), store)
    producer.start()
    try:
        sender = Sender(producer.url)
        for run in (1, 2):  # the second compares with the first's NaN
            assert sender.post(_complete(run, run, amounts)) == 201
            assert sender.post(make_event(run, 10 + run, "RUNNING")) == 201
        assert raw_sink.wait_for({1, 2, 11, 12}, timeout=120), producer.counters.snapshot()
        for seq in (1, 2):
            body = raw_sink.body_of(seq)
            json.loads(body, parse_constant=_not_json)  # a bare NaN or Infinity is not JSON
            found = _assertions(body)
            avg = found["amount_avg"]
            # docs/rules.md: a NaN statistic meets no threshold
            assert avg["success"] is False and avg["actual"] == "NaN"
            assert found["id_not_null"]["success"] is True
        second = _assertions(raw_sink.body_of(2))["amount_avg_vs_previous"]
        # the measured NaN is carried as text; with a store it FAILS (a NaN meets no threshold,
        # however short the history), without one the rule is an ERROR saying so
        assert second["success"] is False and second["params"]["value"] == "NaN"
        assert second["params"]["status"] == ("FAILED" if history == "sqlite" else "ERROR")
        assert producer.counters["dead_letters"] == 0
    finally:
        producer.stop()
        if store is not None:
            store.close()


def test_a_lone_surrogate_in_a_bound_complete_reaches_the_sink_as_written(
    tmp_path: Path, spark: Any, amounts: Path, raw_sink: RawSink
) -> None:
    producer = _producer(tmp_path, spark, amounts, _http(raw_sink.url))
    producer.start()
    try:
        event = _complete(1, 1, amounts)
        event["job"]["name"] = "job_\ud800_x"  # json.dumps writes it as the escape \ud800
        sender = Sender(producer.url)
        assert sender.post(event) == 201
        assert raw_sink.wait_for({1}, timeout=120), producer.counters.snapshot()
        body = raw_sink.body_of(1)
        assert b'"job_\\ud800_x"' in body
        assert "id_not_null" in _assertions(body)
    finally:
        producer.stop()


@pytest.mark.parametrize("transport", ["fast-http", "file"])
def test_an_integer_of_5000_digits_passes_through_every_transport(
    tmp_path: Path, spark: Any, amounts: Path, raw_sink: RawSink, transport: str
) -> None:
    digits = "7" * 5000
    if transport == "file":
        out = tmp_path / "events.jsonl"
        sink: Any = FileTransport(FileConfig(log_file_path=str(out), append=True))
    else:
        sink = _http(raw_sink.url)
    producer = _producer(tmp_path, spark, amounts, sink)
    producer.start()
    try:
        sender = Sender(producer.url)
        for seq, event in enumerate([_complete(1, 0, amounts), make_event(2, 0, "START")], 1):
            event["run"]["facets"]["seq"]["n"] = seq
            event["run"]["facets"]["big"] = {
                "_producer": "x",
                "_schemaURL": "x",
                "n": "PLACEHOLDER",
            }
            body = json.dumps(event).replace('"PLACEHOLDER"', digits).encode()
            assert sender.post_raw(body, sender.headers)[0] == 201
        assert producer.spool.wait_empty(timeout=120), producer.counters.snapshot()
        bodies = out.read_bytes().splitlines() if transport == "file" else list(raw_sink.bodies)
        assert len(bodies) == 2
        assert all(re.search(rb'"n": ?' + digits.encode() + rb"\b", b) for b in bodies)
        assert producer.counters["dead_letters"] == 0
    finally:
        producer.stop()


def test_a_dataset_listed_500_times_is_evaluated_and_enriched_once(
    tmp_path: Path, spark: Any, amounts: Path, raw_sink: RawSink
) -> None:
    producer = _producer(tmp_path, spark, amounts, _http(raw_sink.url))
    producer.start()
    try:
        event = _complete(1, 1, amounts)
        event["inputs"] = event["inputs"] * 500
        sent = json.dumps(event).encode()
        assert Sender(producer.url).post_raw(sent, {"Content-Type": "application/json"})[0] == 201
        assert raw_sink.wait_for({1}, timeout=120)
        out = json.loads(raw_sink.body_of(1))
        enriched = [i for i in out["inputs"] if "inputFacets" in i]
        assert len(enriched) == 1 and out["inputs"][0] is enriched[0]
        assert producer.evaluator.evaluations == 1
        names = [t["name"] for t in out["run"]["facets"]["test"]["tests"]]
        assert "id_not_null" in names and len(names) == len(set(names))  # each rule once
    finally:
        producer.stop()


def test_an_event_whose_handling_fails_for_good_goes_to_the_dead_letters(
    tmp_path: Path, spark: Any, amounts: Path, raw_sink: RawSink, monkeypatch: Any
) -> None:
    """Whatever else an event may hold that we cannot handle: dead-lettered at once, with the
    reason; the next events of its run and of other runs go on."""
    import lineage_quality.producer.service as service

    real = service.enrich

    def broken(event: Any, results: Any, *bound: int) -> Any:
        if event["job"]["name"] == "job_1":
            raise ValueError("cannot enrich this one")
        return real(event, results, *bound)

    monkeypatch.setattr(service, "enrich", broken)
    producer = _producer(tmp_path, spark, amounts, _http(raw_sink.url))
    producer.start()
    try:
        sender = Sender(producer.url)
        started = time.monotonic()
        assert sender.post(_complete(1, 1, amounts)) == 201
        assert sender.post(make_event(1, 2, "RUNNING")) == 201
        assert sender.post(_complete(2, 3, amounts)) == 201
        assert raw_sink.wait_for({2, 3}, timeout=120)
        assert producer.spool.wait_empty(timeout=30)
        assert time.monotonic() - started < 60
        assert 1 not in raw_sink.seqs()
        letters = producer.spool.dead_letters()
        assert len(letters) == 1 and "cannot enrich this one" in letters[0].reason
        assert producer.counters["dead_letters"] == 1
        # its run is not "evaluated" with no verdicts (gate would pass it): an ERROR says why
        status, answer = producer.runs.status("00000000-0000-4000-8000-000000000001")
        assert status == 200
        # (the rules were judged before enrich raised here: their verdicts are kept too)
        (row,) = [v for v in answer["verdicts"] if v["rule"] == "(not evaluated)"]
        assert row["status"] == "ERROR"
        assert "cannot enrich this one" in row["message"]
        assert row["action"] == "ALERT"  # no rule bound here blocks
    finally:
        producer.stop()
