"""The receiver speaks the OpenLineage HTTP transport's protocol; the spool keeps what it took."""

from __future__ import annotations

import gzip
import http.client
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from lineage_quality.producer.receiver import Receiver
from lineage_quality.producer.settings import Settings
from lineage_quality.producer.spool import Spool

EVENT = json.dumps(
    {
        "eventType": "START",
        "eventTime": "2026-11-22T06:00:00.000Z",
        "producer": "https://example.com/p",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": "r1"},
        "job": {"namespace": "n", "name": "j"},
    }
)


def variant(**changes: object) -> bytes:
    """EVENT with top-level keys replaced (a value of None removes the key)."""
    event = {**json.loads(EVENT), **changes}
    return json.dumps({k: v for k, v in event.items() if v is not None}).encode()


@pytest.fixture
def server() -> Iterator[tuple[Receiver, list[str]]]:
    got: list[str] = []
    receiver = Receiver(
        lambda text, _event: got.append(text), Settings.of(port=0, api_key=None, max_body=64 * 1024)
    )
    receiver.start()
    yield receiver, got
    receiver.stop()


def post(receiver: Receiver, body: bytes, headers: dict[str, str]) -> tuple[int, dict[str, str]]:
    host, port = receiver.address
    conn = http.client.HTTPConnection(host, port, timeout=10)
    conn.request("POST", "/api/v1/lineage", body=body, headers=headers)
    resp = conn.getresponse()
    payload = json.loads(resp.read() or b"{}")
    conn.close()
    return resp.status, payload


JSON = {"Content-Type": "application/json"}


def test_plain_gzip_and_chunked_bodies_are_accepted(server: tuple[Receiver, list[str]]) -> None:
    receiver, got = server
    assert post(receiver, EVENT.encode(), JSON)[0] == 201
    assert (
        post(receiver, gzip.compress(EVENT.encode()), {**JSON, "Content-Encoding": "gzip"})[0]
        == 201
    )
    # what the Java transport sends: chunked transfer encoding, no Content-Length
    host, port = receiver.address
    conn = http.client.HTTPConnection(host, port, timeout=10)
    data = gzip.compress(EVENT.encode())
    conn.request(
        "POST",
        "/api/v1/lineage",
        body=iter([data[:10], data[10:]]),
        headers={**JSON, "Content-Encoding": "gzip"},
        encode_chunked=True,
    )
    assert conn.getresponse().status == 201
    conn.close()
    assert got == [EVENT, EVENT, EVENT]


@pytest.mark.parametrize(
    ("body", "headers", "status", "message"),
    [
        (b"{not json", JSON, 400, "not JSON"),
        (b"[1, 2]", JSON, 400, "JSON object"),
        (b'{"hello": 1}', JSON, 400, "not an OpenLineage event"),
        (b"\xff\xfe{}", JSON, 400, "not JSON"),
        (EVENT.encode().replace(b'"r1"', b"NaN"), JSON, 400, "NaN is not JSON"),
        (b"[" * 20_000 + b"]" * 20_000, JSON, 400, "nested too deep"),
        (variant(job=None), JSON, 400, "needs a `job`"),
        (variant(run=None, job=None, dataset=None, eventType=None), JSON, 400, "no `run`"),
        (variant(run={"facets": {}}), JSON, 400, "run.runId"),
        (variant(eventType="FINISHED"), JSON, 400, "unknown eventType"),
        (variant(eventTime="yesterday"), JSON, 400, "eventTime"),
        (variant(eventTime="2026-11-22T06:00:00"), JSON, 400, "UTC offset"),
        (variant(producer=None), JSON, 400, "producer"),
        (variant(inputs={"a": 1}), JSON, 400, "`inputs` must be a list"),
        (variant(outputs=[{"namespace": "n"}]), JSON, 400, "outputs[0].name"),
        (variant(run={"runId": "r", "facets": {"x": 5}}), JSON, 400, "facet `run.facets.x`"),
        (EVENT.encode(), {**JSON, "Content-Encoding": "br"}, 415, "unsupported encoding"),
        (EVENT.encode(), {"Content-Type": "text/plain"}, 415, "Content-Type must be JSON"),
        (b"x" * (64 * 1024 + 1), JSON, 413, "body over"),
        (
            gzip.compress(b" " * (1024 * 1024)),
            {**JSON, "Content-Encoding": "gzip"},
            413,
            "inflates",
        ),
        (b"\x1f\x8b garbage", {**JSON, "Content-Encoding": "gzip"}, 400, "invalid gzip"),
        (
            gzip.compress(EVENT.encode())[:-4],
            {**JSON, "Content-Encoding": "gzip"},
            400,
            "truncated",
        ),
    ],
)
def test_bad_requests_get_a_clear_4xx_and_the_server_keeps_serving(
    server: tuple[Receiver, list[str]],
    body: bytes,
    headers: dict[str, str],
    status: int,
    message: str,
) -> None:
    receiver, got = server
    code, payload = post(receiver, body, headers)
    assert code == status
    assert message in payload["error"]
    assert post(receiver, EVENT.encode(), JSON)[0] == 201
    assert got == [EVENT]


def test_api_key_is_required_when_configured() -> None:
    got: list[str] = []
    receiver = Receiver(
        lambda text, _event: got.append(text), Settings.of(port=0, api_key="s3cret")
    )
    receiver.start()
    try:
        assert post(receiver, EVENT.encode(), JSON)[0] == 401
        assert post(receiver, EVENT.encode(), {**JSON, "Authorization": "Bearer nope"})[0] == 401
        assert post(receiver, EVENT.encode(), {**JSON, "Authorization": "Bearer s3cret"})[0] == 201
    finally:
        receiver.stop()
    assert got == [EVENT]


def test_storage_failure_is_a_503_not_a_silent_drop() -> None:
    def refuse(_: str) -> None:
        raise OSError("disk full")

    receiver = Receiver(lambda text, _event: refuse(text), Settings.of(port=0))
    receiver.start()
    try:
        assert post(receiver, EVENT.encode(), JSON)[0] == 503
    finally:
        receiver.stop()


def test_spool_keeps_order_and_survives_reopening(tmp_path: Path) -> None:
    path = tmp_path / "spool.db"
    spool = Spool(path)
    ids = [spool.put(f'{{"n": {i}}}') for i in range(3)]
    first = spool.next(timeout=0)
    assert first is not None and first.id == ids[0] and not first.enriched
    spool.replace(first.id, '{"n": 0, "enriched": true}')
    spool.close()

    reopened = Spool(path)
    item = reopened.next(timeout=0)
    assert item is not None and item.enriched and item.body == '{"n": 0, "enriched": true}'
    reopened.done(item.id)
    rest = []
    while (nxt := reopened.next(timeout=0)) is not None:
        rest.append(nxt.body)
        reopened.done(nxt.id)
    assert rest == ['{"n": 1}', '{"n": 2}']
    assert reopened.pending() == 0
