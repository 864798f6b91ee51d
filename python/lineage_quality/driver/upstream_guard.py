"""The in-driver upstream guard (`attach(..., upstream="block")`): keeps the health file that
the engine jar's check rule (`lineagequality.UpstreamGuard`) reads, so a query reading an
unhealthy dataset fails at analysis, before it writes anything (lineage/guard.py says what the
file holds).

The file is written before `attach` returns, then again each time this process keeps an
event's lineage (its own writes, evaluated), every `refresh_seconds` (writes evaluated by other
producers sharing the store), and when the job calls `verify()`. A store that cannot be read
leaves the last file in place (logged): a hiccup of the shared PostgreSQL does not stop every
job, and does not forget what was known to be unhealthy.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path

from lineage_quality.lineage.guard import lines
from lineage_quality.lineage.model import Write
from lineage_quality.lineage.store import LineageStore

log = logging.getLogger(__name__)

EXTENSION_CLASS = "lineagequality.UpstreamGuard"
FILE_KEY = "spark.lineagequality.upstream.file"  # the session conf the check rule reads
OVERLAP_MS = 10_000  # looked at again: writers' clocks and commits are not in step
FULL_EVERY = 150  # refreshes between full reads (writes that expired are forgotten then)


class UpstreamGuard:
    def __init__(self, store: LineageStore, path: Path, refresh_seconds: float) -> None:
        self.store = store
        self.path = path
        self.refresh_seconds = refresh_seconds
        self._unhealthy: dict[str, Write] = {}
        self._since_ms = 0
        self._refreshes = 0
        self._written: list[str] | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="lq-upstream-guard", daemon=True)

    def refresh(self) -> None:
        """Look at what changed in the store and rewrite the file if the answer changed."""
        with self._lock:
            full = self._refreshes % FULL_EVERY == 0
            self._refreshes += 1
            started = int(time.time() * 1000)
            since = 0 if full else max(0, self._since_ms - OVERLAP_MS)
            try:
                changed = self.store.latest_changed(since)
            except Exception as exc:
                log.warning(
                    "upstream guard: cannot read the lineage store (%s); kept %s", exc, self.path
                )
                return
            if full:
                self._unhealthy.clear()
            for write in changed:
                if write.healthy:
                    self._unhealthy.pop(write.dataset, None)
                else:
                    self._unhealthy[write.dataset] = write
            self._since_ms = started
            self._write(lines(self._unhealthy[d] for d in sorted(self._unhealthy)))

    def unhealthy(self) -> list[str]:
        """The datasets refused now."""
        with self._lock:
            return sorted(self._unhealthy)

    def _write(self, found: list[str]) -> None:
        if found == self._written and self.path.exists():
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        # the first line changes every time: the check rule reads the file again on a new size
        # or time, and two writes in one clock tick could share both
        header = f"# lineage-quality upstream guard {time.time_ns()} {len(found)}\n"
        temporary.write_text(header + "".join(f"{line}\n" for line in found), encoding="utf-8")
        os.replace(temporary, self.path)
        self._written = found

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        self.path.unlink(missing_ok=True)

    def _loop(self) -> None:
        while not self._stop.wait(self.refresh_seconds):
            self.refresh()
