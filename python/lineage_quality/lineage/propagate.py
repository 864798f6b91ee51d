"""The propagation rule: which outputs of a run, and which of their columns, are marked because
the run read unhealthy data (issue 39). Pure.

An **issue** is something wrong with one input of the run, on one of its columns or on the whole
dataset: a rule that failed in this run's own verdicts on that input, a rule that failed on the
write of it the run read, or a mark that write carried from further upstream (its origin kept:
hop by hop, the marks name the first failure). Each output of the run then gets a `Mark`:

- on exactly the output columns whose values are derived (DIRECT) from the failing input column,
  as the event's column lineage says; a column only filtered, joined or grouped by it is not;
- on the whole output for a dataset-level issue (row count, freshness, a key set), when the
  output derives from that input at all;
- on the whole output for any issue when the event has no column lineage for it.

A dataset is never marked by its own earlier failures (a run that reads and rewrites it: its own
rules judge its new write). The spread stops where an upstream write was healthy again: a run
that read it finds no issue, so its outputs' new writes carry no mark. Past `max_marks` marks
on one output, the marks of each origin become one whole-dataset mark.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import attrs

from lineage_quality.lineage.model import WHOLE, Failure, Mark, Origin, RunLineage, Write, Written
from lineage_quality.lineage.policy import Upstream


@attrs.frozen
class Issue:
    """Something wrong with input `dataset` of a run, on `column` (None: the whole of it)."""

    dataset: str
    column: str | None
    origin: Origin


def issues_of_write(write: Write) -> list[Issue]:
    """What a run reading `write` reads wrong: its failed rules, and the marks it carries."""
    found = [
        Issue(
            write.dataset,
            f.column,
            Origin(write.dataset, f.rule, write.run, write.version, f.column),
        )
        for f in write.failures
    ]
    found += [Issue(write.dataset, m.column, m.origin) for m in write.marks]
    return found


def issues_of_read(
    dataset: str,
    failures: Iterable[Failure],
    run: str,
    version: str | None,
    read: Write | None = None,
) -> list[Issue]:
    """What this run's own verdicts on input `dataset` (read at `version`) found wrong, but for
    what the write it read (`read`) already failed: the same rule on the same column of the same
    write is one issue, whose origin is that write (one mark per column downstream, not one per
    run that judged it)."""
    known = set() if read is None else {(f.rule, f.column) for f in read.failures}
    return [
        Issue(dataset, f.column, Origin(dataset, f.rule, run, version, f.column))
        for f in failures
        if (f.rule, f.column) not in known
    ]


def propagate(
    run: RunLineage,
    issues: Sequence[Issue],
    policy: Upstream = Upstream.WARN,
    max_marks: int = 500,
) -> dict[str, tuple[Mark, ...]]:
    """Each output of `run` (by dataset key) with the marks `issues` give it; an output with
    none is left out. Nothing under policy OFF."""
    if policy is Upstream.OFF or not issues:
        return {}
    marked: dict[str, tuple[Mark, ...]] = {}
    for written in run.writes:
        marks = _bounded(_marks(written, issues, policy.blocking), max_marks)
        if marks:
            marked[written.dataset] = marks
    return marked


def _marks(written: Written, issues: Sequence[Issue], blocking: bool) -> list[Mark]:
    found: dict[tuple[str | None, Origin], Mark] = {}

    def add(column: str | None, issue: Issue) -> None:
        mark = Mark(column, issue.origin, issue.dataset, issue.column, blocking)
        found.setdefault((column, issue.origin), mark)

    for issue in issues:
        if issue.origin.dataset == written.dataset or issue.dataset == written.dataset:
            continue  # its own earlier failures: its own rules judge the new write
        if written.columns is None:
            add(WHOLE, issue)
        elif issue.column is None:
            if written.derives_from(issue.dataset):
                add(WHOLE, issue)
        else:
            wanted = issue.column.casefold()  # Spark resolves column names ignoring case
            for column, fields in written.columns.items():
                if any(
                    f.direct and f.dataset == issue.dataset and f.field.casefold() == wanted
                    for f in fields
                ):
                    add(column, issue)
    whole = {origin for column, origin in found if column is None}
    # a column mark says nothing more than its origin's whole-dataset mark
    return [m for (column, origin), m in found.items() if column is None or origin not in whole]


def _bounded(marks: list[Mark], max_marks: int) -> tuple[Mark, ...]:
    if len(marks) <= max_marks:
        return tuple(marks)
    collapsed: dict[Origin, Mark] = {}
    for m in marks:
        collapsed.setdefault(m.origin, Mark(WHOLE, m.origin, m.via, m.via_column, m.blocking))
    return tuple(collapsed.values())[:max_marks]
