"""The data files of a plain-file dataset as storage has them now: path, size, modification time.

The producer tells the files a run left from those written after its COMPLETE by their
modification times (see evaluation/written.py). Local paths are listed here; any other scheme
(s3a, hdfs, abfs, ...) through Hadoop's FileSystem in the evaluator's JVM, in one call (JVM helper
`lineagequality.FileListing`), or file by file over py4j without the helper jar. Which files
count follows Spark's own reader: names starting with `.`, or with `_` and no `=`, are skipped.
"""

from __future__ import annotations

import os
from typing import Any

import attrs

from lineage_quality.engine.jvm_helpers import jvm_helper
from lineage_quality.errors import DatasetError


@attrs.frozen
class StoredFile:
    """A data file: `below` is its path under the dataset's location (`/k=1/part-0.parquet`;
    "" when the location is the file itself), `path` the location joined with it."""

    path: str
    below: str
    size: int
    modified_ms: int

    @property
    def partitioned(self) -> bool:
        """Whether the file lies in a partition folder (`k=v`) of its dataset."""
        return any("=" in part for part in self.below.split("/")[:-1])


def _join(location: str, below: str) -> str:
    if not below:
        return location
    return location.rstrip("/") + "/" + below.lstrip("/")


def hidden(name: str) -> bool:
    """Whether Spark's file reader skips a file or folder of this name."""
    return (
        name.startswith(".")
        or name.endswith("._COPYING_")
        or (name.startswith("_") and "=" not in name)
    )


def list_files(spark: Any, location: str) -> list[StoredFile]:
    """The data files at `location` (a file, or every file below a folder), sorted by path;
    [] when nothing is there. Raises DatasetError when storage cannot be listed."""
    try:
        found = _local(location) if "://" not in location else _hadoop(spark, location)
        return sorted(found, key=lambda f: f.path)
    except OSError as exc:
        raise DatasetError(f"cannot list {location}: {exc.strerror or exc}") from exc
    except DatasetError:
        raise
    except Exception as exc:  # py4j errors from the Hadoop filesystem
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise DatasetError(f"cannot list {location}: {first[:500]}") from exc


def _local(location: str) -> list[StoredFile]:
    if os.path.isfile(location):
        stat = os.stat(location)
        return [StoredFile(location, "", stat.st_size, stat.st_mtime_ns // 1_000_000)]
    if not os.path.isdir(location):
        return []
    found = []
    for root, dirs, files in os.walk(location):
        dirs[:] = [d for d in dirs if not hidden(d)]
        for name in files:
            if not hidden(name):
                path = os.path.join(root, name)
                stat = os.stat(path)
                below = path[len(location.rstrip("/")) :]
                found.append(StoredFile(path, below, stat.st_size, stat.st_mtime_ns // 1_000_000))
    return found


def _hadoop(spark: Any, location: str) -> list[StoredFile]:
    conf = spark._jsc.hadoopConfiguration()
    helper = jvm_helper("FileListing", "FILE_LISTING")
    if helper is not None:
        return parse_listing(location, helper.list(conf, location))
    jvm = spark.sparkContext._jvm
    root = jvm.org.apache.hadoop.fs.Path(location)
    fs = root.getFileSystem(conf)
    if not fs.exists(root):
        return []
    top = fs.getFileStatus(root)
    if top.isFile():
        return [StoredFile(location, "", int(top.getLen()), int(top.getModificationTime()))]
    prefix = top.getPath().toString()
    found = []
    files = fs.listFiles(root, True)
    while files.hasNext():
        status = files.next()
        path = status.getPath().toString()
        if not path.startswith(prefix):
            raise DatasetError(f"the listing of {prefix} returned {path}, outside it")
        below = path[len(prefix) :]
        if not any(hidden(part) for part in below.split("/") if part):
            found.append(
                StoredFile(
                    _join(location, below),
                    below,
                    int(status.getLen()),
                    int(status.getModificationTime()),
                )
            )
    return found


def parse_listing(location: str, text: str) -> list[StoredFile]:
    """FileListing's records: `LENGTH:below TAB size TAB millis NEWLINE`."""
    found = []
    at = 0
    while at < len(text):
        colon = text.index(":", at)
        length = int(text[at:colon])
        path = text[colon + 1 : colon + 1 + length]
        end = text.index("\n", colon + 1 + length)
        _, size, modified = text[colon + 1 + length : end].split("\t")
        found.append(StoredFile(_join(location, path), path, int(size), int(modified)))
        at = end + 1
    return found
