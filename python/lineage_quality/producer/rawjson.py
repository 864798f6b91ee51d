"""JSON that keeps what it was given: numbers as their text, nulls, `{}` and null list items,
key order, unknown fields. Events are parsed with `loads` when they are to be re-emitted (with our
facets inserted) and written back with `dumps`, so nothing but our facets changes: `1e400` stays
`1e400` (never `Infinity`), `1.0` stays `1.0`, 2^64 stays exact. Pure."""

from __future__ import annotations

import json
from typing import Any


class JsonNumber:
    """A JSON number kept as written. Not a str or float: code reading events never mistakes it
    for a name, and arithmetic on it fails loudly instead of silently rounding."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return f"JsonNumber({self.text})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, JsonNumber) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)


def no_constant(name: str) -> Any:
    """For `json.loads(parse_constant=...)`: NaN and Infinity are not JSON."""
    raise ValueError(f"{name} is not JSON")


# built once: `json.loads` with arguments builds a decoder and its scanner per call
_DECODER = json.JSONDecoder(
    parse_float=JsonNumber, parse_int=JsonNumber, parse_constant=no_constant
)
_PLAIN = json.JSONDecoder(parse_constant=no_constant)


def loads(text: str) -> Any:
    return _DECODER.decode(text)


def loads_plain(text: str) -> Any:
    """`text` parsed with plain Python numbers (NaN and Infinity refused): for reading an event,
    not for re-emitting it."""
    return _PLAIN.decode(text)


def dumps(value: Any) -> str:
    """Compact JSON; JsonNumbers as written; plain Python values as `json` writes them, except
    that a non-finite float is refused (it has no JSON form)."""
    parts: list[str] = []
    _write(value, parts)
    return "".join(parts)


def _write(value: Any, out: list[str]) -> None:
    if isinstance(value, JsonNumber):
        out.append(value.text)
    elif isinstance(value, dict):
        out.append("{")
        for i, (key, item) in enumerate(value.items()):
            if i:
                out.append(",")
            out.append(json.dumps(str(key), ensure_ascii=False))
            out.append(":")
            _write(item, out)
        out.append("}")
    elif isinstance(value, (list, tuple)):
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _write(item, out)
        out.append("]")
    else:
        out.append(json.dumps(value, ensure_ascii=False, allow_nan=False))
