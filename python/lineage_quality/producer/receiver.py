"""HTTP endpoint compatible with the OpenLineage HTTP transport: `POST /api/v1/lineage`.

Accepts JSON bodies, gzip-compressed when the transport compresses, optional Bearer API key (the
transport's `api_key` auth). An event is durable in the spool before the 201 goes back.

Every bad request gets a 4xx with a JSON `{"error": ...}` saying why, and a log line (never
headers, never the key): 400 malformed JSON / gzip / chunking or not an OpenLineage event (see
`events.check_event`), 401 wrong or missing key, 404 wrong path, 411 no length, 413 over
`max_body` (also once inflated), 415 not JSON / unknown Content-Encoding. 503 when the spool is
full or cannot store (the sender knows it was not taken). HTTP/1.1 keep-alive; a connection whose
body was not read is closed after the answer.
"""

from __future__ import annotations

import contextlib
import hmac
import io
import json
import logging
import socket
import threading
import zlib
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import NoReturn

from lineage_quality.producer.events import InvalidEventError, check_event
from lineage_quality.producer.spool import SpoolFullError

log = logging.getLogger(__name__)

LINEAGE_PATH = "/api/v1/lineage"
DEFAULT_MAX_BODY = 16 * 1024 * 1024
IDLE_TIMEOUT = 60.0  # seconds a connection may sit idle (or stall mid-request)


class RejectedError(Exception):
    def __init__(self, status: HTTPStatus, message: str) -> None:
        super().__init__(message)
        self.status = status


def _gunzip(body: bytes, limit: int) -> bytes:
    # Bounded inflate: a gzip bomb stops at `limit` instead of filling memory.
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = inflater.decompress(body, limit + 1)
    except zlib.error as exc:
        raise RejectedError(HTTPStatus.BAD_REQUEST, f"invalid gzip body: {exc}") from exc
    if len(out) > limit or inflater.unconsumed_tail:
        raise RejectedError(
            HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"body inflates past {limit} bytes"
        )
    if not inflater.eof:
        raise RejectedError(HTTPStatus.BAD_REQUEST, "invalid gzip body: truncated")
    return out


def decode_event(body: bytes, encoding: str | None, limit: int) -> str:
    """The event's JSON text, validated as an OpenLineage-shaped object."""
    if (encoding or "").lower() == "gzip":
        body = _gunzip(body, limit)
    elif encoding and encoding.lower() != "identity":
        raise RejectedError(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, f"unsupported encoding {encoding}")
    try:
        text = body.decode("utf-8")
        event = json.loads(text, parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError) as exc:
        raise RejectedError(HTTPStatus.BAD_REQUEST, f"body is not JSON: {exc}") from exc
    except RecursionError as exc:
        raise RejectedError(HTTPStatus.BAD_REQUEST, "body is not JSON: nested too deep") from exc
    try:
        check_event(event)
    except InvalidEventError as exc:
        raise RejectedError(HTTPStatus.BAD_REQUEST, str(exc)) from exc
    return text


def _no_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not JSON")


def _read_chunked(stream: io.BufferedIOBase, limit: int) -> bytes:
    parts: list[bytes] = []
    total = 0
    while True:
        line = stream.readline(1024)
        try:
            size = int(line.split(b";", 1)[0].strip(), 16)
        except ValueError as exc:
            raise RejectedError(HTTPStatus.BAD_REQUEST, "malformed chunked body") from exc
        if size < 0:
            raise RejectedError(HTTPStatus.BAD_REQUEST, "malformed chunked body")
        if size == 0:
            while stream.readline(1024) not in (b"\r\n", b"\n", b""):
                pass  # trailers
            return b"".join(parts)
        total += size
        if total > limit:
            raise RejectedError(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"body over {limit} bytes")
        chunk = stream.read(size)
        if len(chunk) != size:
            raise RejectedError(HTTPStatus.BAD_REQUEST, "chunked body ends early")
        parts.append(chunk)
        stream.readline(1024)  # CRLF after each chunk


