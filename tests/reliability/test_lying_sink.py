"""The fast HTTP client (producer/http_fast.py) trusts nothing it did not ask for (issue 44.6).

A kept-alive HTTP/1.1 connection carries no request ids: a sink that writes its answer twice (a
buggy proxy, a hostile endpoint) left the second answer in the client's buffer, taken as the
answer to the next request, which the sink never read: that event was counted as delivered and
lost (5 of 10 with write-through, 4 of 10 without). And a sink trickling its answer a byte every
0.4 s held a send for as long as it liked: the timeout was per read, not per answer.

The sinks here are real sockets on 127.0.0.1 speaking raw HTTP, so they can lie as a real one
would; what they kept is counted from their side.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from faultkit import Sender, check_run_order, key_of, make_event, record_fault
from openlineage.client.transport.http import HttpConfig, HttpTransport

from lineage_quality.producer import Evaluator, Forwarder, Producer, Spool
from lineage_quality.producer.backoff import Backoff
from lineage_quality.producer.http_fast import FastHttp
from lineage_quality.producer.settings import Settings

OK = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
BAD = b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"


class Peer:
    """One accepted connection: requests read off it, answers written to it."""

    def __init__(self, sock: socket.socket, number: int) -> None:
        self.sock = sock
        self.number = number
        self._buffer = b""

    def request(self) -> bytes | None:
        """The next request's body; None when the client closed the connection."""
        while b"\r\n\r\n" not in self._buffer:
            data = self._recv()
            if not data:
                return None
            self._buffer += data
        head, _, self._buffer = self._buffer.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        while len(self._buffer) < length:
            data = self._recv()
            if not data:
                return None
            self._buffer += data
        body, self._buffer = self._buffer[:length], self._buffer[length:]
        return body

    def _recv(self) -> bytes:
        try:
            return self.sock.recv(65536)
        except OSError:
            return b""

    def send(self, data: bytes) -> bool:
        try:
            self.sock.sendall(data)
        except OSError:
            return False
        return True


class RawSink:
    """An HTTP sink on 127.0.0.1 whose every connection is handled by `handle(sink, peer)`.
    It records each request it read (`requests`: connection number, body) and each event it
    kept (`kept`: the handler says which)."""

    def __init__(self, handle: Callable[[RawSink, Peer], None]) -> None:
        self.handle = handle
        self.requests: list[tuple[int, bytes]] = []
        self.kept: list[dict[str, Any]] = []
        self.trickling = threading.Event()
        self._changed = threading.Condition()
        self._server = socket.create_server(("127.0.0.1", 0))
        self._peers: list[socket.socket] = []
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.getsockname()[1]}"

    def _accept(self) -> None:
        number = 0
        while True:
            try:
                sock, _ = self._server.accept()
            except OSError:
                return
            number += 1
            self._peers.append(sock)
            peer = Peer(sock, number)
            threading.Thread(target=self._run, args=(peer,), daemon=True).start()

    def _run(self, peer: Peer) -> None:
        try:
            self.handle(self, peer)
        finally:
            peer.sock.close()

    def read(self, peer: Peer) -> bytes | None:
        body = peer.request()
        if body is not None:
            with self._changed:
                self.requests.append((peer.number, body))
        return body

    def keep(self, body: bytes) -> None:
        with self._changed:
            self.kept.append(json.loads(body))
            self._changed.notify_all()

    def received(self) -> set[tuple[str, int]]:
        with self._changed:
            return {key_of(e) for e in self.kept}

    def wait_for(self, predicate: Callable[[RawSink], bool], timeout: float) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: predicate(self), timeout)

    def connections(self) -> list[int]:
        return [number for number, _ in self.requests]

    def close(self) -> None:
        self._server.close()
        for sock in self._peers:
            sock.close()


def answer_twice_then_linger(sink: RawSink, peer: Peer) -> None:
    """A buggy proxy: one request per connection, its answer written twice (framed as
    HTTP/1.1 keep-alive), then the connection is held a while and closed. Whatever else the
    client sends on it is never read."""
    body = sink.read(peer)
    if body is None:
        return
    sink.keep(body)
    peer.send(OK + OK)
    time.sleep(0.3)


def twice_on_every_request(sink: RawSink, peer: Peer) -> None:
    """Reads every request of the connection and answers each twice; an event whose
    `refuse` field is set is refused (400) and not kept."""
    while (body := sink.read(peer)) is not None:
        if json.loads(body).get("refuse"):
            peer.send(BAD + BAD)
            continue
        sink.keep(body)
        peer.send(OK + OK)


def trickle(sink: RawSink, peer: Peer) -> None:
    """Answers every request, a byte every 0.4 s while `sink.trickling` is set (the rest at
    once when it is cleared). An event is kept when its whole answer was written: a client
    that gave up on it did not take it."""
    padded = b"HTTP/1.1 200 OK\r\nX-Pad: " + b"." * 40 + b"\r\nContent-Length: 0\r\n\r\n"
    while (body := sink.read(peer)) is not None:
        written = 0
        while written < len(padded) and sink.trickling.is_set():
            if not peer.send(padded[written : written + 1]):
                return
            written += 1
            time.sleep(0.4)
        if not peer.send(padded[written:]):
            return
        sink.keep(body)


