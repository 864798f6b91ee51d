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
import email.utils
import hmac
import io
import json
import logging
import re
import socket
import socketserver
import threading
import time
import urllib.parse
import zlib
from collections.abc import Callable, Mapping
from http import HTTPStatus
from typing import Any

from lineage_quality.producer import rawjson
from lineage_quality.producer.events import InvalidEventError, check_event
from lineage_quality.producer.http_request import RequestError, RequestHead, read_head
from lineage_quality.producer.routes import Route
from lineage_quality.producer.settings import DEFAULTS, Settings
from lineage_quality.producer.spool import SpoolFullError

log = logging.getLogger(__name__)

LINEAGE_PATH = "/api/v1/lineage"
RUNS_PATH = "/api/v1/runs"  # GET /api/v1/runs/{runId}: a run's verdicts (lineage-quality gate)


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


# What one event may hold before any Python object is built for it. Parsed JSON costs ~50 bytes
# per value: 16 MiB of `{}` would cost ~400 MB in the receiver and again in each worker. Real
# listener events hold a few thousand values (wide schemas with column lineage: tens of thousands).
MAX_JSON_CONTAINERS = 200_000  # objects + arrays
MAX_JSON_VALUES = 1_000_000  # separators: an upper bound on members and items


def check_structure(body: bytes) -> None:
    """Refuse (413) a body with more containers or values than an event needs. Counted on the
    bytes (braces and commas inside strings count too: a safe over-estimate) in C speed."""
    containers = body.count(b"{") + body.count(b"[")
    if containers > MAX_JSON_CONTAINERS:
        raise RejectedError(
            HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
            f"body holds over {MAX_JSON_CONTAINERS} JSON objects/arrays",
        )
    values = body.count(b",") + body.count(b":")
    if values > MAX_JSON_VALUES:
        raise RejectedError(
            HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"body holds over {MAX_JSON_VALUES} JSON values"
        )


def decode_event(body: bytes, encoding: str | None, limit: int) -> str:
    """The event's JSON text, validated as an OpenLineage-shaped object."""
    return decode(body, encoding, limit)[0]


def decode(body: bytes, encoding: str | None, limit: int) -> tuple[str, dict[str, Any]]:
    """The event's JSON text and the event parsed from it (parsed once, here), validated as an
    OpenLineage-shaped object."""
    if (encoding or "").lower() == "gzip":
        body = _gunzip(body, limit)
    elif encoding and encoding.lower() != "identity":
        raise RejectedError(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, f"unsupported encoding {encoding}")
    check_structure(body)
    try:
        text = body.decode("utf-8")
        event = rawjson.loads_plain(text)
    except (UnicodeDecodeError, ValueError) as exc:
        raise RejectedError(HTTPStatus.BAD_REQUEST, f"body is not JSON: {exc}") from exc
    except RecursionError as exc:
        raise RejectedError(HTTPStatus.BAD_REQUEST, "body is not JSON: nested too deep") from exc
    try:
        check_event(event)
    except InvalidEventError as exc:
        raise RejectedError(HTTPStatus.BAD_REQUEST, str(exc)) from exc
    return text, event


# RFC 9112 7.1: chunk-size = 1*HEXDIG, then optional extensions; nothing else (no `0x`, sign,
# underscore or space), so a front proxy and this receiver can never disagree on where it ends.
_CHUNK_SIZE = re.compile(rb"([0-9A-Fa-f]{1,15})(?:;[^\r\n]*)?\r\n")
_DIGITS = re.compile(r"[0-9]{1,19}")


def _malformed(what: str) -> RejectedError:
    return RejectedError(HTTPStatus.BAD_REQUEST, f"malformed chunked body: {what}")


def _read_chunked(stream: io.BufferedIOBase, limit: int) -> bytes:
    parts: list[bytes] = []
    total = 0
    while True:
        line = stream.readline(1024)
        m = _CHUNK_SIZE.fullmatch(line)
        if m is None:
            raise _malformed("bad chunk size line")
        size = int(m.group(1), 16)
        if size == 0:
            for _ in range(100):  # trailers, then the empty line
                trailer = stream.readline(8192)
                if trailer == b"\r\n":
                    return b"".join(parts)
                if not trailer.endswith(b"\r\n"):
                    raise _malformed("bad trailer")
            raise _malformed("too many trailers")
        total += size
        if total > limit:
            raise RejectedError(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"body over {limit} bytes")
        chunk = stream.read(size)
        if len(chunk) != size:
            raise _malformed("ends early")
        parts.append(chunk)
        if stream.read(2) != b"\r\n":
            raise _malformed("chunk not followed by CRLF")


