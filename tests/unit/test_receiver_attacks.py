"""The receiver under attack (issue 9, items 6, 7 and 11): structure bombs, slowloris, a
connection flood, request smuggling and lenient framing; and the Bearer scheme in any case."""

from __future__ import annotations

import gzip
import json
import socket
import time
from collections.abc import Iterator

import pytest

from lineage_quality.producer.receiver import Receiver
from lineage_quality.producer.settings import Settings

EVENT = {
    "eventType": "START",
    "eventTime": "2026-11-22T06:00:00.000Z",
    "producer": "https://example.com/p",
    "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
    "run": {"runId": "r1"},
    "job": {"namespace": "n", "name": "j"},
}
BODY = json.dumps(EVENT).encode()


@pytest.fixture
def server() -> Iterator[tuple[Receiver, list[str]]]:
    got: list[str] = []
    receiver = Receiver(
        lambda text, _event: got.append(text),
        Settings.of(port=0, api_key=None, header_timeout=1.0, body_timeout=2.0),
    )
    receiver.start()
    yield receiver, got
    receiver.stop()


def raw(receiver: Receiver, data: bytes, wait: float = 5.0) -> bytes:
    """Send bytes as they are; everything the server answers until it closes (or `wait`)."""
    with socket.create_connection(receiver.address, timeout=wait) as sock:
        sock.sendall(data)
        out = b""
        try:
            while chunk := sock.recv(65536):
                out += chunk
        except (TimeoutError, ConnectionResetError):
            pass
    return out


def request(headers: str, body: bytes = BODY) -> bytes:
    return (
        b"POST /api/v1/lineage HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
        b"Content-Type: application/json\r\n" + headers.encode() + b"\r\n" + body
    )