class Receiver:
    """Runs the HTTP server on a background thread; `accept` is called with each event's JSON."""

    def __init__(
        self,
        accept: Callable[[str], None],
        host: str = "127.0.0.1",
        port: int = 5055,
        api_key: str | None = None,
        max_body: int = DEFAULT_MAX_BODY,
    ) -> None:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            server_version = "lineage-quality"
            protocol_version = "HTTP/1.1"  # keep-alive, as the transports' HTTP clients expect
            timeout = IDLE_TIMEOUT
            body_read = False

            def setup(self) -> None:
                super().setup()
                # headers and body are two writes: without this, Nagle + delayed ACK stall each
                # kept-alive answer by ~40 ms
                with contextlib.suppress(OSError):
                    self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                with receiver._lock:
                    receiver._connections.add(self.connection)

            def finish(self) -> None:
                with receiver._lock:
                    receiver._connections.discard(self.connection)
                super().finish()

            def log_message(self, format: str, *args: object) -> None:
                log.debug("%s " + format, self.address_string(), *args)

            def _reply(
                self,
                status: HTTPStatus,
                payload: dict[str, str] | None = None,
                headers: dict[str, str] | None = None,
            ) -> None:
                data = json.dumps(payload or {}).encode()
                if not self.body_read:
                    self.close_connection = True  # unread body bytes must not become a request
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                if self.close_connection:
                    self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self.body_read = True
                if self.path in ("/healthz", "/health"):
                    self._reply(HTTPStatus.OK, {"status": "ok"})
                else:
                    self._reply(HTTPStatus.NOT_FOUND, {"error": "not found"})

            def do_POST(self) -> None:
                self.body_read = False
                try:
                    self._receive()
                except RejectedError as exc:
                    log.warning("rejected request from %s: %s", self.address_string(), exc)
                    extra = (
                        {"Retry-After": "5"} if exc.status == HTTPStatus.SERVICE_UNAVAILABLE else {}
                    )
                    self._reply(exc.status, {"error": str(exc)}, extra)
                except (ConnectionError, TimeoutError) as exc:
                    log.warning("connection from %s lost: %s", self.address_string(), exc)
                    self.close_connection = True
                except Exception:
                    log.exception("unexpected error on a request from %s", self.address_string())
                    self.close_connection = True
                    self._reply(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": "internal error"})

            def _other(self) -> None:
                self._reply(HTTPStatus.METHOD_NOT_ALLOWED, {"error": f"POST to {LINEAGE_PATH}"})

            do_PUT = do_DELETE = do_PATCH = _other

            def _read_body(self) -> bytes:
                limit = receiver.max_body
                if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
                    # The Java HTTP transport streams gzip bodies chunked, without a length.
                    return _read_chunked(self.rfile, limit)
                length_text = self.headers.get("Content-Length")
                if length_text is None:
                    raise RejectedError(HTTPStatus.LENGTH_REQUIRED, "Content-Length is required")
                try:
                    length = int(length_text.strip())
                except ValueError as exc:
                    raise RejectedError(HTTPStatus.BAD_REQUEST, "bad Content-Length") from exc
                if length < 0 or length > limit:
                    raise RejectedError(
                        HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"body over {limit} bytes"
                    )
                body = self.rfile.read(length)
                if len(body) != length:
                    raise ConnectionError("body ends before Content-Length")
                return body

            def _receive(self) -> None:
                if self.path.split("?", 1)[0].rstrip("/") != LINEAGE_PATH:
                    raise RejectedError(HTTPStatus.NOT_FOUND, f"POST to {LINEAGE_PATH}")
                if receiver.api_key is not None:
                    given = self.headers.get("Authorization", "")
                    expected = f"Bearer {receiver.api_key}"
                    if not hmac.compare_digest(given.encode(), expected.encode()):
                        raise RejectedError(HTTPStatus.UNAUTHORIZED, "missing or wrong API key")
                ctype = (self.headers.get("Content-Type") or "application/json").lower()
                if "json" not in ctype:
                    raise RejectedError(
                        HTTPStatus.UNSUPPORTED_MEDIA_TYPE,
                        f"Content-Type must be JSON, not {ctype[:80]}",
                    )
                body = self._read_body()
                self.body_read = True
                text = decode_event(body, self.headers.get("Content-Encoding"), receiver.max_body)
                try:
                    accept(text)
                except SpoolFullError as exc:
                    raise RejectedError(HTTPStatus.SERVICE_UNAVAILABLE, str(exc)) from exc
                except Exception as exc:
                    log.error("could not store event: %s", exc)
                    raise RejectedError(
                        HTTPStatus.SERVICE_UNAVAILABLE, "event could not be stored"
                    ) from exc
                self._reply(HTTPStatus.CREATED)

        self.api_key = api_key
        self.max_body = max_body
        self._lock = threading.Lock()
        self._connections: set[socket.socket] = set()
        self._server = ThreadingHTTPServer((host, port), Handler)
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def address(self) -> tuple[str, int]:
        host, port = self._server.server_address[:2]
        return str(host), int(port)

    @property
    def url(self) -> str:
        host, port = self.address
        return f"http://{host}:{port}"

    def start(self) -> None:
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.1,), name="lq-receiver", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        """Stop accepting, and end the kept-alive connections (no request after stop)."""
        if self._thread is not None:  # shutdown() would wait forever for a loop never started
            self._server.shutdown()
        self._server.server_close()
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
