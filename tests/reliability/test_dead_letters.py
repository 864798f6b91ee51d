"""An event a sink keeps refusing with a 4xx goes to the dead letters and its run's lane goes on
(issue 9.8); `lineage-quality dead-letters` lists, shows, retries and purges them."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from faultkit import Sender, make_event, record_fault
from openlineage.client.transport.http import HttpConfig, HttpTransport

from lineage_quality.cli import main
from lineage_quality.producer import Evaluator, Forwarder, Producer, Spool
from lineage_quality.producer.backoff import Backoff
from lineage_quality.producer.settings import Settings


class PickySink:
    """Takes every event but those whose body holds `refuse` (400), which it takes later when
    `refuse` is cleared."""

    def __init__(self) -> None:
        self.refuse: str | None = "POISON"
        self.bodies: list[dict[str, Any]] = []
        self.refusals = 0
        sink = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if sink.refuse and sink.refuse.encode() in body:
                    sink.refusals += 1
                    self.send_response(400)
                else:
                    sink.bodies.append(json.loads(body))
                    self.send_response(201)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_a_refused_event_is_moved_aside_and_its_lane_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sink = PickySink()
    spool_path = tmp_path / "spool.db"
    config = HttpConfig.from_dict({"type": "http", "url": sink.url, "retry": {"total": 0}})
    producer = Producer(
        Evaluator([]),
        Forwarder(HttpTransport(config)),
        Spool(spool_path),
        Settings.of(port=0, dead_letter_after=3, retry=Backoff(initial=0.05, maximum=0.1)),
    )
    producer.start()
    try:
        sender = Sender(producer.url)
        events = [make_event(1, seq) for seq in range(5)]
        events[1]["run"]["facets"]["seq"]["note"] = "POISON"
        for event in events:
            assert sender.post(event) == 201
        assert producer.spool.wait_empty(timeout=60)
    finally:
        producer.stop()
    delivered = [e["run"]["facets"]["seq"]["n"] for e in sink.bodies]
    assert delivered == [0, 2, 3, 4]  # in order, the refused one left out, nothing stuck
    assert sink.refusals == 3

    # The CLI sees it, shows it whole, sends it again once the sink takes it, purges.
    assert main(["dead-letters", "list", "--spool", str(spool_path)]) == 0
    listed = capsys.readouterr().out.strip().splitlines()
    assert len(listed) == 1 and "refused 3 times" in listed[0] and "400" in listed[0]
    dead_id = int(listed[0].split("\t")[0])
    assert main(["dead-letters", "show", str(dead_id), "--spool", str(spool_path)]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["event"]["run"]["facets"]["seq"]["note"] == "POISON"
    assert main(["dead-letters", "retry", str(dead_id), "--spool", str(spool_path)]) == 0
    capsys.readouterr()
    sink.refuse = None
    producer = Producer(
        Evaluator([]), Forwarder(HttpTransport(config)), Spool(spool_path), Settings.of(port=0)
    )
    producer.start()
    try:
        assert producer.spool.wait_empty(timeout=60)
    finally:
        producer.stop()
        sink.close()
    assert [e["run"]["facets"]["seq"]["n"] for e in sink.bodies] == [0, 2, 3, 4, 1]
    assert main(["dead-letters", "list", "--spool", str(spool_path)]) == 0
    assert capsys.readouterr().out == ""
    assert main(["dead-letters", "show", "999", "--spool", str(spool_path)]) == 2
    record_fault("sink refuses one event (400), then takes it", 5, 5, 5, dead_lettered=1)


def test_dead_letters_past_their_bound_expire_oldest_first_counted_and_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A sink refusing every event for good: the dead letters keep the newest
    `dead_letter_max_events`; each one expired is counted in the metric and said in the log."""
    sink = PickySink()
    settings = Settings.of(
        port=0,
        dead_letter_after=1,
        dead_letter_max_events=2,
        retry=Backoff(initial=0.05, maximum=0.1),
    )
    config = HttpConfig.from_dict({"type": "http", "url": sink.url, "retry": {"total": 0}})
    producer = Producer(
        Evaluator([]),
        Forwarder(HttpTransport(config)),
        Spool(tmp_path / "spool.db", settings),
        settings,
    )
    producer.start()
    try:
        sender = Sender(producer.url)
        for seq in range(5):  # one run: buried in order
            event = make_event(1, seq)
            event["run"]["facets"]["seq"]["note"] = "POISON"
            assert sender.post(event) == 201
        assert producer.spool.wait_empty(timeout=60)
        letters = producer.spool.dead_letters()
        expired = producer.metrics.registry.get_sample_value(
            "lineage_quality_dead_letters_expired_total"
        )
    finally:
        producer.stop()
        sink.close()
    assert [json.loads(d.body)["run"]["facets"]["seq"]["n"] for d in letters] == [3, 4]
    assert expired == 3
    said = [
        r.getMessage() for r in caplog.records if "older dead letter(s) expired" in r.getMessage()
    ]
    assert len(said) == 3
