"""The quarantine location kept within its `QuarantineBounds`: size and retention.

Each run with failing QUARANTINE rows gets a folder `<location>/run_id=<runId>/`, so every run
(and every replayed run id) adds one. After each write the run folders are looked at: those whose
newest file is older than the retention expire, then, past `max_bytes` in all, the oldest run
folders expire until the location holds. The run being written is never expired for another; when
it alone is over the bound, `enforce_bounds` says it does not fit and the caller removes what it
just wrote. Only `run_id=` folders are touched: anything else at the location is left alone.

Local paths are read with the operating system; any other scheme (s3a, hdfs, abfs, ...) through
Hadoop's FileSystem in the evaluator's JVM, as Spark wrote them.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import threading
import urllib.parse
from typing import Any, Protocol

import attrs

from lineage_quality.bounds import QuarantineBounds

log = logging.getLogger(__name__)

RUN_PREFIX = "run_id="
# one pass at a time per process: two evaluations quarantining at once would count the same
# folders and expire more than needed
LOCK = threading.Lock()


@attrs.frozen
class RunFolder:
    run_id: str
    path: str
    size: int  # bytes of every file below it
    newest: float  # modification time of its newest file (epoch seconds; its own when empty)


class Folders(Protocol):
    """The run folders at a quarantine location, and their removal."""

    def runs(self) -> list[RunFolder]: ...

    def delete(self, path: str) -> None: ...


class LocalFolders:
    def __init__(self, location: str) -> None:
        self.location = location

    def runs(self) -> list[RunFolder]:
        try:
            entries = list(os.scandir(self.location))
        except FileNotFoundError:
            return []
        found = []
        for entry in entries:
            if entry.name.startswith(RUN_PREFIX) and entry.is_dir(follow_symlinks=False):
                sizes, stamps = [], []
                for root, _, files in os.walk(entry.path):
                    for name in files:
                        with contextlib.suppress(FileNotFoundError):  # removed meanwhile
                            stat = os.lstat(os.path.join(root, name))
                            sizes.append(stat.st_size)
                            stamps.append(stat.st_mtime)
                # a folder's own time changes with what is added or removed below it: the files'
                # times say when rows were written
                newest = max(stamps, default=entry.stat(follow_symlinks=False).st_mtime)
                run_id = entry.name[len(RUN_PREFIX) :]
                found.append(RunFolder(run_id, entry.path, sum(sizes), newest))
        return found

    def delete(self, path: str) -> None:
        if path.startswith("file:"):  # a path written as a URI (the location was one)
            path = urllib.parse.urlsplit(path).path
        shutil.rmtree(path, ignore_errors=True)


class HadoopFolders:
    """Through Hadoop's FileSystem API over py4j (the JVM of the session that wrote them)."""

    def __init__(self, spark: Any, location: str) -> None:
        jvm = spark.sparkContext._jvm
        self._path = jvm.org.apache.hadoop.fs.Path
        self._root = self._path(location)
        self._fs = self._root.getFileSystem(spark._jsc.hadoopConfiguration())

    def runs(self) -> list[RunFolder]:
        if not self._fs.exists(self._root):
            return []
        found = []
        for status in self._fs.listStatus(self._root):
            name = str(status.getPath().getName())
            if not (status.isDirectory() and name.startswith(RUN_PREFIX)):
                continue
            size, stamps = 0, []
            files = self._fs.listFiles(status.getPath(), True)
            while files.hasNext():
                file = files.next()
                size += int(file.getLen())
                stamps.append(int(file.getModificationTime()))
            newest = max(stamps, default=int(status.getModificationTime())) / 1000
            path = str(status.getPath().toString())
            found.append(RunFolder(name[len(RUN_PREFIX) :], path, size, newest))
        return found

    def delete(self, path: str) -> None:
        self._fs.delete(self._path(path), True)


def folders_at(spark: Any, location: str) -> Folders | None:
    """The run folders at `location`; None when they cannot be listed from here (a Spark Connect
    session has no JVM to reach a remote filesystem through)."""
    parts = urllib.parse.urlsplit(location)
    if parts.scheme == "file" or (not parts.scheme and "://" not in location):
        return LocalFolders(parts.path if parts.scheme else location)
    if getattr(getattr(spark, "sparkContext", None), "_jvm", None) is None:
        return None
    return HadoopFolders(spark, location)


def enforce_bounds(folders: Folders, bounds: QuarantineBounds, keep: str, now: float) -> bool:
    """Expire run folders past the retention, then the oldest past `max_bytes`, never the run
    `keep` (being written); whether what is left (with `keep`) is within `max_bytes`. When `keep`
    alone is over it, nothing is expired for it (False: the caller takes back what it wrote)."""
    cutoff = now - bounds.retention
    left: list[RunFolder] = []
    for run in folders.runs():
        if run.run_id != keep and run.newest < cutoff:
            _expire(folders, run, "past its retention")
        else:
            left.append(run)
    if sum(run.size for run in left if run.run_id == keep) > bounds.max_bytes:
        return False
    total = sum(run.size for run in left)
    for run in sorted((r for r in left if r.run_id != keep), key=lambda r: r.newest):
        if total <= bounds.max_bytes:
            break
        _expire(folders, run, f"the quarantine is over its bound of {bounds.max_bytes} bytes")
        total -= run.size
    return total <= bounds.max_bytes


def _expire(folders: Folders, run: RunFolder, why: str) -> None:
    folders.delete(run.path)
    log.info("quarantine: removed %s (%d bytes): %s", run.path, run.size, why)
