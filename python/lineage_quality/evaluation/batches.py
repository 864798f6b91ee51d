"""A streaming query's micro-batches as something to judge: the files they added to their sink.

The OpenLineage Spark listener 1.53 sends nothing for the micro-batches of a file sink or a
Delta sink (a `foreachBatch` query's writes are ordinary writes it reports, judged as such).
In-driver, `attach` watches the streaming queries (driver/streaming.py) and, for each batch or
run of batches, gives the producer a COMPLETE of its own naming the sink as output with the
facet `lineageQuality_microBatches`: the query, the batch ids, and the files they added
(path, size, modification time). The evaluator then reads exactly those files (`left`), and
every verdict says which batches it covers (`params.batches`) and what it read (`scope`).

Which files a batch added: a file sink's log (`_spark_metadata/N`, or the entries a compacted
`N.compact` has beyond the logs before it); a Delta sink's commit whose `txn` is the query's
batch (`add` actions). Pure but for reading those logs (`read_lines`).
"""

from __future__ import annotations

import datetime
import json
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import unquote

import attrs

from lineage_quality.errors import DatasetError
from lineage_quality.evaluation.storage import StoredFile
from lineage_quality.evaluation.written import LeftByRun
from lineage_quality.values.event import Event, int_of
from lineage_quality.values.refs import DatasetRef
from lineage_quality.version import PRODUCER

FACET = "lineageQuality_microBatches"
MAX_FILES = 100_000  # files of one evaluation's batches, at most (more: an ERROR saying so)


@attrs.frozen
class BatchFiles:
    """Micro-batches `batches` of query `query` and the files (path, size, ms) they added."""

    query: str
    batches: tuple[int, ...]
    files: tuple[tuple[str, int, int], ...]

    def left(self, completed_ms: int, listing: Sequence[StoredFile]) -> LeftByRun:
        """The batches' files as the dataset's listing has them (the others: not read); a
        DatasetError when one is gone or was rewritten since."""
        found = {f.path: f for f in listing}
        kept = []
        for path, size, modified in self.files:
            now = found.get(path)
            if now is None:
                raise DatasetError(f"{path}, written by micro-batch(es) {self.ranges()}, is gone")
            if (now.size, now.modified_ms) != (size, modified):
                raise DatasetError(f"{path}, written by micro-batch(es) {self.ranges()}, changed")
            kept.append(now)
        wanted = {p for p, _, _ in self.files}
        later = tuple(f for f in listing if f.path not in wanted)
        return LeftByRun(completed_ms, tuple(kept), later)

    def ranges(self) -> str:
        """`3`, `3-5`, `3-5, 8`: the batch ids, consecutive ones as ranges."""
        parts: list[str] = []
        ids = sorted(self.batches)
        start = prev = ids[0]
        for b in [*ids[1:], None]:
            if b is not None and b == prev + 1:
                prev = b
                continue
            parts.append(str(start) if start == prev else f"{start}-{prev}")
            if b is not None:
                start = prev = b
        return ", ".join(parts)

    def describe(self) -> str:
        """What a verdict on these batches covers, for the facet's `params.scope`."""
        many = len(self.batches) > 1
        text = f"the rows of micro-batch{'es' if many else ''} {self.ranges()} of streaming query "
        text += f"{self.query} ({len(self.files)} file(s))"
        if many:
            text += ": evaluation fell behind the query, so these batches were judged together"
        return text


def batch_files(event: Event | Mapping[str, Any], ref: DatasetRef) -> BatchFiles | None:
    """The micro-batches an output of this event stands for, None for any other dataset; a
    DatasetError when the facet is not one this module wrote."""
    if ref.role != "outputs":
        return None
    facet = Event.of(event).dataset(ref).facet(FACET)
    if not facet:
        return None
    try:
        files = tuple((str(p), _whole(s), _whole(m)) for p, s, m in facet["files"])
        batches = tuple(_whole(b) for b in facet["batches"])
        query = str(facet["query"])
    except (KeyError, TypeError, ValueError) as exc:
        raise DatasetError(f"the {FACET} facet is malformed: {exc}") from exc
    if not batches or not files or len(files) > MAX_FILES:
        raise DatasetError(f"the {FACET} facet names no batch, no file or too many files")
    return BatchFiles(query, batches, files)


