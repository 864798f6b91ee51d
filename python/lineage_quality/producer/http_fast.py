"""A fast path for openlineage-python's `HttpTransport` with a plain `http://` URL: one kept-alive
connection per forwarding thread, and no `requests` machinery per event.

`requests` costs ~0.6 ms of CPU per POST (environment proxy and netrc look-ups, cookie jars,
hooks, `email`-parsed response headers), more than everything else the producer does for an
event. This sends what `HttpTransport.emit` sends, configured the usual way (it asks the transport
for the body and headers: URL and endpoint, auth header, custom headers, gzip compression), with
the transport's timeout and its urllib3 `Retry` (status_forcelist, backoff, Retry-After), and
raises what `requests` raises (`HTTPError` with the response for a 4xx/5xx, `ConnectionError`
once the retries are spent).

`FastHttp.for_transport` returns None, and the transport is used as it is, whenever the fast path
could behave differently: another transport class, `https`, a session or adapter of one's own,
credentials in the URL, a proxy from the environment or a `.netrc` entry for the host. A redirect
answer is left to the transport too (`send` returns False).

It trusts nothing it did not ask for: a kept-alive connection carries no request ids, so a byte
the sink sent beyond the answer to a request (an answer written twice by a buggy proxy) would be
taken as the answer to the next one, and that event, never read by the sink, counted as
delivered. So a connection is used again only when its answer framed cleanly by HTTP/1.1's own
rules and nothing has come since (checked before every reuse). And an answer has one deadline,
the transport's timeout from the request on, however it trickles in (a timeout per read let a
sink sending a byte every 0.4 s hold a send for as long as it liked).
"""

from __future__ import annotations

import contextlib
import select
import socket
import threading
import time
from urllib.parse import urljoin

import requests
import requests.utils
import urllib3
from openlineage.client.transport.http import HttpTransport
from requests.structures import CaseInsensitiveDict
from urllib3.exceptions import MaxRetryError, NewConnectionError, ProtocolError, ReadTimeoutError
from urllib3.util import Retry, parse_url

_MAX_LINE = 65536
_MAX_HEADERS = 100
_MAX_BODY = 16 * 1024 * 1024  # an answer's body (an error page) held at most
_MAX_IDLE = 16  # idle connections `send_once` keeps for the next event
_READ = 65536
_HEX = frozenset(b"0123456789abcdefABCDEF")


