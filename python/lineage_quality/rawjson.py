"""JSON that keeps what it was given: numbers as their text, nulls, `{}` and null list items,
key order, unknown fields. The receiver parses each event once with `loads`; that form travels to
the worker, the evaluation and enrich, and is written back with `dumps`, so nothing but our facets
changes: `1e400` stays `1e400` (never `Infinity`), `1.0` stays `1.0`, 2^64 stays exact. Pure.

What cannot be written as received is made JSON here, never refused later (a refusal would hold
the event forever): a non-finite float of ours (a NaN measured on real data) is written as the
string "NaN", "Infinity" or "-Infinity"; a lone surrogate in a string (`"\\ud800"` in the received
text decodes to one) is written back as its `\\uXXXX` escape, so the text always encodes to UTF-8.
`loads_plain` takes integers of any length (Python refuses to convert over 4300 digits).

`dumps` runs on the `json` module's C encoder: a JsonNumber is written as a placeholder string
that cannot occur in the rest of the output (it holds a random token of the call, and a control
character the encoder escapes everywhere else), then each placeholder is replaced by the number's
text, in order. About 30x faster than writing the tree in Python (bench/parse_once.py)."""

from __future__ import annotations

import json
import os
import re
from typing import Any

from lineage_quality.results import finite
from lineage_quality.values.json_number import JsonNumber


def no_constant(name: str) -> Any:
    """For `json.loads(parse_constant=...)`: NaN and Infinity are not JSON."""
    raise ValueError(f"{name} is not JSON")


# built once: `json.loads` with arguments builds a decoder and its scanner per call
_DECODER = json.JSONDecoder(
    parse_float=JsonNumber, parse_int=JsonNumber, parse_constant=no_constant
)


def _plain_int(text: str) -> int | float:
    """An integer as Python's `json` gives it; past Python's digit limit (a 5000-digit number in
    an event) the nearest float (an infinity), rather than a ValueError on an event we accepted."""
    try:
        return int(text)
    except ValueError:
        return float(text)


_PLAIN = json.JSONDecoder(parse_constant=no_constant, parse_int=_plain_int)


def loads(text: str) -> Any:
    return _DECODER.decode(text)


def loads_plain(text: str) -> Any:
    """`text` parsed with plain Python numbers (NaN and Infinity refused): for reading an event,
    not for re-emitting it."""
    return _PLAIN.decode(text)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape_surrogate(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def storable(text: str) -> str:
    """`text` with each lone surrogate written as its `\\uXXXX` escape: a key from an event (a run
    id, a lane, a dataset name) that SQLite, a file or a socket can take as UTF-8. Text without
    one comes back as it is (the common case costs an `isascii`)."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub(_escape_surrogate, text)
    return text


def dumps(value: Any) -> str:
    """Compact JSON (non-ASCII as is); JsonNumbers as written; plain Python values as `json`
    writes them, but a non-finite float as its name in a string and a lone surrogate as its
    escape (module docstring): the text is always JSON and always encodes to UTF-8."""
    try:
        text = _dumps(value)
    except ValueError:  # "Out of range float values are not JSON compliant": rare, so walk now
        text = _dumps(finite(value))
    # O(1) for ASCII text; else an encode at C speed (a regex scan took 5x as long, 45 KB)
    return storable(text)


def _dumps(value: Any) -> str:
    numbers: list[str] = []
    mark = "\x00" + os.urandom(12).hex()  # never in another string of this output (see above)

    def default(obj: Any) -> Any:
        if isinstance(obj, JsonNumber):
            numbers.append(obj.text)
            return mark
        raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")

    text = json.dumps(
        value, ensure_ascii=False, allow_nan=False, separators=(",", ":"), default=default
    )
    if not numbers:
        return text
    # the encoder writes the placeholders in the order it asked for them
    parts = text.split(json.dumps(mark))
    out = [parts[0]]
    for number, part in zip(numbers, parts[1:], strict=True):
        out.append(number)
        out.append(part)
    return "".join(out)
