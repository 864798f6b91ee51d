"""One COMPLETE event along lineage: the health of what it read, the marks of what it wrote, and
the writes to keep (`observe`). Pure: the writes already kept are asked of `lookup` (the store, or
anything answering the same question)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import attrs

from lineage_quality.lineage.model import Mark, Read, RunLineage, Write
from lineage_quality.lineage.observe import by_key, evaluated, failures_of, run_lineage
from lineage_quality.lineage.policy import Upstream
from lineage_quality.lineage.propagate import Issue, issues_of_read, issues_of_write, propagate
from lineage_quality.results import RuleResult
from lineage_quality.values.event import datasets_of
from lineage_quality.values.refs import DatasetRef

# The write of `read.dataset` that a run at `event_ms` read: the one of its version where the
# event names one, else the latest before the run completed (None: never written as far as known).
Lookup = Callable[[Read, int], "Write | None"]


@attrs.frozen
class Observed:
    """What one event tells: the run's lineage, the writes of its outputs (with their failed
    rules and marks), and the marks by output dataset."""

    run: RunLineage
    writes: tuple[Write, ...]
    marks: Mapping[str, tuple[Mark, ...]]

    def marks_by_ref(self, event: Mapping[str, Any]) -> dict[DatasetRef, tuple[Mark, ...]]:
        """The marks of each output of `event` (as enrich takes them)."""
        if not self.marks:  # the usual case: the event's datasets need not be listed again
            return {}
        return {
            ref: self.marks[ref.key]
            for ref in datasets_of(event)
            if ref.role == "outputs" and ref.key in self.marks
        }


def observe(
    event: Mapping[str, Any],
    results: Mapping[DatasetRef, Sequence[RuleResult]],
    lookup: Lookup,
    policy: Upstream = Upstream.WARN,
    max_marks: int = 500,
    provisional: Collection[DatasetRef] = (),
) -> Observed:
    """The run of `event`, its outputs' writes and marks. `results`: the event's verdicts;
    `provisional`: datasets whose verdicts are timeouts with the real ones to follow (their write
    is kept as not evaluated yet)."""
    run = run_lineage(event)
    judged = {ref: r for ref, r in results.items() if ref not in provisional}
    read_verdicts = by_key(judged, "inputs")  # a timeout whose verdict follows marks nothing
    issues: list[Issue] = []
    for read in run.reads:
        write = lookup(read, run.event_ms)
        if write is not None:
            issues += issues_of_write(write)
        own = failures_of(read_verdicts.get(read.dataset, []))
        issues += issues_of_read(read.dataset, own, run.run, read.version, write)
    marks = propagate(run, issues, policy, max_marks)
    waiting = {ref.key for ref in provisional if ref.role == "outputs"}
    written = by_key(results, "outputs")
    writes = tuple(
        Write(
            out.dataset,
            run.run,
            run.event_ms,
            out.version,
            evaluated=out.dataset not in waiting and evaluated(written.get(out.dataset, [])),
            failures=() if out.dataset in waiting else failures_of(written.get(out.dataset, [])),
            marks=marks.get(out.dataset, ()),
            tables=out.tables,
        )
        for out in run.writes
    )
    return Observed(run, writes, marks)