_FULL = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
    b"Retry-After: 1\r\nConnection: close\r\nContent-Length: 33\r\n\r\n"
    b'{"error": "too many connections"}'
)


class _Server(socketserver.ThreadingTCPServer):
    """A thread per connection, at most `max_connections` of them: beyond that a connection is
    answered 503 at once and closed, so idle or trickling clients cannot starve real senders of
    threads (and of memory)."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, receiver: Receiver, address: tuple[str, int], max_connections: int) -> None:
        super().__init__(address, _Connection)
        self.receiver = receiver
        self.max_connections = max_connections
        self._active = 0
        self._active_lock = threading.Lock()

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._active_lock:
            full = self._active >= self.max_connections
            if not full:
                self._active += 1
        if full:
            log.warning("refusing a connection: %d open already", self.max_connections)
            with contextlib.suppress(OSError):
                request.settimeout(1.0)
                request.sendall(_FULL)
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except Exception:
            with self._active_lock:
                self._active -= 1
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self._active_lock:
                self._active -= 1


def _authorized(header: str, key: str) -> bool:
    """`Bearer <key>`; the scheme is case-insensitive (RFC 9110 11.1), the key compared in
    constant time."""
    scheme, _, given = header.strip().partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(given.strip().encode(), key.encode())


SERVER = b"lineage-quality"
_CREATED_TAIL = b"Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
_CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"
_date_cache: tuple[int, bytes] = (0, b"")


def _http_date() -> bytes:
    """The Date header's value (RFC 9110 5.6.7), formatted once a second."""
    global _date_cache
    now = int(time.time())
    if _date_cache[0] != now:
        _date_cache = (now, email.utils.formatdate(now, usegmt=True).encode())
    return _date_cache[1]


def _response(
    status: HTTPStatus | int,
    content_type: str,
    body: bytes,
    headers: Mapping[str, str] | None = None,
    close: bool = False,
) -> bytes:
    """One whole answer (status line, headers, body), to be sent in one write."""
    status = HTTPStatus(status)
    lines = [
        b"HTTP/1.1 %d %s" % (status.value, status.phrase.encode()),
        b"Server: " + SERVER,
        b"Date: " + _http_date(),
        b"Content-Type: " + content_type.encode("latin-1"),
        b"Content-Length: %d" % len(body),
    ]
    lines += [f"{name}: {value}".encode("latin-1") for name, value in (headers or {}).items()]
    if close:
        lines.append(b"Connection: close")
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


