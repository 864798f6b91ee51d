"""A strict HTTP/1.1 request head reader (RFC 9112), for the receiver.

`http.server` parses each request's headers with the `email` package: ~40 `str.lower` calls and a
feed parser per request, more CPU than storing the event. This reads the request line and the
header fields with a few `readline` calls and plain string operations, and is stricter than
`http.server` where leniency lets a front proxy and this server disagree on a request's framing:

- lines end in CRLF (a bare LF or CR is refused);
- a field name is a token, with no space before its colon (RFC 9112 5.1: 400);
- obsolete line folding (a field line starting with a space or tab) is refused (RFC 9112 5.2);
- field values hold no control characters but tab;
- the request line is `method SP target SP HTTP/1.x`, one space each, the method a token.

Framing itself (`Content-Length`, `Transfer-Encoding`, chunks) is checked by the receiver, which
knows what each answer must be; this only collects the fields by lower-case name.
"""

from __future__ import annotations

import re
from http import HTTPStatus
from typing import Protocol

MAX_REQUEST_LINE = 8192  # longer: 414
MAX_FIELD_LINE = 65536  # one header field line; longer: 431
MAX_FIELDS = 100  # header fields; more: 431

_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_REQUEST_LINE = re.compile(r"([!#$%&'*+\-.^_`|~0-9A-Za-z]+) ([\x21-\x7e]+) HTTP/(\d)\.(\d)")
# visible characters, spaces, tabs and obs-text (bytes 0x80-0xff, read as latin-1)
_FIELD_VALUE = re.compile(r"[\t\x20-\x7e\x80-\xff]*")


class RequestError(Exception):
    """The request head is malformed or too large: answer `status` and close the connection."""

    def __init__(self, status: HTTPStatus, message: str) -> None:
        super().__init__(message)
        self.status = status


class _Lines(Protocol):
    def readline(self, size: int = -1, /) -> bytes: ...


class RequestHead:
    """The request line and header fields; `fields` maps each lower-case name to its values in
    the order received (a repeated field keeps every value: two Content-Lengths stay two)."""

    __slots__ = ("fields", "method", "target", "version")

    def __init__(
        self, method: str, target: str, version: tuple[int, int], fields: dict[str, list[str]]
    ) -> None:
        self.method = method
        self.target = target
        self.version = version
        self.fields = fields

    def get(self, name: str, default: str | None = None) -> str | None:
        """The first value of field `name` (lower case), or `default`."""
        values = self.fields.get(name)
        return values[0] if values else default

    def get_all(self, name: str) -> list[str]:
        """Every value of field `name` (lower case), in order; [] when absent."""
        return self.fields.get(name, [])

    @property
    def path(self) -> str:
        """The target without its query and trailing slashes: what routes are matched on."""
        return self.target.split("?", 1)[0].rstrip("/")

    @property
    def keep_alive(self) -> bool:
        """Whether the client lets the connection stay open after the answer: HTTP/1.1 unless
        `Connection: close`; HTTP/1.0 only with `Connection: keep-alive`."""
        tokens = {
            t.strip().lower() for value in self.get_all("connection") for t in value.split(",")
        }
        if "close" in tokens:
            return False
        return self.version >= (1, 1) or "keep-alive" in tokens

    @property
    def expects_continue(self) -> bool:
        """`Expect: 100-continue` on HTTP/1.1: the client waits for a 100 before its body."""
        return self.version >= (1, 1) and any(
            v.strip().lower() == "100-continue" for v in self.get_all("expect")
        )


def read_head(stream: _Lines) -> RequestHead | None:
    """Read one request head from `stream`; None when the connection ended before a request
    (at a request boundary). Raises RequestError for anything malformed or too large, and
    ConnectionError when the connection ends inside the head."""
    line = stream.readline(MAX_REQUEST_LINE + 1)
    if not line:
        return None
    if len(line) > MAX_REQUEST_LINE:
        raise RequestError(HTTPStatus.REQUEST_URI_TOO_LONG, "request line too long")
    request_line = _line(line, "request line").decode("latin-1")
    m = _REQUEST_LINE.fullmatch(request_line)
    if m is None:
        raise RequestError(HTTPStatus.BAD_REQUEST, f"bad request line {request_line[:80]!r}")
    method, target, major, minor = m.groups()
    if major != "1":
        raise RequestError(
            HTTPStatus.HTTP_VERSION_NOT_SUPPORTED, f"HTTP/{major}.{minor} is not supported"
        )
    fields: dict[str, list[str]] = {}
    for _ in range(MAX_FIELDS + 1):
        line = stream.readline(MAX_FIELD_LINE + 1)
        if line == b"\r\n":
            return RequestHead(method, target, (1, int(minor)), fields)
        if len(line) > MAX_FIELD_LINE:
            raise RequestError(
                HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, "header field line too long"
            )
        name, value = _field(_line(line, "header field line").decode("latin-1"))
        fields.setdefault(name, []).append(value)
    raise RequestError(
        HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, f"more than {MAX_FIELDS} header fields"
    )


def _line(line: bytes, what: str) -> bytes:
    """`line` without its CRLF; a line cut short by the end of the connection is a lost
    connection, a line ending otherwise is malformed."""
    if not line.endswith(b"\n"):
        raise ConnectionError(f"connection closed inside the {what}")
    if not line.endswith(b"\r\n") or b"\r" in line[:-2]:
        raise RequestError(HTTPStatus.BAD_REQUEST, f"{what} does not end in CRLF")
    return line[:-2]


def _field(line: str) -> tuple[str, str]:
    name, colon, value = line.partition(":")
    if not colon or not _TOKEN.fullmatch(name):
        # also a line starting with a space or tab (obs-fold) and a space before the colon
        raise RequestError(HTTPStatus.BAD_REQUEST, f"bad header field line {line[:80]!r}")
    value = value.strip(" \t")
    if not _FIELD_VALUE.fullmatch(value):
        raise RequestError(HTTPStatus.BAD_REQUEST, f"control character in header field {name}")
    return name.lower(), value
