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
"""

from __future__ import annotations

import contextlib
import select
import socket
import threading
import time
from typing import Any
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
_MAX_IDLE = 16  # idle connections `send_once` keeps for the next event
_FRESH = 0.5  # seconds


class _Connection:
    def __init__(self, host: str, port: int, timeout: float) -> None:
        self.sock = socket.create_connection((host, port), timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # as urllib3 does
        self.file = self.sock.makefile("rb")
        self.used = 0.0  # monotonic time its last answer was read (`send_once`'s pool)

    def dropped(self) -> bool:
        """The peer closed the idle connection (or sent something unasked): not reusable."""
        try:
            readable, _, _ = select.select([self.sock], [], [], 0)
        except (OSError, ValueError):
            return True
        return bool(readable)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.file.close()
        with contextlib.suppress(OSError):
            self.sock.close()


class _Answer:
    def __init__(self, status: int, reason: str, headers: dict[str, str], body: bytes) -> None:
        self.status = status
        self.reason = reason
        self.headers = headers  # lower-case names
        self.body = body


def _read_line(file: Any) -> bytes:
    line: bytes = file.readline(_MAX_LINE + 1)
    if len(line) > _MAX_LINE:
        raise ProtocolError("response line too long")
    if not line:
        raise ProtocolError("connection closed by the sink before an answer")
    return line


def _read_answer(file: Any) -> tuple[_Answer, bool]:
    """One response (1xx answers skipped) and whether the connection may be reused."""
    while True:
        version, status, reason = _status_line(_read_line(file))
        headers: dict[str, str] = {}
        for _ in range(_MAX_HEADERS + 1):
            line = _read_line(file)
            if line in (b"\r\n", b"\n"):
                break
            name, sep, value = line.decode("latin-1").partition(":")
            if not sep:
                raise ProtocolError(f"bad header line {line[:80]!r}")
            key = name.strip().lower()
            value = value.strip()
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        else:
            raise ProtocolError("too many response headers")
        if 100 <= status < 200:
            continue
        break
    connection = headers.get("connection", "").lower()
    keep = "close" not in connection and (version == "HTTP/1.1" or "keep-alive" in connection)
    if status in (204, 304):
        return _Answer(status, reason, headers, b""), keep
    if "chunked" in headers.get("transfer-encoding", "").lower():
        return _Answer(status, reason, headers, _read_chunked(file)), keep
    length = headers.get("content-length")
    if length is None:  # delimited by the end of the connection
        return _Answer(status, reason, headers, file.read()), False
    if not length.isdigit():
        raise ProtocolError(f"bad Content-Length {length[:40]!r}")
    body = file.read(int(length))
    if len(body) != int(length):
        raise ProtocolError("response ends before its Content-Length")
    return _Answer(status, reason, headers, body), keep


def _status_line(line: bytes) -> tuple[str, int, str]:
    parts = line.decode("latin-1").rstrip("\r\n").split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
        raise ProtocolError(f"bad status line {line[:80]!r}")
    return parts[0], int(parts[1]), parts[2] if len(parts) > 2 else ""


def _read_chunked(file: Any) -> bytes:
    parts: list[bytes] = []
    while True:
        size_text = _read_line(file).split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            raise ProtocolError(f"bad chunk size {size_text[:40]!r}") from None
        if size == 0:
            while _read_line(file) not in (b"\r\n", b"\n"):  # trailers
                pass
            return b"".join(parts)
        chunk = file.read(size)
        if len(chunk) != size:
            raise ProtocolError("chunked response ends early")
        parts.append(chunk)
        _read_line(file)


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

    def _connection(self) -> _Connection:
        conn: _Connection | None = getattr(self._local, "conn", None)
        if conn is not None and conn.dropped():
            self._forget(conn)
            conn = None
        if conn is None:
            try:
                conn = _Connection(self.host, self.port, self.timeout)
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
        conn = self._connection()
        try:
            conn.sock.sendall(request)
            answer, keep = _read_answer(conn.file)
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
        if not keep:
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
        """POST one event once, no retry, each read and write within `timeout`: the answer's
        status (the sink took it when 2xx), 0 when no answer came; never raising: for anything
        but 2xx the caller keeps the event for the retrying path. On connections of a
        pool of its own, as the callers are the receiver's threads (one per client connection,
        short-lived: a connection per thread would outlive them)."""
        try:
            request = self._request(text)  # an auth token provider may raise anything
            conn = self._pooled(timeout)
        except Exception:  # the caller spools the event; the worker will say why
            return 0
        try:
            conn.sock.sendall(request)
            answer, keep = _read_answer(conn.file)
        except Exception:  # OSError, ProtocolError, a malformed answer (ValueError)...
            self._discard(conn)
            return 0
        pooled = False
        if keep:
            conn.used = time.monotonic()
            with self._lock:
                pooled = not self._closed and len(self._idle) < _MAX_IDLE
                if pooled:
                    self._idle.append(conn)
        if not pooled:
            self._discard(conn)
        return answer.status

    def _pooled(self, timeout: float) -> _Connection:
        with self._lock:
            if self._closed:
                raise ConnectionError("the forwarder is closed")
            while self._idle:
                conn = self._idle.pop()
                # a server closes an idle kept-alive connection after seconds, not within
                # FRESH: a connection used that recently is not checked (a syscall per event);
                # if it was closed after all, the send fails and the event is spooled
                if time.monotonic() - conn.used < _FRESH or not conn.dropped():
                    return conn
                self._open.discard(conn)
                conn.close()
        conn = _Connection(self.host, self.port, timeout)  # with `timeout` per read and write
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
