"""The receiver's request head reader: strict RFC 9112 lines and fields, clear refusals."""

from __future__ import annotations

import io
import socket
from collections.abc import Iterator
from http import HTTPStatus

import pytest

from lineage_quality.producer.receiver import Receiver
from lineage_quality.producer.receiver.request import (
    MAX_FIELD_LINE,
    MAX_FIELDS,
    MAX_REQUEST_LINE,
    RequestError,
    RequestHead,
    read_head,
)
from lineage_quality.producer.settings import Settings


def head(data: bytes) -> RequestHead | None:
    return read_head(io.BufferedReader(io.BytesIO(data)))


def refused(data: bytes) -> RequestError:
    with pytest.raises(RequestError) as caught:
        head(data)
    return caught.value


def test_a_request_head_is_read_with_its_fields_by_lower_case_name() -> None:
    stream = io.BufferedReader(
        io.BytesIO(
            b"POST /api/v1/lineage?x=1 HTTP/1.1\r\nHost: h:5000\r\n"
            b"Content-Type:application/json \t\r\nX-Twice: a\r\nx-twice: b\r\n"
            b"Empty:\r\n\r\nBODY"
        )
    )
    got = read_head(stream)
    assert got is not None
    assert (got.method, got.target, got.version) == ("POST", "/api/v1/lineage?x=1", (1, 1))
    assert got.get("content-type") == "application/json"
    assert got.get_all("x-twice") == ["a", "b"]
    assert got.get("empty") == ""
    assert got.get("absent") is None and got.get_all("absent") == []
    assert got.keep_alive and not got.expects_continue
    assert stream.read() == b"BODY"  # the body is left unread


def test_the_end_of_the_connection_before_a_request_is_none() -> None:
    assert head(b"") is None