def scripted(answers: list[bytes]) -> Callable[[RawSink, Peer], None]:
    """Reads every request of the connection; answers the n-th request of the sink (over all
    connections) with `answers[n]` (then OK), verbatim, and keeps its event."""
    lock = threading.Lock()

    def handle(sink: RawSink, peer: Peer) -> None:
        while (body := sink.read(peer)) is not None:
            with lock:
                answer = answers.pop(0) if answers else OK
            sink.keep(body)
            peer.send(answer)

    return handle


def _transport(url: str, timeout: float = 5.0) -> HttpTransport:
    config = {"url": url, "timeout": timeout, "retry": {"total": 0, "connect": 0, "read": 0}}
    return HttpTransport(HttpConfig.from_dict(config))


def _fast(sink: RawSink, timeout: float = 5.0) -> FastHttp:
    fast = FastHttp.for_transport(_transport(sink.url, timeout))
    assert fast is not None
    return fast


def _body(seq: int, **extra: Any) -> str:
    return json.dumps(make_event(1, seq, **extra))


@pytest.fixture
def sinks() -> Iterator[list[RawSink]]:
    made: list[RawSink] = []
    yield made
    for sink in made:
        sink.close()


def _sink(sinks: list[RawSink], handle: Callable[[RawSink, Peer], None]) -> RawSink:
    sink = RawSink(handle)
    sinks.append(sink)
    return sink


# -- the client alone -----------------------------------------------------------------------


@pytest.mark.parametrize("path", ["send", "send_once"])
def test_an_answer_written_twice_is_never_taken_for_the_next_requests(
    sinks: list[RawSink], path: str
) -> None:
    """The sink reads every request and answers each twice; the second event is refused. The
    client must see that refusal, not the first event's stray second 200."""
    sink = _sink(sinks, twice_on_every_request)
    fast = _fast(sink)
    try:
        if path == "send":
            assert fast.send(_body(0)) is True
            with pytest.raises(requests.HTTPError) as refused:
                fast.send(_body(1, refuse=True))
            assert refused.value.response is not None
            assert refused.value.response.status_code == 400
            assert fast.send(_body(2)) is True
        else:
            assert fast.send_once(_body(0), 5.0) == 200
            assert fast.send_once(_body(1, refuse=True), 5.0) == 400
            assert fast.send_once(_body(2), 5.0) == 200
    finally:
        fast.close()
    # each request on a connection of its own: every one was followed by a stray answer
    assert sink.connections() == [1, 2, 3]


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param(OK + b"HTTP/1.1 200 OK\r\n", id="bytes-beyond-the-answer"),
        pytest.param(b"HTTP/1.1 204 No Content\r\n\r\nxyz", id="a-body-on-204"),
        pytest.param(b"HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n" + OK, id="interim-103"),
        pytest.param(
            b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"
            b"3\r\nabc\r\n0\r\n\r\n",
            id="length-and-chunked",
        ),
        pytest.param(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
            id="chunked-not-alone",
        ),
        pytest.param(b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", id="http-1.0"),
        pytest.param(
            b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: keep-alive, close\r\n\r\n",
            id="connection-close",
        ),
    ],
)
@pytest.mark.parametrize("path", ["send", "send_once"])
def test_a_connection_is_not_reused_after_an_answer_that_does_not_frame_cleanly(
    sinks: list[RawSink], path: str, answer: bytes
) -> None:
    sink = _sink(sinks, scripted([answer]))
    fast = _fast(sink)
    try:
        for seq in range(2):
            if path == "send":
                assert fast.send(_body(seq)) is True
            else:
                assert fast.send_once(_body(seq), 5.0) in (200, 204)
    finally:
        fast.close()
    assert sink.connections() == [1, 2]


@pytest.mark.parametrize("path", ["send", "send_once"])
def test_bytes_arriving_after_the_answer_end_the_connection(
    sinks: list[RawSink], path: str
) -> None:
    """The stray answer comes 50 ms after the real one, before the next request."""

    def late_stray(sink: RawSink, peer: Peer) -> None:
        while (body := sink.read(peer)) is not None:
            sink.keep(body)
            peer.send(OK)
            time.sleep(0.05)
            peer.send(OK)

    sink = _sink(sinks, late_stray)
    fast = _fast(sink)
    try:
        for seq in range(3):
            if path == "send":
                assert fast.send(_body(seq)) is True
            else:
                assert fast.send_once(_body(seq), 5.0) == 200
            time.sleep(0.2)
    finally:
        fast.close()
    assert sink.connections() == [1, 2, 3]


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param(b"HTTP/1.1 101 Switching Protocols\r\n\r\n" + OK, id="switching-101"),
        pytest.param(b"HTTP/1.1 2000 OK\r\nContent-Length: 0\r\n\r\n", id="status-2000"),
        pytest.param(b"HTTP/1.1 200 OK\r\nContent-Length: +0\r\n\r\n", id="length-plus"),
        pytest.param(
            b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nContent-Length: 0\r\n\r\n", id="two-lengths"
        ),
        pytest.param(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\n", id="chunk-size-minus"
        ),
        pytest.param(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0x1\r\na\r\n0\r\n\r\n",
            id="chunk-size-0x",
        ),
        pytest.param(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nabc\r\n0\r\n\r\n",
            id="chunk-longer-than-its-size",
        ),
    ],
)
def test_an_answer_that_does_not_frame_is_not_taken(sinks: list[RawSink], answer: bytes) -> None:
    """Not a 2xx: `send` raises (the event is retried), `send_once` says no answer (spooled);
    within the deadline, whatever the sink does next."""
    sink = _sink(sinks, scripted([answer, answer]))
    fast = _fast(sink, timeout=1.0)
    try:
        started = time.monotonic()
        with pytest.raises(requests.RequestException):
            fast.send(_body(0))
        assert fast.send_once(_body(1), 1.0) == 0
        assert time.monotonic() - started < 3.0
    finally:
        fast.close()


