"""`JsonNumber`: a number of a received event, kept as written (rawjson.py parses events into
it), so reading a number never rounds it and writing it back never changes it."""

from __future__ import annotations

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

    # Immutable: a copy is the number itself. `enrich` deep-copies the event it is given; without
    # these, each number would be copied through `__reduce_ex__` (a third of enrich's time).
    def __copy__(self) -> JsonNumber:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> JsonNumber:
        return self
