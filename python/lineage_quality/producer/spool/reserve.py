"""The spool's disk-full reserve: a file of `reserve_bytes` beside the database.

When a write finds the disk full, the reserve is given back (deleted) so that forwarded events can
still be deleted (a delete needs room in the write-ahead log too), and no new event is taken. Once
the spool has drained to half of what it held when the disk filled up (its free pages are room
again) and the reserve can be written again, events are taken again. With `reserve_bytes` 0 there
is no reserve: a full disk refuses writes as SQLite does.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger(__name__)


def is_full(exc: BaseException) -> bool:
    """Whether a SQLite error says the disk (or the database's page limit) is full."""
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    return getattr(exc, "sqlite_errorname", "") == "SQLITE_FULL" or "full" in str(exc)


class Reserve:
    """`held()` counts the events the spool holds (to know when it has drained); `vacuum()` gives
    the emptied pages of the database back to the disk."""

    def __init__(
        self,
        database: Path,
        size: int,
        retry: float,
        held: Callable[[], int],
        vacuum: Callable[[], None],
    ) -> None:
        self.database = database
        self.path = database.with_name(database.name + ".reserve")
        self.size = size
        self.retry = retry  # seconds between tries to rewrite the reserve
        self._held = held
        self._vacuum = vacuum
        self._tried = 0.0
        # Checkpoint often enough that the write-ahead log stays well under the reserve (the
        # store sets `wal_autocheckpoint` to these pages); the log needs this room besides it.
        self.checkpoint_pages = max(16, size // 4096 // 4)
        self.headroom = 2 * self.checkpoint_pages * 4096
        self.full_level: int | None = None  # events held when the disk filled up
        self.make()

    def make(self) -> bool:
        if self.size <= 0 or self.path.exists():
            return True
        self._tried = time.monotonic()
        try:
            with self.path.open("wb") as f:
                f.write(b"\0" * self.size)
                f.flush()
                os.fsync(f.fileno())
        except OSError:
            with contextlib.suppress(OSError):
                self.path.unlink()
            return False
        return True

    def accepting(self) -> bool:
        """After the disk filled up, take events again once the spool has drained to half of
        what it held then and the reserve could be rewritten."""
        if self.size <= 0 or self.path.exists():
            return True
        if self.full_level is not None and self._held() > self.full_level // 2:
            return False
        if time.monotonic() - self._tried < self.retry:
            return False
        self._tried = time.monotonic()
        self._vacuum()
        if shutil.disk_usage(self.path.parent).free < self.size + self.headroom:
            return False
        if not self.make():
            return False
        self.full_level = None
        log.info("spool disk has room again: accepting events")
        return True

    def give_back(self, always_note: bool = False) -> bool:
        """The disk is full: note how much the spool held (the first time, or again with
        `always_note`), and delete the reserve; False when there was none left to give."""
        if always_note or self.full_level is None:
            self.full_level = self._held()
        try:
            self.path.unlink()
        except FileNotFoundError:
            return False
        log.error(
            "spool disk %s is full: released the reserve; not accepting events", self.database
        )
        return True