class _Connection(socketserver.StreamRequestHandler):
    """One client connection: its requests one after the other (HTTP/1.1 keep-alive), read with
    `http_request.read_head`, answered in one write each."""

    server: _Server
    # answers are one write each, but a client's request may be: without this, Nagle + delayed
    # ACK stall kept-alive exchanges by ~40 ms
    disable_nagle_algorithm = True

    head: RequestHead
    close_connection = False
    body_read = False  # whether the request's body was read (else the connection is closed)

    def setup(self) -> None:
        super().setup()
        self.receiver = self.server.receiver
        # per read; the reaper enforces the header and body deadlines
        self.connection.settimeout(self.receiver.settings.idle_timeout)
        with self.receiver._lock:
            self.receiver._connections.add(self.connection)

    def finish(self) -> None:
        with self.receiver._lock:
            self.receiver._connections.discard(self.connection)
        with contextlib.suppress(OSError):  # the peer may be gone already
            super().finish()

    def handle(self) -> None:
        while not self.close_connection:
            self._handle_one()

    def _handle_one(self) -> None:
        # Idle keep-alive: wait for the next request's first byte (per-read timeout).
        # From that byte on, the headers must all arrive within `header_timeout`.
        try:
            first = self.rfile.peek(1)  # type: ignore[attr-defined]  # a BufferedReader
        except (TimeoutError, OSError):
            self.close_connection = True
            return
        if not first:
            self.close_connection = True
            return
        self.receiver._deadline(self.connection, self.receiver.header_timeout)
        try:
            self._request()
        except (ConnectionError, TimeoutError) as exc:
            log.warning("connection from %s lost: %s", self.client_address[0], exc)
            self.close_connection = True
        except OSError:
            self.close_connection = True
        finally:
            self.receiver._deadline(self.connection, None)

    def _request(self) -> None:
        self.body_read = False
        try:
            head = read_head(self.rfile)
        except RequestError as exc:
            log.warning("rejected request from %s: %s", self.client_address[0], exc)
            self.close_connection = True
            self._reply(exc.status, {"error": str(exc)})
            return
        if head is None:
            self.close_connection = True
            return
        self.head = head
        self.close_connection = not head.keep_alive
        log.debug("%s %s %s", self.client_address[0], head.method, head.target[:200])
        if head.method == "POST":
            self._post()
        elif head.method == "GET":
            self.body_read = True  # a GET's body, if any, is refused as a next request
            self._get()
        elif head.method in ("PUT", "DELETE", "PATCH"):
            self._reply(HTTPStatus.METHOD_NOT_ALLOWED, {"error": f"POST to {LINEAGE_PATH}"})
        else:
            self._reply(HTTPStatus.NOT_IMPLEMENTED, {"error": f"unsupported method {head.method}"})

    def _send(self, data: bytes) -> None:
        self.connection.sendall(data)

    def _reply(
        self,
        status: HTTPStatus,
        payload: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        if not self.body_read:
            self.close_connection = True  # unread body bytes must not become a request
        data = json.dumps(payload or {}).encode()
        self._send(_response(status, "application/json", data, headers, self.close_connection))

    def _authorized(self) -> bool:
        key = self.receiver.api_key
        return key is None or _authorized(self.head.get("authorization") or "", key)

    # -- GET ------------------------------------------------------------------------------------

    def _get(self) -> None:
        receiver = self.receiver
        path = self.head.path
        route = receiver.routes.get(path)
        if route is not None:
            self._route(route)
        elif path in ("/healthz", "/health"):
            self._reply(HTTPStatus.OK, {"status": "ok"})
        elif path.startswith(RUNS_PATH + "/") and receiver.runs is not None:
            if not self._authorized():
                self._reply(HTTPStatus.UNAUTHORIZED, {"error": "missing or wrong API key"})
                return
            run_id = urllib.parse.unquote(path[len(RUNS_PATH) + 1 :])
            try:
                status, payload = receiver.runs(run_id)
            except Exception:
                log.exception("could not answer for run %s", run_id)
                self._reply(HTTPStatus.SERVICE_UNAVAILABLE, {"error": "try again"})
                return
            self._reply(HTTPStatus(status), payload)
        else:
            self._reply(HTTPStatus.NOT_FOUND, {"error": "not found"})

    def _route(self, route: Route) -> None:
        if route.needs_key and not self._authorized():
            self._reply(HTTPStatus.UNAUTHORIZED, {"error": "missing or wrong API key"})
            return
        try:
            reply = route.handler()
        except Exception:
            log.exception("could not answer GET %s", self.head.target[:200])
            self._reply(HTTPStatus.SERVICE_UNAVAILABLE, {"error": "try again"})
            return
        self._send(
            _response(reply.status, reply.content_type, reply.body, close=self.close_connection)
        )

    # -- POST -----------------------------------------------------------------------------------

    def _post(self) -> None:
        receiver = self.receiver
        try:
            self._receive()
        except RejectedError as exc:
            log.warning("rejected request from %s: %s", self.client_address[0], exc)
            if receiver.on_refused is not None:
                receiver.on_refused(int(exc.status))
            extra = {"Retry-After": "5"} if exc.status == HTTPStatus.SERVICE_UNAVAILABLE else {}
            self._reply(exc.status, {"error": str(exc)}, extra)
        except (ConnectionError, TimeoutError):
            raise  # the connection is closed (see _handle_one)
        except Exception:
            log.exception("unexpected error on a request from %s", self.client_address[0])
            self.close_connection = True
            self._reply(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": "internal error"})

    def _read_body(self) -> bytes:
        limit = self.receiver.max_body
        encodings = self.head.get_all("transfer-encoding")
        lengths = self.head.get_all("content-length")
        if encodings and lengths:
            # Request smuggling: two framings; a proxy may have used the other one.
            raise RejectedError(HTTPStatus.BAD_REQUEST, "both Transfer-Encoding and Content-Length")
        if encodings:
            if len(encodings) != 1 or encodings[0].lower() != "chunked":
                raise RejectedError(
                    HTTPStatus.NOT_IMPLEMENTED, "Transfer-Encoding must be exactly `chunked`"
                )
            # The Java HTTP transport streams gzip bodies chunked, without a length.
            self._continue()
            return _read_chunked(self.rfile, limit)
        if not lengths:
            raise RejectedError(HTTPStatus.LENGTH_REQUIRED, "Content-Length is required")
        if len(lengths) != 1 or not _DIGITS.fullmatch(lengths[0]):
            raise RejectedError(HTTPStatus.BAD_REQUEST, "bad Content-Length")
        length = int(lengths[0])
        if length > limit:
            raise RejectedError(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"body over {limit} bytes")
        self._continue()
        body = self.rfile.read(length)
        if len(body) != length:
            raise ConnectionError("body ends before Content-Length")
        return body

    def _continue(self) -> None:
        """`Expect: 100-continue`: the body is wanted (sent only once the request passed every
        check that needs no body)."""
        if self.head.expects_continue:
            self._send(_CONTINUE)

    def _receive(self) -> None:
        receiver = self.receiver
        if self.head.path != LINEAGE_PATH:
            raise RejectedError(HTTPStatus.NOT_FOUND, f"POST to {LINEAGE_PATH}")
        if not self._authorized():
            raise RejectedError(HTTPStatus.UNAUTHORIZED, "missing or wrong API key")
        ctype = (self.head.get("content-type") or "application/json").lower()
        if "json" not in ctype:
            raise RejectedError(
                HTTPStatus.UNSUPPORTED_MEDIA_TYPE, f"Content-Type must be JSON, not {ctype[:80]}"
            )
        receiver._deadline(self.connection, receiver.body_timeout)
        body = self._read_body()
        self.body_read = True
        text, event = decode(body, self.head.get("content-encoding"), receiver.max_body)
        try:
            receiver.take(text, event)
        except SpoolFullError as exc:
            raise RejectedError(HTTPStatus.SERVICE_UNAVAILABLE, str(exc)) from exc
        except Exception as exc:
            log.error("could not store event: %s", exc)
            raise RejectedError(
                HTTPStatus.SERVICE_UNAVAILABLE, "event could not be stored"
            ) from exc
        if self.close_connection:
            self._reply(HTTPStatus.CREATED)
        else:  # nearly every request: the 201 without per-call formatting
            self._send(
                b"HTTP/1.1 201 Created\r\nServer: %s\r\nDate: %s\r\n%s"
                % (SERVER, _http_date(), _CREATED_TAIL)
            )


class Receiver:
    """Runs the HTTP server on a background thread; `accept` is called with each event's JSON
    text and the event parsed from it (validated), and must have stored it when it returns.
    Reads its part of `settings`: host, port, api_key, max_body, the timeouts, max_connections."""

    def __init__(
        self,
        accept: Callable[[str, dict[str, Any]], None],
        settings: Settings = DEFAULTS,
        *,
        runs: Callable[[str], tuple[int, dict[str, Any]]] | None = None,
        routes: Mapping[str, Route] | None = None,
        on_refused: Callable[[int], None] | None = None,
    ) -> None:
        self.take = accept
        self.runs = runs
        self.routes = dict(routes or {})  # e.g. /metrics, /readyz (see routes.py)
        self.on_refused = on_refused  # status of each refused POST, for metrics
        self.settings = settings
        self.header_timeout = settings.header_timeout
        self.body_timeout = settings.body_timeout
        self._deadlines: dict[socket.socket, float] = {}
        self.api_key = settings.api_key
        self.max_body = settings.max_body
        self._lock = threading.Lock()
        self._connections: set[socket.socket] = set()
        self._server = _Server(self, (settings.host, settings.port), settings.max_connections)
        self._thread: threading.Thread | None = None
        self._reaper: threading.Thread | None = None
        self._stopped = threading.Event()

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
        self._reaper = threading.Thread(target=self._reap, name="lq-receiver-reaper", daemon=True)
        self._reaper.start()

    def _deadline(self, conn: socket.socket, seconds: float | None) -> None:
        with self._lock:
            if seconds is None:
                self._deadlines.pop(conn, None)
            else:
                self._deadlines[conn] = time.monotonic() + seconds

    def _reap(self) -> None:
        """Cut connections whose request is past its deadline: a client trickling headers or a
        body a byte at a time holds a thread only that long."""
        while not self._stopped.wait(0.25):
            now = time.monotonic()
            with self._lock:
                late = [c for c, t in self._deadlines.items() if t < now]
                for conn in late:
                    del self._deadlines[conn]
            for conn in late:
                log.warning("closing a connection whose request is past its deadline")
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)

    def stop(self) -> None:
        """Stop accepting, and end the kept-alive connections (no request after stop)."""
        self._stopped.set()
        if self._thread is not None:  # shutdown() would wait forever for a loop never started
            self._server.shutdown()
        self._server.server_close()
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