@pytest.mark.parametrize("path", ["send", "send_once"])
def test_a_trickled_answer_is_given_up_at_its_deadline(sinks: list[RawSink], path: str) -> None:
    """A byte every 0.4 s (the whole answer: 30 s): the send fails within its 1 s deadline."""
    sink = _sink(sinks, trickle)
    sink.trickling.set()
    fast = _fast(sink, timeout=1.0)
    started = time.monotonic()
    try:
        if path == "send":
            with pytest.raises(requests.RequestException):
                fast.send(_body(0))
        else:
            assert fast.send_once(_body(0), 1.0) == 0
        took = time.monotonic() - started
    finally:
        sink.trickling.clear()
        fast.close()
    assert 0.9 < took < 1.8, took
    assert sink.kept == []  # the sink never finished its answer: nothing taken


# -- through the producer -------------------------------------------------------------------


def _producer(tmp_path: Path, sink: RawSink, **settings: Any) -> Producer:
    producer = Producer(
        Evaluator([]),
        Forwarder(_transport(sink.url, timeout=5.0)),
        Spool(tmp_path / "spool.db"),
        Settings.of(port=0, retry=Backoff(initial=0.05, maximum=0.2), **settings),
    )
    producer.start()
    return producer


@pytest.mark.parametrize("write_through", [False, True], ids=["spooled", "write-through"])
def test_a_sink_answering_twice_loses_no_acknowledged_event(
    tmp_path: Path, sinks: list[RawSink], write_through: bool
) -> None:
    """10 events to a sink writing each answer twice: every 201 was kept by the sink."""
    sink = _sink(sinks, answer_twice_then_linger)
    below = 1.0 if write_through else None
    producer = _producer(tmp_path, sink, write_through_below=below)
    sender = Sender(producer.url)
    try:
        if write_through:  # one send through the spool measures the sink as fast
            assert sender.post(make_event(999, 0, "START")) == 201
            assert sink.wait_for(lambda s: len(s.kept) == 1, timeout=10)
            assert producer.spool.wait_empty(10)
        sent = [make_event(run, seq) for seq in range(5) for run in (1, 2)]
        for event in sent:
            assert sender.post(event) == 201
        expected = {key_of(e) for e in sent}
        assert producer.spool.wait_empty(30)
        kept = sink.received() & expected
    finally:
        sender.close()
        producer.stop()
    assert kept == expected, f"lost: {sorted(expected - kept)}"
    check_run_order([e for e in sink.kept if key_of(e) in expected])
    record_fault(
        f"sink writes every answer twice ({'write-through' if write_through else 'spooled'})",
        10,
        10,
        len(kept),
        written_through=producer.write_through.sent,
    )


def test_write_through_gives_up_to_the_spool_when_the_answer_trickles(
    tmp_path: Path, sinks: list[RawSink]
) -> None:
    """The sink answers a byte every 0.4 s: the 201 comes within the write-through bound (1 s),
    the event is spooled, and forwarded once the sink answers properly."""
    sink = _sink(sinks, trickle)
    producer = _producer(tmp_path, sink, write_through_below=1.0)
    assert producer.settings.delivery.write_through_timeout == 1.0
    sender = Sender(producer.url)
    try:
        assert sender.post(make_event(999, 0, "START")) == 201
        assert sink.wait_for(lambda s: len(s.kept) == 1, timeout=10)
        assert producer.spool.wait_empty(10)
        written = producer.write_through.sent
        sink.trickling.set()
        started = time.monotonic()
        assert sender.post(make_event(1, 0)) == 201
        took = time.monotonic() - started
        assert producer.write_through.sent == written  # not written through: spooled
        sink.trickling.clear()
        assert sink.wait_for(lambda s: (make_event(1, 0)["run"]["runId"], 0) in s.received(), 30)
    finally:
        sink.trickling.clear()
        sender.close()
        producer.stop()
    assert took < 1.8, took
    record_fault("sink trickles its answer (write-through)", 1, 1, 1, answered_in=round(took, 2))