def status(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


def test_a_structure_bomb_is_refused_before_parsing(server: tuple[Receiver, list[str]]) -> None:
    receiver, got = server
    # 16 KB of gzip inflating to ~16 MB of `{}`: within the byte limit, far beyond any event.
    bomb = json.dumps({**EVENT, "run": {"runId": "r1", "facets": {"x": {"items": []}}}})
    bomb = bomb.replace('"items": []', '"items": [' + ",".join(["{}"] * 5_000_000) + "]")
    packed = gzip.compress(bomb.encode(), compresslevel=9)
    assert len(packed) < 100_000 and len(bomb) > 15_000_000
    answer = raw(
        receiver,
        request(f"Content-Encoding: gzip\r\nContent-Length: {len(packed)}\r\n", packed),
    )
    assert status(answer) == 413 and b"JSON objects/arrays" in answer
    assert got == []


@pytest.mark.parametrize(
    "framing",
    [
        "Content-Length: 1_0\r\n",
        "Content-Length: +10\r\n",
        "Content-Length: 0x10\r\n",
        "Content-Length: 10\r\nContent-Length: 11\r\n",
    ],
)
def test_lenient_content_length_is_refused(
    server: tuple[Receiver, list[str]], framing: str
) -> None:
    receiver, got = server
    assert status(raw(receiver, request(framing))) == 400
    assert got == []


def test_unknown_transfer_encoding_and_bad_chunk_sizes_are_refused(
    server: tuple[Receiver, list[str]],
) -> None:
    receiver, got = server
    chunked = b"%x\r\n" % len(BODY) + BODY + b"\r\n0\r\n\r\n"
    assert status(raw(receiver, request("Transfer-Encoding: xchunked\r\n", chunked))) == 501
    hex_prefixed = b"0x%x\r\n" % len(BODY) + BODY + b"\r\n0\r\n\r\n"
    assert status(raw(receiver, request("Transfer-Encoding: chunked\r\n", hex_prefixed))) == 400
    signed = b"+%x\r\n" % len(BODY) + BODY + b"\r\n0\r\n\r\n"
    assert status(raw(receiver, request("Transfer-Encoding: chunked\r\n", signed))) == 400
    assert got == []
    # The well-formed body is taken.
    assert status(raw(receiver, request("Transfer-Encoding: chunked\r\n", chunked))) == 201
    assert len(got) == 1


def test_smuggled_request_behind_two_framings_never_runs(
    server: tuple[Receiver, list[str]],
) -> None:
    receiver, got = server
    smuggled = request(f"Content-Length: {len(BODY)}\r\n")
    # A proxy honouring Content-Length sees one request; chunked framing would end at `0` and
    # run the request behind it.
    body = b"0\r\n\r\n" + smuggled
    answer = raw(
        receiver,
        request(f"Content-Length: {len(body)}\r\nTransfer-Encoding: chunked\r\n", body),
    )
    assert status(answer) == 400
    assert answer.count(b"HTTP/1.1") == 1  # one answer, then the connection is closed
    assert got == []


def test_bearer_scheme_is_case_insensitive() -> None:
    got: list[str] = []
    receiver = Receiver(
        lambda text, _event: got.append(text), Settings.of(port=0, api_key="s3cret")
    )
    receiver.start()
    try:
        for scheme, expected in (("bearer", 201), ("BEARER", 201), ("Bearer", 201), ("Basic", 401)):
            header = f"Authorization: {scheme} s3cret\r\nContent-Length: {len(BODY)}\r\n"
            assert status(raw(receiver, request(header))) == expected, scheme
        assert status(raw(receiver, request(f"Content-Length: {len(BODY)}\r\n"))) == 401
    finally:
        receiver.stop()
    assert len(got) == 3


def test_trickled_headers_are_cut_off_and_real_posts_get_through(
    server: tuple[Receiver, list[str]],
) -> None:
    receiver, got = server
    tricklers = []
    for _ in range(20):
        sock = socket.create_connection(receiver.address, timeout=5)
        sock.sendall(b"POST /api/v1/lineage HTTP/1.1\r\n")
        tricklers.append(sock)
    started = time.monotonic()
    assert status(raw(receiver, request(f"Content-Length: {len(BODY)}\r\n"))) == 201
    assert len(got) == 1
    # Keep trickling a header byte at a time: the header deadline (1 s) still cuts them.
    cut = 0
    for _ in range(30):
        for sock in list(tricklers):
            try:
                sock.sendall(b"X")
                sock.setblocking(False)
                if sock.recv(1) == b"":
                    raise ConnectionResetError
            except BlockingIOError:
                pass
            except OSError:
                tricklers.remove(sock)
                sock.close()
                cut += 1
            else:
                sock.setblocking(True)
        if not tricklers:
            break
        time.sleep(0.2)
    assert cut == 20, f"{len(tricklers)} trickling connections still open"
    assert time.monotonic() - started < 10


def test_connections_beyond_the_cap_get_503_at_once() -> None:
    got: list[str] = []
    receiver = Receiver(
        lambda text, _event: got.append(text), Settings.of(port=0, max_connections=2)
    )
    receiver.start()
    idle = [socket.create_connection(receiver.address, timeout=5) for _ in range(2)]
    try:
        time.sleep(0.3)  # both accepted and holding their threads
        answer = raw(receiver, request(f"Content-Length: {len(BODY)}\r\n"))
        assert status(answer) == 503 and b"too many connections" in answer
        for sock in idle:
            sock.close()
        time.sleep(0.5)
        assert status(raw(receiver, request(f"Content-Length: {len(BODY)}\r\n"))) == 201
    finally:
        receiver.stop()


def test_run_verdicts_need_the_key_when_one_is_set() -> None:
    asked: list[str] = []

    def runs(run_id: str) -> tuple[int, dict[str, object]]:
        asked.append(run_id)
        return 200, {"runId": run_id, "status": "evaluated", "verdicts": []}

    receiver = Receiver(
        lambda _text, _event: None, Settings.of(port=0, api_key="s3cret"), runs=runs
    )
    receiver.start()
    try:
        get = b"GET /api/v1/runs/r%2F1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
        assert status(raw(receiver, get + b"\r\n")) == 401
        answer = raw(receiver, get + b"Authorization: bearer s3cret\r\n\r\n")
        assert status(answer) == 200 and b'"runId": "r/1"' in answer
        assert status(raw(receiver, b"GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n")) == 200
    finally:
        receiver.stop()
    assert asked == ["r/1"]
