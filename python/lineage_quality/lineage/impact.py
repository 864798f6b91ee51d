"""`impact`: how far a failing write spread (issue 39). Pure, over the rows the store keeps.

From a write (a dataset's latest failing write, or the write of one run) the walk goes to each
run that read exactly that write (matched as propagation matches a read: the version the run
names, else the latest write before it completed), then to that run's outputs. An output is
**affected** when the store kept a mark on its write that came from the walked write (an origin
of its failures or marks, through that dataset); its marked columns are the affected columns,
None for the whole dataset. The walk goes on from affected writes only, hop by hop, as the marks
did; an output that read the write but kept no mark (a branch reading healthy columns only) is
counted as a **reader**, not walked further.

Bounded: at most `max_writes` affected writes and `max_readers` reads of one write are looked
at; past either, `truncated` says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import attrs

from lineage_quality.lineage.model import Mark, Origin, Read, Reader, Write
from lineage_quality.lineage.propagate import issues_of_write

MAX_WRITES = 1000
MAX_READERS = 1000


class Rows(Protocol):
    """What the walk asks of the store (`LineageStore` answers it)."""

    def written(self, read: Read, event_ms: int) -> Write | None: ...

    def readers(self, dataset: str, since_ms: int, limit: int = ...) -> list[Reader]: ...

    def writes_of_run(self, run: str, limit: int = ...) -> list[Write]: ...


OriginKey = tuple[str, str, str, str | None]


def origin_key(origin: Origin) -> OriginKey:
    """An origin's identity (dataset, rule, run, column): its version is said, not matched."""
    return origin.dataset, origin.rule, origin.run, origin.column


@attrs.frozen
class Hop:
    """An affected write downstream: `dataset` written by `run` (of `job`), which read `source`
    (the upstream dataset it came through); `columns` the marked columns (None: the whole)."""

    dataset: str
    run: str
    job: str
    event_ms: int
    source: str
    depth: int
    columns: tuple[str | None, ...]
    blocking: bool
    version: str | None = None

    @property
    def whole(self) -> bool:
        return None in self.columns


@attrs.frozen
class Impact:
    """The failing write `start`, the failures it stands for (`origins`), the affected writes
    downstream in walk order, and every downstream dataset a run wrote after reading a walked
    write (`readers`, affected or not)."""

    start: Write
    origins: tuple[Origin, ...]
    hops: tuple[Hop, ...]
    readers: tuple[str, ...]
    truncated: bool = False

    @property
    def datasets(self) -> dict[str, tuple[str | None, ...]]:
        """Each affected dataset and its affected columns (None: the whole), over its runs."""
        out: dict[str, dict[str | None, None]] = {}
        for hop in self.hops:
            out.setdefault(hop.dataset, {}).update(dict.fromkeys(hop.columns))
        return {d: _ordered(c) for d, c in out.items()}


def _ordered(columns: dict[str | None, None]) -> tuple[str | None, ...]:
    if None in columns:
        return (None,)  # the whole dataset says more than any of its columns
    return tuple(sorted(c for c in columns if c is not None))


def failing_write(writes: Sequence[Write]) -> Write | None:
    """The latest write (of `writes`, latest first) with a failed rule or a mark."""
    return next((w for w in writes if not w.healthy), None)


def walk(
    start: Write, rows: Rows, max_writes: int = MAX_WRITES, max_readers: int = MAX_READERS
) -> Impact:
    """The impact of `start` (see the module)."""
    origins = {origin_key(i.origin): i.origin for i in issues_of_write(start)}
    hops: list[Hop] = []
    readers: dict[str, None] = {}
    seen = {(start.dataset, start.run)}
    queue: list[tuple[Write, frozenset[OriginKey], int]] = [(start, frozenset(origins), 0)]
    truncated = False
    while queue:
        write, wanted, depth = queue.pop(0)
        found = rows.readers(write.dataset, write.event_ms, max_readers + 1)
        if len(found) > max_readers:
            truncated, found = True, found[:max_readers]
        for reader in found:
            if reader.run == write.run:
                continue
            matched = rows.written(Read(write.dataset, reader.version), reader.event_ms)
            if matched is None or matched.run != write.run:
                continue  # it read another write of the dataset
            for out in rows.writes_of_run(reader.run):
                if out.dataset == write.dataset:
                    continue  # a rewrite of the same dataset: its own rules judge it
                readers[out.dataset] = None
                marks = _from(out.marks, write, wanted, reader.run, depth)
                if not marks or (out.dataset, out.run) in seen:
                    continue
                if len(hops) >= max_writes:
                    truncated = True
                    continue
                seen.add((out.dataset, out.run))
                columns = _ordered(dict.fromkeys(m.column for m in marks))
                hops.append(
                    Hop(out.dataset, out.run, reader.job, out.event_ms, write.dataset,
                        depth + 1, columns, any(m.blocking for m in marks), out.version)
                )  # fmt: skip
                carried = frozenset(origin_key(m.origin) for m in marks)
                queue.append((out, carried, depth + 1))
    return Impact(start, tuple(origins.values()), tuple(hops), tuple(readers), truncated)


def _from(
    marks: Sequence[Mark], write: Write, wanted: frozenset[OriginKey], run: str, depth: int
) -> list[Mark]:
    """The marks that came through `write`'s dataset from what was wrong with it: its origins,
    or (at the first hop) the reading run's own verdicts on it."""
    found = []
    for m in marks:
        if m.via != write.dataset:
            continue
        key = origin_key(m.origin)
        own = depth == 0 and m.origin.dataset == write.dataset and m.origin.run == run
        if key in wanted or own:
            found.append(m)
    return found
