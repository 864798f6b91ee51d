"""What is kept along lineage, as values (issue 39). Pure.

A dataset's health is its latest **write** (`Write`: the run that wrote it, when, the table
version where the format has one, whether rules were evaluated on it) with the rules that failed
there (`Failure`) and the marks it got from upstream (`Mark`). A run's **lineage** (`RunLineage`)
is what it read (`Read`) and wrote (`Written`, with the column lineage of the event:
`InputField`s per output column). `propagate.py` turns the two into the marks of a run's outputs.

Datasets are named as the facets name them: `namespace:name` (`DatasetRef.key`).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import attrs

WHOLE = None  # a failure or mark on no single column: the whole dataset


@attrs.frozen
class Failure:
    """A rule that failed on a write, or could not run there (an ERROR is never a pass).
    `column` None: a dataset-level rule (row count, freshness, a key set's uniqueness)."""

    rule: str
    action: str  # rules.Action's value: LOG, ALERT, BLOCK, ...
    status: str  # FAILED or ERROR
    column: str | None = WHOLE

    @property
    def blocking(self) -> bool:
        return self.action == "BLOCK"


@attrs.frozen
class Origin:
    """Where a propagated failure started: the dataset, its rule (and column), the run whose
    write (or read) failed it, and that write's version."""

    dataset: str
    rule: str
    run: str
    version: str | None = None
    column: str | None = WHOLE


@attrs.frozen
class Mark:
    """A column of a write (`column` None: the whole dataset) derived from unhealthy data:
    `origin` is the failure upstream, `via` the input of this run it came through (and the
    column of it, `via_column`); `blocking` as the policy said when the mark was made."""

    column: str | None
    origin: Origin
    via: str
    via_column: str | None = WHOLE
    blocking: bool = False


@attrs.frozen
class Write:
    """A dataset's write by a run: `evaluated` when rules were evaluated on it (a dataset with
    no contract is written, and may be marked, without being evaluated)."""

    dataset: str
    run: str
    event_ms: int
    version: str | None = None
    evaluated: bool = False
    failures: tuple[Failure, ...] = ()
    marks: tuple[Mark, ...] = ()
    tables: tuple[str, ...] = ()  # its catalog table identities (`symlinks`), for `gate`

    @property
    def healthy(self) -> bool:
        """Nothing failed here and nothing upstream marked it."""
        return not self.failures and not self.marks

    @property
    def blockers(self) -> tuple[Failure | Mark, ...]:
        """The failed BLOCK rules and the blocking marks: what `gate --dataset` stops on."""
        return (*(f for f in self.failures if f.blocking), *(m for m in self.marks if m.blocking))


@attrs.frozen
class InputField:
    """One input column an output column comes from; `direct` when its value is derived from
    it (OpenLineage transformation type DIRECT), not only filtered, joined, grouped or sorted
    by it (INDIRECT)."""

    dataset: str
    field: str
    direct: bool = True


def _frozen_columns(
    value: Mapping[str, tuple[InputField, ...]] | None,
) -> Mapping[str, tuple[InputField, ...]] | None:
    return None if value is None else MappingProxyType(dict(value))


@attrs.frozen
class Written:
    """An output of a run. `columns`: each output column's input fields, from the event's
    `columnLineage` facet; None when the event has none for it (then every unhealthy input
    marks the whole dataset). `sources`: the inputs the facet names for the dataset as a
    whole (its `dataset` list: filters, joins, groupings)."""

    dataset: str
    version: str | None = None
    columns: Mapping[str, tuple[InputField, ...]] | None = attrs.field(
        default=None, converter=_frozen_columns, eq=False
    )
    sources: frozenset[str] = frozenset()
    tables: tuple[str, ...] = ()  # its catalog table identities (`symlinks`, type TABLE)

    def derives_from(self, dataset: str) -> bool:
        """Some of it comes from `dataset`, as the column lineage says (always, without it)."""
        if self.columns is None or dataset in self.sources:
            return True
        return any(f.dataset == dataset for fields in self.columns.values() for f in fields)


@attrs.frozen
class Read:
    """An input of a run, and the version it read where the event says (`version` facet)."""

    dataset: str
    version: str | None = None


@attrs.frozen
class Reader:
    """A run that read a dataset (an input edge kept): its job, the version it read where the
    event said, and when it completed."""

    run: str
    job: str
    version: str | None
    event_ms: int


@attrs.frozen
class RunLineage:
    """What one run (one COMPLETE event) read and wrote."""

    run: str
    job: str
    event_ms: int
    reads: tuple[Read, ...] = ()
    writes: tuple[Written, ...] = ()


def as_json(value: Failure | Mark) -> dict[str, Any]:
    """A failure or mark as the store keeps it (JSON object, short keys left out when None)."""
    if isinstance(value, Failure):
        out: dict[str, Any] = {"rule": value.rule, "action": value.action, "status": value.status}
        if value.column is not None:
            out["column"] = value.column
        return out
    origin = value.origin
    mark: dict[str, Any] = {
        "origin": {k: v for k, v in attrs.asdict(origin).items() if v is not None},
        "via": value.via,
    }
    if value.column is not None:
        mark["column"] = value.column
    if value.via_column is not None:
        mark["viaColumn"] = value.via_column
    if value.blocking:
        mark["blocking"] = True
    return mark


def failure_of(doc: Mapping[str, Any]) -> Failure:
    return Failure(
        str(doc["rule"]), str(doc["action"]), str(doc["status"]), _text(doc.get("column"))
    )


def mark_of(doc: Mapping[str, Any]) -> Mark:
    o = doc["origin"]
    origin = Origin(
        str(o["dataset"]),
        str(o["rule"]),
        str(o["run"]),
        _text(o.get("version")),
        _text(o.get("column")),
    )
    return Mark(
        _text(doc.get("column")),
        origin,
        str(doc["via"]),
        _text(doc.get("viaColumn")),
        bool(doc.get("blocking", False)),
    )


def _text(value: Any) -> str | None:
    return None if value is None else str(value)
