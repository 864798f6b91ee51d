"""One client connection: its requests one after the other (HTTP/1.1 keep-alive), each head read
with `request.read_head`, routed through the route table, and answered in one write.

Every refused request gets a 4xx/5xx with a JSON `{"error": ...}` saying why, and a log line
(never headers, never the key). A connection whose request body was not read is closed after the
answer: unread body bytes must never be taken for a next request. Deadlines (headers, body) are
enforced by the server's reaper, which cuts the connection.
"""

from __future__ import annotations

import contextlib
import email.utils
import hmac
import json
import logging
import socket
import socketserver
import time
from collections.abc import Callable, Mapping
from http import HTTPStatus
from typing import TYPE_CHECKING, Any, Protocol

from lineage_quality.producer.receiver.body import RejectedError, body_length, read_body
from lineage_quality.producer.receiver.request import RequestError, RequestHead, read_head
from lineage_quality.producer.receiver.routes import CREATED, LINEAGE_PATH, Reply, Route

if TYPE_CHECKING:
    from lineage_quality.producer.receiver.routes import RouteTable
    from lineage_quality.producer.settings import Settings


class Host(Protocol):
    """What a connection needs of the receiver it serves (server.py's Receiver): its settings and
    routes, and the bookkeeping of open connections and their deadlines. Declared here, so that
    this module does not import server.py, which imports it."""

    settings: Settings
    routes: RouteTable
    on_refused: Callable[[int], None] | None

    def opened(self, conn: socket.socket) -> None: ...

    def closed(self, conn: socket.socket) -> None: ...

    def deadline(self, conn: socket.socket, seconds: float | None) -> None: ...


class HostServer(socketserver.ThreadingTCPServer):
    """The TCP server a connection belongs to (server.py's Server): it knows its receiver."""

    receiver: Host

log = logging.getLogger(__name__)

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


def response(
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


def authorized(header: str, key: str) -> bool:
    """`Bearer <key>`; the scheme is case-insensitive (RFC 9110 11.1), the key compared in
    constant time."""
    scheme, _, given = header.strip().partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(given.strip().encode(), key.encode())


class Connection(socketserver.StreamRequestHandler):
    server: HostServer
    # answers are one write each, but a client's request may be: without this, Nagle + delayed
    # ACK stall kept-alive exchanges by ~40 ms
    disable_nagle_algorithm = True

    head: RequestHead
    tail = ""  # the path after a prefix route's (Request.tail)
    close_connection = False
    body_read = False  # whether the request's body was read (else the connection is closed)
    receiver: Host

    def setup(self) -> None:
        super().setup()
        self.receiver = self.server.receiver
        # per read; the reaper enforces the header and body deadlines
        self.connection.settimeout(self.receiver.settings.receiver.idle_timeout)
        self.receiver.opened(self.connection)

    def finish(self) -> None:
        self.receiver.closed(self.connection)
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
        self.receiver.deadline(self.connection, self.receiver.settings.receiver.header_timeout)
        try:
            self._request()
        except (ConnectionError, TimeoutError) as exc:
            log.warning("connection from %s lost: %s", self.client_address[0], exc)
            self.close_connection = True
        except OSError:
            self.close_connection = True
        finally:
            self.receiver.deadline(self.connection, None)

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

    # -- answers --------------------------------------------------------------------------------

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
        self._send(response(status, "application/json", data, headers, self.close_connection))

    def _send_reply(self, reply: Reply) -> None:
        if reply is CREATED and not self.close_connection:
            # nearly every request: the 201 without per-call formatting
            self._send(
                b"HTTP/1.1 201 Created\r\nServer: %s\r\nDate: %s\r\n%s"
                % (SERVER, _http_date(), _CREATED_TAIL)
            )
            return
        if not self.body_read:
            self.close_connection = True
        headers = dict(reply.headers)
        self._send(
            response(reply.status, reply.content_type, reply.body, headers, self.close_connection)
        )

    def _authorized(self, route: Route) -> bool:
        key = self.receiver.settings.receiver.api_key
        if not route.needs_key or key is None:
            return True
        return authorized(self.head.get("authorization") or "", key)

    # -- GET ------------------------------------------------------------------------------------

    def _get(self) -> None:
        route, self.tail = self.receiver.routes.find("GET", self.head.path)
        if route is None:
            self._reply(HTTPStatus.NOT_FOUND, {"error": "not found"})
            return
        if not self._authorized(route):
            self._reply(HTTPStatus.UNAUTHORIZED, {"error": "missing or wrong API key"})
            return
        try:
            reply = route.handler(self)
        except Exception:
            log.exception("could not answer GET %s", self.head.target[:200])
            self._reply(HTTPStatus.SERVICE_UNAVAILABLE, {"error": "try again"})
            return
        self._send_reply(reply)

    # -- POST -----------------------------------------------------------------------------------

    def _post(self) -> None:
        receiver = self.receiver
        try:
            self._send_reply(self._posted())
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

    def _posted(self) -> Reply:
        route, self.tail = self.receiver.routes.find("POST", self.head.path)
        if route is None:
            raise RejectedError(HTTPStatus.NOT_FOUND, f"POST to {LINEAGE_PATH}")
        if not self._authorized(route):
            raise RejectedError(HTTPStatus.UNAUTHORIZED, "missing or wrong API key")
        return route.handler(self)

    def body(self) -> bytes:
        """The request's body (Request.body): framing checked first, then `100 Continue` when
        the client waits for it, then read within `body_timeout` in all."""
        receiver = self.receiver
        receiver.deadline(self.connection, receiver.settings.receiver.body_timeout)
        limit = receiver.settings.receiver.max_body
        length = body_length(self.head, limit)
        if self.head.expects_continue:
            self._send(_CONTINUE)
        data = read_body(self.rfile, length, limit)
        self.body_read = True
        return data
