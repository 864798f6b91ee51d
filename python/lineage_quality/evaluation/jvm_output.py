"""What the JVM that PySpark launches prints, kept off a command's report (`check`).

The JVM inherits file descriptors 1 and 2 when it starts and keeps them. While it starts, both
are a pipe read by a thread of ours: the JVM's lines are held until Spark is up, then written to
stderr (and every later line as it comes), so stdout carries only the report (`--output json`
stays JSON whatever Ivy or a library prints). If Spark does not start, the held lines give the
JVM's own reason (`Exception in thread "main" ...: Master must ...`) for a one-line error,
instead of a Java stack trace followed by a Python one.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator

from lineage_quality.inert import inert

HELD_LINES = 2000  # lines held while the JVM starts; past it the oldest are dropped


class JvmOutput:
    def __init__(self) -> None:
        self._held: list[str] = []
        self._holding = True
        self._lock = threading.Lock()
        self._stderr = -1

    @contextlib.contextmanager
    def starting(self) -> Iterator[None]:
        """Inside: fds 1 and 2 are the pipe (for the JVM started here to inherit)."""
        sys.stdout.flush()
        sys.stderr.flush()
        try:
            saved = (os.dup(1), os.dup(2))
        except OSError:  # no stdout/stderr to keep clean
            yield
            return
        read, write = os.pipe()
        self._stderr = os.dup(saved[1])
        threading.Thread(target=self._pump, args=(read,), name="lq-jvm-output", daemon=True).start()
        try:
            os.dup2(write, 1)
            os.dup2(write, 2)
            yield
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in (*saved, write):
                os.close(fd)

    def started(self) -> None:
        """Spark is up: write what was held, and every later line, to stderr."""
        with self._lock:
            held, self._held, self._holding = self._held, [], False
        self._write("".join(held))

    def reason(self) -> str | None:
        """The JVM's own account of why it did not start (its exception line), if it gave one."""
        with self._lock:
            lines = list(self._held)
        for line in lines:
            text = line.strip()
            if text.startswith("Exception in thread") or "Exception: " in text:
                return inert(text.split(" ", 4)[-1] if text.startswith("Exception in") else text)
        return None

    def _pump(self, read: int) -> None:
        with os.fdopen(read, "r", encoding="utf-8", errors="replace") as pipe:
            for line in pipe:
                with self._lock:
                    if self._holding:
                        self._held.append(line)
                        del self._held[:-HELD_LINES]
                        continue
                self._write(line)

    def _write(self, text: str) -> None:
        if text and self._stderr >= 0:
            with contextlib.suppress(OSError):
                os.write(self._stderr, text.encode("utf-8", "replace"))
