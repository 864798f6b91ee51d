"""HTTP endpoint compatible with the OpenLineage HTTP transport: `POST /api/v1/lineage`.

Accepts JSON bodies, gzip-compressed when the transport compresses, optional Bearer API key (the
transport's `api_key` auth). An event is durable in the spool before the 201 goes back.
"""

from __future__ import annotations

import hmac
import io
import json
import logging
import threading
import zlib
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

log = logging.getLogger(__name__)

LINEAGE_PATH = "/api/v1/lineage"
DEFAULT_MAX_BODY = 16 * 1024 * 1024


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
    return out


def decode_event(body: bytes, encoding: str | None, limit: int) -> str:
    """The event's JSON text, validated as an OpenLineage-shaped object."""
    if (encoding or "").lower() == "gzip":
        body = _gunzip(body, limit)
    elif encoding and encoding.lower() != "identity":
        raise RejectedError(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, f"unsupported encoding {encoding}")
    try:
        text = body.decode("utf-8")
        event = json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RejectedError(HTTPStatus.BAD_REQUEST, f"body is not JSON: {exc}") from exc
    if not isinstance(event, dict):
        raise RejectedError(HTTPStatus.BAD_REQUEST, "an OpenLineage event is a JSON object")
    if not any(k in event for k in ("run", "job", "dataset")):
        raise RejectedError(
            HTTPStatus.BAD_REQUEST, "not an OpenLineage event: no `run`, `job` or `dataset`"
        )
    return text


def _read_chunked(stream: io.BufferedIOBase, limit: int) -> bytes:
    parts: list[bytes] = []
    total = 0
    while True:
        line = stream.readline(1024)
        try:
            size = int(line.split(b";", 1)[0].strip(), 16)
        except ValueError as exc:
            raise RejectedError(HTTPStatus.BAD_REQUEST, "malformed chunked body") from exc
        if size == 0:
            while stream.readline(1024) not in (b"\r\n", b"\n", b""):
                pass  # trailers
            return b"".join(parts)
        total += size
        if total > limit:
            raise RejectedError(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"body over {limit} bytes")
        parts.append(stream.read(size))
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

            def log_message(self, format: str, *args: object) -> None:
                log.debug("%s " + format, self.address_string(), *args)

            def _reply(self, status: HTTPStatus, payload: dict[str, str] | None = None) -> None:
                data = json.dumps(payload or {}).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path in ("/healthz", "/health"):
                    self._reply(HTTPStatus.OK, {"status": "ok"})
                else:
                    self._reply(HTTPStatus.NOT_FOUND, {"error": "not found"})

            def do_POST(self) -> None:
                try:
                    self._receive()
                except RejectedError as exc:
                    log.warning("rejected request from %s: %s", self.address_string(), exc)
                    self._reply(exc.status, {"error": str(exc)})

            def _read_body(self) -> bytes:
                limit = receiver.max_body
                if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
                    # The Java HTTP transport streams gzip bodies chunked, without a length.
                    return _read_chunked(self.rfile, limit)
                length_text = self.headers.get("Content-Length")
                if length_text is None:
                    raise RejectedError(HTTPStatus.LENGTH_REQUIRED, "Content-Length is required")
                try:
                    length = int(length_text)
                except ValueError as exc:
                    raise RejectedError(HTTPStatus.BAD_REQUEST, "bad Content-Length") from exc
                if length < 0 or length > limit:
                    raise RejectedError(
                        HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"body over {limit} bytes"
                    )
                return self.rfile.read(length)

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
                        HTTPStatus.UNSUPPORTED_MEDIA_TYPE, f"Content-Type must be JSON, not {ctype}"
                    )
                body = self._read_body()
                text = decode_event(body, self.headers.get("Content-Encoding"), receiver.max_body)
                try:
                    accept(text)
                except Exception as exc:
                    log.error("could not store event: %s", exc)
                    raise RejectedError(
                        HTTPStatus.SERVICE_UNAVAILABLE, "event could not be stored"
                    ) from exc
                self._reply(HTTPStatus.CREATED)

        self.api_key = api_key
        self.max_body = max_body
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
            target=self._server.serve_forever, name="lq-receiver", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