@pytest.mark.parametrize(
    ("data", "keep_alive"),
    [
        (b"GET / HTTP/1.1\r\n\r\n", True),
        (b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n", False),
        (b"GET / HTTP/1.1\r\nConnection: keep-alive, Close\r\n\r\n", False),
        (b"GET / HTTP/1.0\r\n\r\n", False),
        (b"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", True),
    ],
)
def test_keep_alive_follows_the_version_and_connection_field(data: bytes, keep_alive: bool) -> None:
    got = head(data)
    assert got is not None and got.keep_alive is keep_alive


def test_expect_100_continue_is_recognized_on_http_1_1_only() -> None:
    got = head(b"POST / HTTP/1.1\r\nExpect: 100-Continue\r\n\r\n")
    assert got is not None and got.expects_continue
    got = head(b"POST / HTTP/1.0\r\nExpect: 100-continue\r\n\r\n")
    assert got is not None and not got.expects_continue


@pytest.mark.parametrize(
    ("data", "status", "message"),
    [
        (b"POST /x HTTP/1.1\n\r\n", HTTPStatus.BAD_REQUEST, "CRLF"),  # bare LF
        (b"POST /x HTTP/1.1\r\nHost: a\n\r\n", HTTPStatus.BAD_REQUEST, "CRLF"),
        (b"POST /x HTTP/1.1\r\nHost: a\rb\r\n\r\n", HTTPStatus.BAD_REQUEST, "CRLF"),
        (b"POST  /x HTTP/1.1\r\n\r\n", HTTPStatus.BAD_REQUEST, "bad request line"),
        (b"POST /x HTTP/1.1 \r\n\r\n", HTTPStatus.BAD_REQUEST, "bad request line"),
        (b"POST /x\r\n\r\n", HTTPStatus.BAD_REQUEST, "bad request line"),  # HTTP/0.9
        (b"POST /x HTTP/1.10\r\n\r\n", HTTPStatus.BAD_REQUEST, "bad request line"),
        (b"PO(ST /x HTTP/1.1\r\n\r\n", HTTPStatus.BAD_REQUEST, "bad request line"),
        (b"POST /a b HTTP/1.1\r\n\r\n", HTTPStatus.BAD_REQUEST, "bad request line"),
        (b"\r\n", HTTPStatus.BAD_REQUEST, "bad request line"),
        (b"POST /x HTTP/2.0\r\n\r\n", HTTPStatus.HTTP_VERSION_NOT_SUPPORTED, "HTTP/2.0"),
        (b"POST /x HTTP/1.1\r\nContent-Length : 5\r\n\r\n", HTTPStatus.BAD_REQUEST, "bad header"),
        (b"POST /x HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n", HTTPStatus.BAD_REQUEST, "bad header"),
        (b"POST /x HTTP/1.1\r\n\tfolded: a\r\n\r\n", HTTPStatus.BAD_REQUEST, "bad header"),
        (b"POST /x HTTP/1.1\r\nno colon\r\n\r\n", HTTPStatus.BAD_REQUEST, "bad header"),
        (b"POST /x HTTP/1.1\r\n: empty name\r\n\r\n", HTTPStatus.BAD_REQUEST, "bad header"),
        (b"POST /x HTTP/1.1\r\nX-A: a\x00b\r\n\r\n", HTTPStatus.BAD_REQUEST, "control character"),
        (b"POST /x HTTP/1.1\r\nX-A: a\x7fb\r\n\r\n", HTTPStatus.BAD_REQUEST, "control character"),
    ],
)
def test_malformed_heads_are_refused_with_a_reason(
    data: bytes, status: HTTPStatus, message: str
) -> None:
    error = refused(data)
    assert error.status == status
    assert message in str(error)


def test_oversized_heads_are_refused() -> None:
    long_target = b"/" + b"a" * MAX_REQUEST_LINE
    assert refused(b"GET " + long_target + b" HTTP/1.1\r\n\r\n").status == 414
    long_field = b"X-A: " + b"a" * MAX_FIELD_LINE + b"\r\n"
    assert refused(b"GET / HTTP/1.1\r\n" + long_field + b"\r\n").status == 431
    many = b"".join(b"X-%d: v\r\n" % i for i in range(MAX_FIELDS + 1))
    error = refused(b"GET / HTTP/1.1\r\n" + many + b"\r\n")
    assert error.status == 431 and "header fields" in str(error)
    exactly = b"".join(b"X-%d: v\r\n" % i for i in range(MAX_FIELDS))
    assert head(b"GET / HTTP/1.1\r\n" + exactly + b"\r\n") is not None


@pytest.mark.parametrize(
    "data", [b"POST /x HTTP/1.1", b"POST /x HTTP/1.1\r\nHost: a\r\n", b"POST /x HTTP/1.1\r\nHo"]
)
def test_a_head_cut_short_is_a_lost_connection(data: bytes) -> None:
    with pytest.raises(ConnectionError):
        head(data)


# -- the same, through the receiver -------------------------------------------------------------

BODY = (
    b'{"eventType": "START", "eventTime": "2026-11-22T06:00:00.000Z", "producer": "p", '
    b'"run": {"runId": "r1"}, "job": {"namespace": "n", "name": "j"}}'
)
POST = b"POST /api/v1/lineage HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n" % len(BODY)


@pytest.fixture
def receiver() -> Iterator[tuple[Receiver, list[str]]]:
    got: list[str] = []
    server = Receiver(
        lambda text, _event: got.append(text),
        Settings.of(port=0, header_timeout=2.0, body_timeout=2.0),
    )
    server.start()
    yield server, got
    server.stop()


def exchange(receiver: Receiver, data: bytes) -> bytes:
    """Send `data`; everything answered until the server closes the connection."""
    with socket.create_connection(receiver.address, timeout=5) as sock:
        sock.sendall(data)
        out = b""
        while chunk := sock.recv(65536):
            out += chunk
    return out


def test_kept_alive_requests_are_answered_in_turn_then_close(
    receiver: tuple[Receiver, list[str]],
) -> None:
    server, got = receiver
    answer = exchange(server, POST + b"\r\n" + BODY + POST + b"Connection: close\r\n\r\n" + BODY)
    assert answer.count(b"HTTP/1.1 201 Created\r\n") == 2
    assert answer.endswith(b"Connection: close\r\n\r\n{}")
    assert got == [BODY.decode()] * 2


def test_http_1_0_is_answered_and_closed(receiver: tuple[Receiver, list[str]]) -> None:
    server, got = receiver
    answer = exchange(server, POST.replace(b"HTTP/1.1", b"HTTP/1.0") + b"\r\n" + BODY)
    assert answer.startswith(b"HTTP/1.1 201 ") and b"Connection: close" in answer
    assert len(got) == 1


def test_a_malformed_head_gets_a_json_400_and_the_connection_is_closed(
    receiver: tuple[Receiver, list[str]],
) -> None:
    server, got = receiver
    # what follows the bad field must never run as a request
    answer = exchange(server, POST + b"Bad Name: x\r\n\r\n" + BODY + POST + b"\r\n" + BODY)
    assert answer.startswith(b"HTTP/1.1 400 Bad Request\r\n")
    assert answer.count(b"HTTP/1.1") == 1
    assert b'{"error": "bad header field line' in answer and b"Connection: close" in answer
    assert got == []


def test_other_methods_are_refused(receiver: tuple[Receiver, list[str]]) -> None:
    server, _ = receiver
    assert exchange(server, b"PUT /api/v1/lineage HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 405 ")
    assert exchange(server, b"HEAD / HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 501 ")
    answer = exchange(server, b"GET /nothing HTTP/1.1\r\nConnection: close\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 404 ") and answer.endswith(b'{"error": "not found"}')


def test_expect_100_continue_gets_a_100_before_the_body(
    receiver: tuple[Receiver, list[str]],
) -> None:
    server, got = receiver
    with socket.create_connection(server.address, timeout=5) as sock:
        sock.sendall(POST + b"Expect: 100-continue\r\nConnection: close\r\n\r\n")
        assert sock.recv(65536) == b"HTTP/1.1 100 Continue\r\n\r\n"
        sock.sendall(BODY)
        assert sock.recv(65536).startswith(b"HTTP/1.1 201 ")
    assert len(got) == 1