def _whole(value: Any) -> int:
    found = int_of(value)  # the event's numbers are kept as written (rawjson)
    if found is None:
        raise ValueError(f"not a whole number: {value!r}")
    return found


def batch_event(
    namespace: str, job: str, sink: tuple[str, str], batches: BatchFiles, now_ms: int
) -> dict[str, Any]:
    """The COMPLETE standing for `batches` (`sink`: the dataset's namespace and name)."""
    when = datetime.datetime.fromtimestamp(now_ms / 1000, datetime.UTC)
    facet = {
        "_producer": PRODUCER,
        "_schemaURL": f"{PRODUCER}/docs/evaluation.md#streaming",
        "query": batches.query,
        "batches": list(batches.batches),
        "files": [list(f) for f in batches.files],
    }
    return {
        "eventType": "COMPLETE",
        "eventTime": when.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "producer": PRODUCER,
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": str(uuid.uuid4()), "facets": {}},
        "job": {"namespace": namespace, "name": job, "facets": {}},
        "inputs": [],
        "outputs": [{"namespace": sink[0], "name": sink[1], "facets": {FACET: facet}}],
    }


# -- which files a batch added (the sink's own logs) -----------------------------------------


def file_sink_files(
    location: str, batch: int, read_lines: Callable[[str], list[str] | None]
) -> list[tuple[str, int, int]] | None:
    """The files micro-batch `batch` added to a file sink at `location` (its log in
    `_spark_metadata`), None when the log cannot be read. `read_lines(path)`: a file's lines,
    None when absent."""
    log = f"{location.rstrip('/')}/_spark_metadata"
    own = read_lines(f"{log}/{batch}")
    if own is not None:
        return _sink_entries(own)
    compact = read_lines(f"{log}/{batch}.compact")
    if compact is None:
        return None
    # a compacted log holds every batch's files up to this one: those before it are left out
    earlier: set[str] = set()
    for before in range(batch - 1, -1, -1):
        lines = read_lines(f"{log}/{before}")
        if lines is None:
            lines = read_lines(f"{log}/{before}.compact")
            if lines is None:
                return None
            earlier |= {p for p, _, _ in _sink_entries(lines)}
            break
        earlier |= {p for p, _, _ in _sink_entries(lines)}
    return [f for f in _sink_entries(compact) if f[0] not in earlier]


def _sink_entries(lines: list[str]) -> list[tuple[str, int, int]]:
    found = []
    for line in lines[1:]:  # the first line is the log's version (`v1`)
        if not line.strip():
            continue
        entry = json.loads(line)
        if entry.get("action", "add") != "add":
            continue
        path, size = _local(str(entry["path"])), int(entry["size"])
        found.append((path, size, int(entry["modificationTime"])))
    return found


def delta_sink_files(
    location: str,
    query_id: str,
    batch: int,
    read_lines: Callable[[str], list[str] | None],
    stat: Callable[[str], tuple[int, int] | None],
    latest: int,
) -> list[tuple[str, int, int]] | None:
    """The files micro-batch `batch` of query `query_id` added to a Delta sink: the commit at or
    before version `latest` whose `txn` names that batch (looked for from the newest); None when
    not found. `stat(path)`: size and modification time of a data file."""
    root = location.rstrip("/")
    for version in range(latest, max(-1, latest - 100), -1):
        lines = read_lines(f"{root}/_delta_log/{version:020d}.json")
        if lines is None:
            continue
        actions = [json.loads(line) for line in lines if line.strip()]
        txn = next((a["txn"] for a in actions if "txn" in a), None)
        if txn is None or txn.get("appId") != query_id or int(txn.get("version", -1)) != batch:
            continue
        files = []
        for action in actions:
            add = action.get("add")
            if add is None:
                continue
            path = f"{root}/{unquote(str(add['path']))}"
            found = stat(path)
            if found is None:
                return None
            files.append((path, found[0], found[1]))
        return files
    return None


def _local(path: str) -> str:
    """A file sink log's `file:///x` as the local path `/x` (the listing's spelling)."""
    return unquote(path[len("file://") :]) if path.startswith("file://") else path
