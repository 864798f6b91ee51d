"""In-driver, each micro-batch of a streaming query judged on the files it added to its sink.

The OpenLineage Spark listener 1.53 reports a `foreachBatch` query's writes (each an ordinary
write, judged as one) but nothing of a file sink's or a Delta sink's batches. So `attach`
registers `StreamWatch` as a `StreamingQueryListener` on the job's session: each progress of a
query whose sink is a bound dataset (`FileSink[path]`, `DeltaSink[path]`) and that read rows is
queued; one thread turns what is queued into COMPLETEs for the producer (evaluation/batches.py:
the batches' files, read and judged alone), then waits until the producer has evaluated and
forwarded them before taking the next. A query faster than its evaluation therefore has its
batches merged into one evaluation, never skipped: each verdict's `params.batches` lists the
batches it covers. A batch whose files cannot be found is logged and listed with the others of
its group; a group none of whose files can be found is logged as not judged.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import re
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from lineage_quality.contracts import BoundRules, rules_for
from lineage_quality.contracts.binding import pattern_from_location
from lineage_quality.evaluation.batches import (
    BatchFiles,
    batch_event,
    delta_sink_files,
    file_sink_files,
)
from lineage_quality.evaluation.reuse import stat_file

log = logging.getLogger(__name__)

_SINK = re.compile(r"^(FileSink|DeltaSink)\[(.+)\]$")
MAX_QUEUED = 10_000  # batches waiting at most (more: logged as not judged, never blocking Spark)


@attrs.frozen
class Batch:
    """One micro-batch that wrote rows to a file or Delta sink."""

    query_id: str
    name: str
    batch_id: int
    kind: str  # FileSink or DeltaSink
    location: str
    rows: int


def sink_of(description: str) -> tuple[str, str] | None:
    """(kind, location) of a progress's sink description, None for other sinks."""
    found = _SINK.match(description.strip())
    return None if found is None else (found.group(1), found.group(2))