class _Connection:
    """A socket and the bytes read from it but not yet taken, read against one deadline.

    The answer to a request is read against the request's deadline, set by `start`: a sink
    trickling its answer a byte at a time cannot hold a send past it (a timeout per read
    could). Whatever the sink sent beyond that answer stays in `pending` (or in the socket):
    `clean` says there is none, and a connection that is not clean is never used again."""

    def __init__(self, host: str, port: int, timeout: float) -> None:
        self.sock = socket.create_connection((host, port), timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # as urllib3 does
        self.pending = bytearray()  # read from the socket, not part of an answer taken yet
        self.deadline = 0.0

    def clean(self) -> bool:
        """Nothing came beyond the last answer and the peer has not closed: reusable. A sink
        that wrote anything unasked (an answer twice) would have it taken as the answer to the
        next request."""
        if self.pending:
            return False
        try:
            poller = select.poll()
            poller.register(self.sock, select.POLLIN | select.POLLPRI)
            return not poller.poll(0)  # readable (data or EOF), hung up or in error: no
        except (OSError, ValueError):
            return False

    def start(self, deadline: float) -> None:
        self.deadline = deadline

    def sendall(self, data: bytes) -> None:
        self.sock.settimeout(self._remaining())
        self.sock.sendall(data)  # its timeout bounds the whole send (Python >= 3.5)

    def _remaining(self) -> float:
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("no complete answer within the deadline")
        return remaining

    def _fill(self) -> bool:
        """Read what the socket has, within the deadline; False at the end of the stream."""
        self.sock.settimeout(self._remaining())
        data = self.sock.recv(_READ)
        self.pending += data
        return bool(data)

    def read_line(self) -> bytes:
        searched = 0
        while True:
            end = self.pending.find(b"\n", searched)
            if end >= 0:
                if end >= _MAX_LINE:
                    raise ProtocolError("response line too long")
                line = bytes(self.pending[: end + 1])
                del self.pending[: end + 1]
                return line
            if len(self.pending) > _MAX_LINE:
                raise ProtocolError("response line too long")
            searched = len(self.pending)
            if not self._fill():
                raise ProtocolError("connection closed by the sink before an answer")

    def read(self, size: int) -> bytes:
        while len(self.pending) < size:
            if not self._fill():
                raise ProtocolError("response ends before its framing says")
        data = bytes(self.pending[:size])
        del self.pending[:size]
        return data

    def read_to_close(self) -> bytes:
        while self._fill():
            if len(self.pending) > _MAX_BODY:
                raise ProtocolError("response body too large")
        data = bytes(self.pending)
        self.pending.clear()
        return data

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()


class _Answer:
    def __init__(self, status: int, reason: str, headers: dict[str, str], body: bytes) -> None:
        self.status = status
        self.reason = reason
        self.headers = headers  # lower-case names
        self.body = body


def _read_answer(conn: _Connection) -> tuple[_Answer, bool]:
    """One response and whether the connection may be reused: only when the answer framed
    cleanly by HTTP/1.1's own rules (a kept-alive version and no `Connection: close`, one plain
    Content-Length or exactly `chunked`, no interim answer but 100). Anything lenient, ambiguous
    or malformed raises ProtocolError or leaves the connection to be closed."""
    keep = True
    while True:
        version, status, reason = _status_line(conn.read_line())
        headers = _read_headers(conn)
        if status == 101:  # a protocol switch nobody asked for: nothing after it is HTTP
            raise ProtocolError("the sink switched protocols (101)")
        if status >= 200:
            break
        if status != 100:  # 102, 103...: skipped, but the connection is not trusted again
            keep = False
    connection = {t.strip() for t in headers.get("connection", "").lower().split(",")}
    kept_alive = version == "HTTP/1.1" or (version == "HTTP/1.0" and "keep-alive" in connection)
    if "close" in connection or not kept_alive:
        keep = False
    if status in (204, 304):
        return _Answer(status, reason, headers, b""), keep
    coding = headers.get("transfer-encoding")
    length = headers.get("content-length")
    if coding is not None:
        codings = [c.strip().lower() for c in coding.split(",")]
        if codings[-1] != "chunked":  # delimited by the end of the connection
            return _Answer(status, reason, headers, conn.read_to_close()), False
        if codings != ["chunked"] or length is not None:  # ambiguous: never reused
            keep = False
        return _Answer(status, reason, headers, _read_chunked(conn)), keep
    if length is None:  # delimited by the end of the connection
        return _Answer(status, reason, headers, conn.read_to_close()), False
    if not (length.isascii() and length.isdigit()) or len(length) > 19:
        raise ProtocolError(f"bad Content-Length {length[:40]!r}")
    if int(length) > _MAX_BODY:
        raise ProtocolError(f"response body too large ({length} bytes)")
    return _Answer(status, reason, headers, conn.read(int(length))), keep


def _read_headers(conn: _Connection) -> dict[str, str]:
    headers: dict[str, str] = {}
    for _ in range(_MAX_HEADERS + 1):
        line = conn.read_line()
        if line in (b"\r\n", b"\n"):
            return headers
        name, sep, value = line.decode("latin-1").partition(":")
        if not sep:
            raise ProtocolError(f"bad header line {line[:80]!r}")
        key = name.strip().lower()
        value = value.strip()
        if key == "content-length" and key in headers:  # two lengths: which frames it?
            raise ProtocolError("two Content-Length headers")
        headers[key] = f"{headers[key]}, {value}" if key in headers else value
    raise ProtocolError("too many response headers")


def _status_line(line: bytes) -> tuple[str, int, str]:
    parts = line.decode("latin-1").rstrip("\r\n").split(" ", 2)
    if (
        len(parts) < 2
        or not parts[0].startswith("HTTP/")
        or len(parts[1]) != 3
        or not (parts[1].isascii() and parts[1].isdigit())
    ):
        raise ProtocolError(f"bad status line {line[:80]!r}")
    return parts[0], int(parts[1]), parts[2] if len(parts) > 2 else ""


def _read_chunked(conn: _Connection) -> bytes:
    parts: list[bytes] = []
    total = 0
    while True:
        size_text = conn.read_line().split(b";", 1)[0].strip(b" \t\r\n")
        if not size_text or len(size_text) > 16 or not _HEX.issuperset(size_text):
            raise ProtocolError(f"bad chunk size {size_text[:40]!r}")  # no 0x, +, -, _
        size = int(size_text, 16)
        if size == 0:
            for _ in range(_MAX_HEADERS + 1):  # trailers
                if conn.read_line() in (b"\r\n", b"\n"):
                    return b"".join(parts)
            raise ProtocolError("too many trailer fields")
        total += size
        if total > _MAX_BODY:
            raise ProtocolError("response body too large")
        parts.append(conn.read(size))
        if conn.read_line() not in (b"\r\n", b"\n"):
            raise ProtocolError("chunk data longer than its size")


class FastHttp:
    """POSTs events as `transport.emit` would, on one kept-alive connection per thread."""

    def __init__(self, transport: HttpTransport, url: str) -> None:
        self.transport = transport
        self.url = url
        parsed = parse_url(url)
        self.host = (parsed.host or "").strip("[]")
        self.port = parsed.port or 80
        self.target = parsed.request_uri
        host = parsed.host or ""
        self.host_header = host if parsed.port in (None, 80) else f"{host}:{parsed.port}"
        self.timeout = float(transport.timeout)
        self.retry = Retry(**transport.config.retry)  # what HttpTransport mounts on its session
        self._local = threading.local()
        self._heads: dict[tuple[tuple[str, str], ...], bytes] = {}
        self._open: set[_Connection] = set()
        self._lock = threading.Lock()
        self._idle: list[_Connection] = []  # `send_once`'s kept-alive connections, not in use
        self._closed = False  # `send_once` opens and keeps nothing after `close`

    @classmethod
    def for_transport(cls, transport: object) -> FastHttp | None:
        """The fast path for `transport`, or None where it could differ from `transport.emit`."""
        if type(transport) is not HttpTransport:
            return None
        config = transport.config
        if config.session is not None or config.adapter is not None:
            return None
        if getattr(transport, "_session", None) is not None or transport.cert is not None:
            return None
        url = urljoin(transport.url, transport.endpoint)
        parsed = parse_url(url)
        if parsed.scheme != "http" or parsed.auth or not parsed.host:
            return None
        if requests.utils.get_environ_proxies(url) or requests.utils.get_netrc_auth(url):
            return None
        return cls(transport, url)

    def _request(self, text: str) -> bytes:
        body, extra = self.transport._prepare_request(text)  # auth, custom headers, gzip
        data = body.encode("utf-8") if isinstance(body, str) else body
        return self._head(tuple(extra.items())) + b"%d\r\n\r\n" % len(data) + data

    def _head(self, extra: tuple[tuple[str, str], ...]) -> bytes:
        """The request head up to the Content-Length value; built once per set of transport
        headers (they are the same for every event unless an auth token changes)."""
        cached = self._heads.get(extra)
        if cached is not None:
            return cached
        headers: CaseInsensitiveDict[str] = CaseInsensitiveDict(requests.utils.default_headers())
        headers.update(extra)
        headers.pop("Content-Length", None)
        lines = [f"POST {self.target} HTTP/1.1", f"Host: {self.host_header}"]
        for name, value in headers.items():
            value = str(value)
            if "\r" in value or "\n" in value or "\r" in name or "\n" in name:
                raise requests.exceptions.InvalidHeader(f"invalid header {name!r}")
            lines.append(f"{name}: {value}")
        lines.append("Content-Length: ")
        head = "\r\n".join(lines).encode("latin-1")
        if len(self._heads) >= 16:  # a token changing per event: keep the memory bounded
            self._heads.clear()
        self._heads[extra] = head
        return head

    def _connection(self, deadline: float) -> _Connection:
        conn: _Connection | None = getattr(self._local, "conn", None)
        if conn is not None and not conn.clean():
            self._forget(conn)
            conn = None
        if conn is None:
            try:
                conn = _Connection(self.host, self.port, max(deadline - time.monotonic(), 0.001))
            except OSError as exc:
                message = f"Failed to establish a new connection: {exc}"
                raise NewConnectionError(None, message) from exc  # type: ignore[arg-type]
            with self._lock:
                self._open.add(conn)
            self._local.conn = conn
        return conn

    def _forget(self, conn: _Connection) -> None:
        conn.close()
        with self._lock:
            self._open.discard(conn)
        if getattr(self._local, "conn", None) is conn:
            self._local.conn = None

    def _exchange(self, request: bytes) -> _Answer:
        """One request and its answer, all within the transport's timeout from now."""
        deadline = time.monotonic() + self.timeout
        conn = self._connection(deadline)
        try:
            conn.start(deadline)
            conn.sendall(request)
            answer, keep = _read_answer(conn)
        except TimeoutError as exc:
            self._forget(conn)
            message = f"Read timed out. ({exc})"
            raise ReadTimeoutError(None, self.url, message) from exc  # type: ignore[arg-type]
        except OSError as exc:
            self._forget(conn)
            raise ProtocolError("Connection aborted.", exc) from exc
        except ProtocolError:
            self._forget(conn)
            raise
        if not keep or conn.pending:  # more than the answer came: never used again
            self._forget(conn)
        return answer

    def send(self, text: str) -> bool:
        """POST one event; True once the sink took it, False when it answered a redirect (left
        to the transport). Raises as `requests` would when the sink refuses it or is away."""
        request = self._request(text)
        retries = self.retry
        while True:
            try:
                answer = self._exchange(request)
            except (NewConnectionError, ReadTimeoutError, ProtocolError) as exc:
                try:
                    retries = retries.increment("POST", self.url, error=exc)
                except MaxRetryError as spent:
                    raise requests.exceptions.ConnectionError(spent) from exc
                except ReadTimeoutError as late:  # a read error, for a method not retried
                    raise requests.exceptions.ReadTimeout(late) from exc
                except ProtocolError as aborted:
                    raise requests.exceptions.ConnectionError(aborted) from exc
                retries.sleep()
                continue
            if 300 <= answer.status < 400 and "location" in answer.headers:
                return False
            if retries.is_retry("POST", answer.status, "retry-after" in answer.headers):
                response = urllib3.HTTPResponse(
                    body=b"", headers=answer.headers, status=answer.status, reason=answer.reason
                )
                try:
                    retries = retries.increment("POST", self.url, response=response)
                except MaxRetryError as spent:
                    if retries.raise_on_status:
                        raise requests.exceptions.RetryError(spent) from None
                else:
                    retries.sleep(response)
                    continue
            if answer.status >= 400:
                self._raise(answer)
            return True

    def send_once(self, text: str, timeout: float) -> int:
        """POST one event once, no retry, its whole answer within `timeout`: the answer's
        status (the sink took it when 2xx), 0 when no answer came; never raising: for anything
        but 2xx the caller keeps the event for the retrying path. On connections of a
        pool of its own, as the callers are the receiver's threads (one per client connection,
        short-lived: a connection per thread would outlive them)."""
        deadline = time.monotonic() + timeout
        try:
            request = self._request(text)  # an auth token provider may raise anything
            conn = self._pooled(deadline)
        except Exception:  # the caller spools the event; the worker will say why
            return 0
        try:
            conn.start(deadline)
            conn.sendall(request)
            answer, keep = _read_answer(conn)
        except Exception:  # OSError, ProtocolError, the deadline, a malformed answer...
            self._discard(conn)
            return 0
        pooled = False
        if keep and not conn.pending:  # more than the answer came: never used again
            with self._lock:
                pooled = not self._closed and len(self._idle) < _MAX_IDLE
                if pooled:
                    self._idle.append(conn)
        if not pooled:
            self._discard(conn)
        return answer.status

    def _pooled(self, deadline: float) -> _Connection:
        with self._lock:
            if self._closed:
                raise ConnectionError("the forwarder is closed")
            while self._idle:
                conn = self._idle.pop()
                # checked every time (one poll, no wait): bytes the sink sent unasked since
                # its last answer would be taken as this request's answer
                if conn.clean():
                    return conn
                self._open.discard(conn)
                conn.close()
        conn = _Connection(self.host, self.port, max(deadline - time.monotonic(), 0.001))
        with self._lock:
            self._open.add(conn)
            if self._closed:  # closed meanwhile: close() did not see this one
                self._open.discard(conn)
                conn.close()
                raise ConnectionError("the forwarder is closed")
        return conn

    def _discard(self, conn: _Connection) -> None:
        conn.close()
        with self._lock:
            self._open.discard(conn)

    def _raise(self, answer: _Answer) -> None:
        response = requests.Response()
        response.status_code = answer.status
        response.reason = answer.reason
        response.url = self.url
        response.headers = CaseInsensitiveDict(answer.headers)
        response._content = answer.body
        response.raise_for_status()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            connections = list(self._open)
            self._open.clear()
            self._idle.clear()
        for conn in connections:
            conn.close()
