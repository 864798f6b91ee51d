"""The producer's fast paths keep its semantics: forwarding on kept-alive connections sends what
openlineage-python's HttpTransport sends (and retries and fails as it does), the receiver's 201,
the parsed event handed to the spool, and a worker going on with its lane."""

from __future__ import annotations

import gzip
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
import requests
from openlineage.client.transport.http import HttpConfig, HttpTransport

from lineage_quality import rawjson
from lineage_quality.producer.backoff import refused_for_good as refused_by_sink
from lineage_quality.producer.forward import Forwarder, RawEvent
from lineage_quality.producer.http_fast import FastHttp
from lineage_quality.producer.receiver import Receiver
from lineage_quality.producer.settings import Settings
from lineage_quality.producer.spool import Spool

EVENT = (
    '{"eventTime": "2024-01-01T00:00:00Z", "producer": "p", "eventType": "START", '
    '"run": {"runId": "r1"}, "job": {"namespace": "n", "name": "j"}, "x": 1e400, "y": null}'
)


class _Recorder(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    seen: ClassVar[list[dict[str, Any]]] = []
    answers: ClassVar[list[tuple[int, dict[str, str]]]] = []  # popped per request; then 201
    close_after = False

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        _Recorder.seen.append(
            {
                "path": self.path,
                "headers": {k.lower(): v for k, v in self.headers.items()},
                "body": body,
                "peer": self.client_address[1],
            }
        )
        status, headers = _Recorder.answers.pop(0) if _Recorder.answers else (201, {})
        payload = b'{"ok": true}'
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        if _Recorder.close_after:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def sink() -> Iterator[str]:
    _Recorder.seen = []
    _Recorder.answers = []
    _Recorder.close_after = False
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _transport(url: str, **config: Any) -> HttpTransport:
    return HttpTransport(HttpConfig.from_dict({"type": "http", "url": url, **config}))


def test_fast_path_only_where_it_cannot_differ(
    sink: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.netrc
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy", "NETRC"):
        monkeypatch.delenv(name, raising=False)
    assert FastHttp.for_transport(_transport(sink)) is not None
    assert FastHttp.for_transport(_transport("https://example.invalid")) is None
    assert FastHttp.for_transport(_transport("http://u:p@127.0.0.1:1")) is None
    assert FastHttp.for_transport(_transport(sink, session=requests.Session())) is None
    assert FastHttp.for_transport(object()) is None
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.invalid:3128")
    monkeypatch.setenv("NO_PROXY", "")
    assert FastHttp.for_transport(_transport(sink)) is None


def test_fast_path_sends_what_the_transport_sends_on_one_connection(sink: str) -> None:
    config = {
        "endpoint": "custom/lineage",
        "auth": {"type": "api_key", "apiKey": "sink-key"},
        "custom_headers": {"X-Tenant": "t1"},
        "compression": "gzip",
    }
    forwarder = Forwarder(_transport(sink, **config))  # installs the raw serialization
    assert forwarder.fast is not None
    forwarder.transport.emit(RawEvent(EVENT))  # type: ignore[arg-type]  # reference: requests
    for _ in range(3):
        forwarder.send(EVENT)
    forwarder.close()
    reference, *fast = _Recorder.seen
    assert len(fast) == 3
    for got in fast:
        assert got["path"] == reference["path"] == "/custom/lineage"
        assert got["body"] == reference["body"] == EVENT.encode()  # as received, 1e400 and all
        for name in ("content-type", "authorization", "x-tenant", "content-encoding", "host"):
            assert got["headers"][name] == reference["headers"][name], name
    assert reference["headers"]["authorization"] == "Bearer sink-key"
    assert len({got["peer"] for got in fast}) == 1  # one kept-alive connection


def test_fast_path_survives_a_sink_closing_each_connection(sink: str) -> None:
    _Recorder.close_after = True
    forwarder = Forwarder(_transport(sink, retry={"total": 0}))
    for _ in range(3):
        forwarder.send(EVENT)
    assert len(_Recorder.seen) == 3
    forwarder.close()


def test_fast_path_retries_and_fails_as_the_transport_does(sink: str) -> None:
    forwarder = Forwarder(_transport(sink, retry={"total": 2, "backoff_factor": 0}))
    _Recorder.answers = [(503, {}), (502, {})]  # status_forcelist: retried by urllib3's Retry
    forwarder.send(EVENT)
    assert len(_Recorder.seen) == 3

    _Recorder.answers = [(400, {})]
    with pytest.raises(requests.HTTPError) as refused:
        forwarder.send(EVENT)
    assert refused_by_sink(refused.value)  # the dead-letter logic sees the sink's 4xx
    assert refused.value.response is not None and refused.value.response.status_code == 400

    _Recorder.answers = [(500, {})] * 3
    with pytest.raises(requests.exceptions.RetryError):
        forwarder.send(EVENT)
    assert not refused_by_sink(Exception())
    forwarder.close()


def test_fast_path_reports_a_sink_that_is_away() -> None:
    forwarder = Forwarder(_transport("http://127.0.0.1:9", retry={"total": 1, "backoff_factor": 0}))
    assert forwarder.fast is not None
    with pytest.raises(requests.ConnectionError):
        forwarder.send(EVENT)


def test_a_redirect_is_left_to_the_transport(sink: str) -> None:
    fast = FastHttp.for_transport(_transport(sink))
    assert fast is not None
    _Recorder.answers = [(307, {"Location": "/elsewhere"})]
    assert fast.send(EVENT) is False
    assert fast.send(EVENT) is True
    fast.close()


def test_the_receiver_answers_201_and_hands_over_the_parsed_event() -> None:
    import http.client

    got: list[tuple[str, dict[str, Any]]] = []
    receiver = Receiver(lambda t, e: got.append((t, e)), Settings.of(port=0))
    receiver.start()
    try:
        conn = http.client.HTTPConnection(*receiver.address, timeout=5)
        for _ in range(2):  # kept alive
            conn.request("POST", "/api/v1/lineage", EVENT.replace("1e400", "1"))
            response = conn.getresponse()
            assert response.status == 201
            assert response.read() == b"{}"
            assert response.getheader("Content-Type") == "application/json"
            assert response.getheader("Date")
            assert response.getheader("Connection") is None
    finally:
        receiver.stop()
    assert len(got) == 2
    text, event = got[0]
    # parsed once, as it travels on: numbers as written (rawjson)
    assert event == rawjson.loads(text) and event["run"]["runId"] == "r1"


def test_a_worker_goes_on_with_its_lane_in_order(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "spool.db")
    ids = [spool.put(f'{{"n": {i}}}', lane="run:a") for i in range(2)]
    other = spool.put('{"n": "b"}', lane="run:b")
    first = spool.claim(timeout=1)
    assert first is not None and first.id == ids[0]
    spool.done(first.id)
    second = spool.claim_next("run:a")  # the lane stays held: nobody else may take it
    assert second is not None and second.id == ids[1]
    taken = spool.claim(timeout=0.1)
    assert taken is not None and taken.id == other  # only the other lane was free
    spool.done(other)
    assert spool.claim_next("run:b") is None  # empty: the lane is released
    late = spool.hand_over(second.id, '{"n": 1, "enriched": true}', '{"late": true}')
    spool.done(second.id)
    assert spool.claim_next("run:a") is None  # the held follow-up goes first: released
    spool.unhold(late)
    third = spool.claim(timeout=1)
    assert third is not None and third.id == late
    spool.close()


def test_the_request_head_follows_the_transports_headers(monkeypatch: pytest.MonkeyPatch) -> None:
    """The head is built once per set of headers: a changed header (a refreshed token) is sent
    at once, and the Content-Length is each body's own."""
    fast = FastHttp.for_transport(_transport("http://127.0.0.1:9", endpoint="api/v1/lineage"))
    assert fast is not None
    tokens = iter(["Bearer a", "Bearer a", "Bearer b"])
    monkeypatch.setattr(
        fast.transport,
        "_prepare_request",
        lambda text: (text, {"Content-Type": "application/json", "Authorization": next(tokens)}),
    )
    sent = [fast._request(body) for body in ("{}", '{"a": 1}', "{}")]
    assert [b"Authorization: Bearer a\r\n" in s for s in sent] == [True, True, False]
    assert b"Authorization: Bearer b\r\n" in sent[2]
    assert sent[1].endswith(b'Content-Length: 8\r\n\r\n{"a": 1}')
    assert sent[0].startswith(b"POST /api/v1/lineage HTTP/1.1\r\nHost: 127.0.0.1:9\r\n")
