"""A POST's body, from the wire to a validated event: framing (`Content-Length`, or exactly
`chunked`: the Java transport streams gzip bodies without a length), bounded inflate of gzip,
structure bounds counted on the bytes, then one parse and the OpenLineage shape check.

Every refusal is a RejectedError carrying the status to answer (400, 411, 413, 415, 501).
"""

from __future__ import annotations

import io
import re
import zlib
from http import HTTPStatus
from typing import Any

from lineage_quality import rawjson
from lineage_quality.producer.events import InvalidEventError, check_event
from lineage_quality.producer.receiver.request import RequestHead

try:  # the `kafka` extra's: Kafka in's quick parse (decode_quick)
    import orjson as _orjson
except ImportError:  # pragma: no cover - the extra not installed: `decode` alone
    _orjson = None  # type: ignore[assignment]


class RejectedError(Exception):
    """The request is refused: answer `status` with the message as the JSON `error`."""

    def __init__(self, status: HTTPStatus, message: str) -> None:
        super().__init__(message)
        self.status = status


# What one event may hold before any Python object is built for it. Parsed JSON costs ~50 bytes
# per value: 16 MiB of `{}` would cost ~400 MB in the receiver and again in each worker. Real
# listener events hold a few thousand values (wide schemas with column lineage: tens of thousands).
MAX_JSON_CONTAINERS = 200_000  # objects + arrays
MAX_JSON_VALUES = 1_000_000  # separators: an upper bound on members and items

# RFC 9112 7.1: chunk-size = 1*HEXDIG, then optional extensions; nothing else (no `0x`, sign,
# underscore or space), so a front proxy and this receiver can never disagree on where it ends.
_CHUNK_SIZE = re.compile(rb"([0-9A-Fa-f]{1,15})(?:;[^\r\n]*)?\r\n")
_DIGITS = re.compile(r"[0-9]{1,19}")


def body_length(head: RequestHead, limit: int) -> int | None:
    """The body's framing: its Content-Length, or None for a chunked body. Refuses two framings
    (request smuggling: a proxy may have used the other one), any transfer coding but exactly
    `chunked`, no framing at all, a bad length and one over `limit`."""
    encodings = head.get_all("transfer-encoding")
    lengths = head.get_all("content-length")
    if encodings and lengths:
        raise RejectedError(HTTPStatus.BAD_REQUEST, "both Transfer-Encoding and Content-Length")
    if encodings:
        if len(encodings) != 1 or encodings[0].lower() != "chunked":
            raise RejectedError(
                HTTPStatus.NOT_IMPLEMENTED, "Transfer-Encoding must be exactly `chunked`"
            )
        return None
    if not lengths:
        raise RejectedError(HTTPStatus.LENGTH_REQUIRED, "Content-Length is required")
    if len(lengths) != 1 or not _DIGITS.fullmatch(lengths[0]):
        raise RejectedError(HTTPStatus.BAD_REQUEST, "bad Content-Length")
    length = int(lengths[0])
    if length > limit:
        raise RejectedError(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"body over {limit} bytes")
    return length


def read_body(stream: io.BufferedIOBase, length: int | None, limit: int) -> bytes:
    """The body framed by `length` (None: chunked); ConnectionError when it ends early."""
    if length is None:
        return read_chunked(stream, limit)
    body = stream.read(length)
    if len(body) != length:
        raise ConnectionError("body ends before Content-Length")
    return body


def _malformed(what: str) -> RejectedError:
    return RejectedError(HTTPStatus.BAD_REQUEST, f"malformed chunked body: {what}")


def read_chunked(stream: io.BufferedIOBase, limit: int) -> bytes:
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


def check_structure(body: bytes) -> None:
    """Refuse (413) a body with more containers or values than an event needs. Counted on the
    bytes (braces and commas inside strings count too: a safe over-estimate) in C speed."""
    if len(body) <= min(MAX_JSON_CONTAINERS, MAX_JSON_VALUES):
        return  # each container and value takes a byte at least: nothing to count
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


def decode(body: bytes, encoding: str | None, limit: int) -> tuple[str, dict[str, Any]]:
    """The event's JSON text and the event parsed from it, validated as an OpenLineage-shaped
    object. Parsed once, here, with numbers kept as written (rawjson): this parse is the one the
    worker evaluates, enriches and forwards."""
    if (encoding or "").lower() == "gzip":
        body = _gunzip(body, limit)
    elif encoding and encoding.lower() != "identity":
        raise RejectedError(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, f"unsupported encoding {encoding}")
    check_structure(body)
    try:
        text = body.decode("utf-8")
        event = rawjson.loads(text)
    except (UnicodeDecodeError, ValueError) as exc:
        raise RejectedError(HTTPStatus.BAD_REQUEST, f"body is not JSON: {exc}") from exc
    except RecursionError as exc:
        raise RejectedError(HTTPStatus.BAD_REQUEST, "body is not JSON: nested too deep") from exc
    try:
        check_event(event)
    except InvalidEventError as exc:
        raise RejectedError(HTTPStatus.BAD_REQUEST, str(exc)) from exc
    return text, event


def decode_quick(body: bytes, limit: int) -> tuple[str, dict[str, Any], bool]:
    """As `decode` (an identity body), parsed by orjson when it is installed and takes the body:
    a few times faster, with numbers as Python numbers, good for reading the event's facts and
    forwarding its text as received, not for writing it back (Envelope.exact parses it again).
    The third value says which: True when `decode` parsed it. Whatever orjson or the shape check
    of its parse refuse goes through `decode`, whose answer is the one given: the same events
    are refused, with the same messages."""
    if _orjson is not None and len(body) <= limit and shallow(body):
        check_structure(body)
        try:
            event = _orjson.loads(body)
            check_event(event)
            return body.decode("utf-8"), event, False
        except (_orjson.JSONDecodeError, InvalidEventError, UnicodeDecodeError):
            pass
    text, event = decode(body, None, limit)
    return text, event, True


# orjson parses up to 1024 levels deep, msgspec and `decode` as deep as Python's recursion limit
# lets them (~1000, less what is on the stack: `decode` a few frames less): a body with fewer
# containers than this is shallower than all three, so what the quick ones take `decode` takes
# too. More (wide column lineage): `decode` alone.
_QUICK_CONTAINERS = 900


def shallow(body: bytes) -> bool:
    """`body` is shallower than any parse here stops at: a quick parse (orjson, Kafka in's
    skeleton: kafka/skeleton.py) takes nothing `decode` would refuse for its depth."""
    # a body shorter than twice the bound cannot nest that deep (two bytes a level at least)
    return len(body) < 2 * _QUICK_CONTAINERS or (
        body.count(b"{") + body.count(b"[") <= _QUICK_CONTAINERS
    )


def decode_event(body: bytes, encoding: str | None, limit: int) -> str:
    """The event's JSON text, validated as an OpenLineage-shaped object."""
    return decode(body, encoding, limit)[0]