class StreamWatch:
    """Queues the bound sinks' micro-batches and hands them to `accept` (the producer's intake)
    as COMPLETEs, one group at a time; `idle(timeout)`: whether the producer has evaluated and
    forwarded everything given so far."""

    def __init__(
        self,
        bindings: Sequence[BoundRules],
        accept: Callable[[str], None],
        idle: Callable[[float], bool],
        namespace: str,
    ) -> None:
        self.bindings = list(bindings)
        self.accept = accept
        self.idle = idle
        self.namespace = namespace
        self.spark: Any = None
        self.sent: list[tuple[int, ...]] = []  # the batch ids of each COMPLETE given (tests)
        self._queue: queue.Queue[Batch | None] = queue.Queue(MAX_QUEUED)
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="lq-stream-watch", daemon=True)

    def watch(self, spark: Any) -> None:
        """Listen to the queries of `spark` (the job's session)."""
        from pyspark.sql.streaming.listener import StreamingQueryListener

        watch = self

        class _Listener(StreamingQueryListener):
            def onQueryStarted(self, event: Any) -> None:
                pass

            def onQueryIdle(self, event: Any) -> None:
                pass

            def onQueryTerminated(self, event: Any) -> None:
                pass

            def onQueryProgress(self, event: Any) -> None:
                try:
                    watch.offer(event.progress)
                except Exception:  # never break the query: say it
                    log.exception("a micro-batch could not be queued for evaluation")

        self.spark = spark
        spark.streams.addListener(_Listener())
        if not self._thread.is_alive():
            self._thread.start()

    def offer(self, progress: Any) -> None:
        """Queue a progress's batch if its sink is bound and it read rows."""
        sink = sink_of(str(progress.sink.description))
        if sink is None or int(progress.numInputRows) <= 0:
            return
        pattern = pattern_from_location(sink[1])
        if not rules_for(self.bindings, pattern.namespace, pattern.name):
            return
        batch = Batch(
            str(progress.id),
            str(progress.name or progress.id),
            int(progress.batchId),
            sink[0],
            sink[1],
            int(progress.numInputRows),
        )
        try:
            self._queue.put_nowait(batch)
        except queue.Full:  # the listener bus must not wait: said, not silent
            log.error(
                "micro-batch %d of %s not judged: %d batches already wait for evaluation",
                batch.batch_id,
                batch.name,
                MAX_QUEUED,
            )

    def flush(self, timeout: float) -> None:
        """Give the producer every batch queued so far (the end of the job), within `timeout`."""
        deadline = time.monotonic() + timeout
        while not self._queue.empty() and time.monotonic() < deadline:
            time.sleep(0.05)
        with self._lock:  # the group being given is given
            pass

    def stop(self) -> None:
        self._queue.put(None)

    def _run(self) -> None:
        while True:
            first = self._queue.get()
            if first is None:
                return
            pending = [first]
            while True:  # everything queued meanwhile: merged into one evaluation per sink
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    self._queue.put(None)
                    break
                pending.append(more)
            with self._lock:
                for group in _groups(pending):
                    self._give(group)
            self.idle(3600.0)  # the producer evaluated them: the next batches merge meanwhile

    def _give(self, group: list[Batch]) -> None:
        head = group[0]
        files: list[tuple[str, int, int]] = []
        for batch in group:
            found = self._files(batch)
            if found is None:
                log.warning(
                    "micro-batch %d of %s: its files in %s are not found; judged with none",
                    batch.batch_id,
                    batch.name,
                    batch.location,
                )
                continue
            files.extend(found)
        ids = tuple(sorted({b.batch_id for b in group}))
        if not files:
            log.warning("micro-batches %s of %s: no file to judge", ids, head.name)
            return
        pattern = pattern_from_location(head.location)
        judged = BatchFiles(head.name, ids, tuple(dict.fromkeys(files)))
        event = batch_event(
            self.namespace,
            f"{head.name}.micro_batches",
            (pattern.namespace, pattern.name),
            judged,
            int(time.time() * 1000),
        )
        self.accept(json.dumps(event))
        self.sent.append(ids)

    def _files(self, batch: Batch) -> list[tuple[str, int, int]] | None:
        if batch.kind == "FileSink":
            return file_sink_files(batch.location, batch.batch_id, self._read_lines)
        latest = self._latest_delta(batch.location)
        if latest is None:
            return None
        return delta_sink_files(
            batch.location,
            batch.query_id,
            batch.batch_id,
            self._read_lines,
            lambda path: stat_file(self.spark, path),
            latest,
        )

    def _read_lines(self, path: str) -> list[str] | None:
        try:
            if "://" not in path or path.startswith("file:"):
                local = path.removeprefix("file:")
                with open(local, encoding="utf-8") as handle:
                    return handle.read().splitlines()
            rows = self.spark.read.text(path).collect()
            return [str(r[0]) for r in rows]
        except Exception:  # absent or unreadable: the caller says so
            return None

    def _latest_delta(self, location: str) -> int | None:
        log_dir = f"{location.rstrip('/')}/_delta_log"
        try:
            if "://" in location and not location.startswith("file:"):
                return None  # a remote Delta sink: its log listed through the table's history
            names = os.listdir(log_dir.removeprefix("file:"))
        except OSError:
            return None
        versions = [int(n[:20]) for n in names if n.endswith(".json") and n[:20].isdigit()]
        return max(versions) if versions else None


def _groups(batches: list[Batch]) -> list[list[Batch]]:
    """The batches by (query, sink), in the order first seen."""
    out: dict[tuple[str, str], list[Batch]] = {}
    for b in batches:
        out.setdefault((b.query_id, b.location), []).append(b)
    return list(out.values())


def watch_streams(
    builder: Any, producer: Any, bindings: Sequence[BoundRules], namespace: str
) -> StreamWatch:
    """A `StreamWatch` giving batches to the in-driver `producer`, listening to the session
    `builder.getOrCreate()` makes (the job's: it does not exist yet when `attach` runs)."""
    watch = StreamWatch(
        bindings,
        lambda body: producer.producer.intake.accept(body, None),
        producer.spool.wait_empty,
        namespace,
    )
    made = builder.getOrCreate

    def get_or_create() -> Any:
        session = made()
        if watch.spark is None:
            watch.watch(session)
        return session

    builder.getOrCreate = get_or_create
    return watch
