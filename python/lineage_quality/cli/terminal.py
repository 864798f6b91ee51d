"""The commands' standard output and error, made inert: whatever a command prints (a table, an
HTML page, a contract's path, a rule's text, an exception's words), no control character reaches
the terminal but line breaks and tabs (`inert.inert_lines`). Contracts, paths and events are not
ours: an ESC or OSC sequence in a dataset or rule name must not drive the operator's terminal.

`main` wraps `sys.stdout`/`sys.stderr` for the length of a command. What the project writes to a
terminal on purpose (`check`'s progress line) goes to `terminal_of(stream)`, the stream beneath.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

from lineage_quality.inert import inert_lines


class InertStream(io.TextIOBase):
    """A text stream that writes `inert_lines(text)` to the stream beneath."""

    def __init__(self, beneath: TextIO) -> None:
        super().__init__()
        self.beneath = beneath

    def write(self, text: str) -> int:
        self.beneath.write(inert_lines(text))
        return len(text)

    def flush(self) -> None:
        self.beneath.flush()

    def isatty(self) -> bool:
        return self.beneath.isatty()

    def fileno(self) -> int:
        return self.beneath.fileno()

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.beneath, "encoding", "utf-8")


def terminal_of(stream: TextIO) -> TextIO:
    """The stream beneath an `InertStream` (for the project's own terminal control), else
    `stream` itself."""
    return stream.beneath if isinstance(stream, InertStream) else stream


@contextmanager
def inert_output() -> Iterator[None]:
    """`sys.stdout` and `sys.stderr` inert while the block runs."""
    out, err = sys.stdout, sys.stderr
    sys.stdout = InertStream(out)
    sys.stderr = InertStream(err)
    try:
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        sys.stdout, sys.stderr = out, err
