"""`Event`: one OpenLineage run event as the rest of the package reads it, read-only.

The receiver parses a body once (rawjson: numbers as written); `Event.of(tree)` wraps that parse
and reads each fact of it once, on first use: the event type and time, the run (its id, its
parent's and root's), the job, and each input and output (`EventDataset`: its ref, facets,
version, catalog tables). Nothing is copied and nothing is checked here (the receiver refused
what is malformed): a fact an event lacks, or holds in the wrong shape, reads as None or empty.
Only the modules that write the JSON back (enrich, the follow-up event) touch `tree` itself.
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Mapping
from typing import Any

import attrs

from lineage_quality.values.cached import cached_property
from lineage_quality.values.json_number import JsonNumber
from lineage_quality.values.refs import DatasetRef, table_names

_EMPTY: Mapping[str, Any] = {}


def _object(value: Any) -> Mapping[str, Any]:
    if type(value) is dict:  # what the parse gives: no ABC `isinstance` (a Python-level call)
        return value
    return value if isinstance(value, Mapping) else _EMPTY


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def chain_run_ids(run_id: str | None, parent: str | None, root: str | None) -> tuple[str, ...]:
    """The run ids an event concerns: its run's, its parent's, its root's, in that order, each
    once; a missing or empty one left out. The one rule for the full way (`Event.run_ids`) and
    Kafka in's skeleton (producer/kafka/skeleton.py), whose facts must agree."""
    return tuple(dict.fromkeys(filter(None, (run_id, parent, root))))  # None and "" out


def text_of(value: Any) -> str | None:
    """A JSON scalar as text (a JsonNumber as written); None for null."""
    if value is None:
        return None
    return value.text if isinstance(value, JsonNumber) else str(value)


def int_of(value: Any) -> int | None:
    """A JSON integer (as written or parsed), else None."""
    if isinstance(value, JsonNumber):
        try:
            return int(value.text)
        except ValueError:
            return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@attrs.frozen(slots=False, eq=False)
class EventDataset:
    """One input or output of an event: `ref` (role, position, namespace, name) and its JSON
    object `raw`."""

    ref: DatasetRef
    raw: Mapping[str, Any]

    @property
    def key(self) -> str:
        return self.ref.key

    @cached_property
    def facets(self) -> Mapping[str, Any]:
        """Its dataset facets (`facets`)."""
        return _object(self.raw.get("facets"))

    @cached_property
    def role_facets(self) -> Mapping[str, Any]:
        """Its `inputFacets` or `outputFacets`."""
        return _object(self.raw.get("inputFacets" if self.ref.role == "inputs" else "outputFacets"))

    def facet(self, name: str) -> Mapping[str, Any]:
        """Dataset facet `name` (empty when absent or not an object)."""
        return _object(self.facets.get(name))

    def role_facet(self, name: str) -> Mapping[str, Any]:
        """Input or output facet `name` (empty when absent or not an object)."""
        return _object(self.role_facets.get(name))

    @cached_property
    def version(self) -> str | None:
        """Its table version (the `version` facet's `datasetVersion`), where the format has one."""
        return text_of(self.facet("version").get("datasetVersion"))

    @cached_property
    def tables(self) -> tuple[str, ...]:
        """Its catalog table identities (the `symlinks` facet, type TABLE)."""
        return tuple(table_names(self.facets))


@attrs.frozen(slots=False, eq=False)
class Event:
    """A run event (see the module): `tree` is the parsed JSON, never changed here."""

    tree: Mapping[str, Any]

    @classmethod
    def of(cls, value: Event | Mapping[str, Any] | Any) -> Event:
        """`value` itself, or the event of a parsed tree (anything else reads as empty)."""
        if isinstance(value, Event):
            return value
        return cls(value if isinstance(value, Mapping) else _EMPTY)

    @cached_property
    def event_type(self) -> str:
        """`eventType` ("" when it has none)."""
        return _str(self.tree.get("eventType")) or ""

    @property
    def complete(self) -> bool:
        return self.event_type == "COMPLETE"

    @cached_property
    def event_time(self) -> str | None:
        """`eventTime` as written."""
        return _str(self.tree.get("eventTime"))

    @cached_property
    def completed_ms(self) -> int | None:
        """The event's time in epoch milliseconds; None when absent, not ISO 8601 or without a
        zone."""
        try:
            parsed = datetime.datetime.fromisoformat(str(self.tree.get("eventTime")))
        except ValueError:
            return None
        if parsed.tzinfo is None:
            return None
        return int(parsed.timestamp() * 1000)

    @property
    def time_ms(self) -> int:
        """The event's time in epoch milliseconds, now when it has no usable one."""
        found = self.completed_ms
        return int(time.time() * 1000) if found is None else found

    @cached_property
    def run(self) -> Mapping[str, Any]:
        return _object(self.tree.get("run"))

    @cached_property
    def run_id(self) -> str | None:
        return _str(self.run.get("runId"))

    @cached_property
    def run_facets(self) -> Mapping[str, Any]:
        return _object(self.run.get("facets"))

    @cached_property
    def parent(self) -> Mapping[str, Any]:
        """The run's `parent` facet."""
        return _object(self.run_facets.get("parent"))

    @cached_property
    def parent_run_id(self) -> str | None:
        return _str(_object(self.parent.get("run")).get("runId"))

    @cached_property
    def root_run_id(self) -> str | None:
        return _str(_object(_object(self.parent.get("root")).get("run")).get("runId"))

    @cached_property
    def run_ids(self) -> tuple[str, ...]:
        """Its run id, its parent's and its root's (`chain_run_ids`)."""
        return chain_run_ids(self.run_id, self.parent_run_id, self.root_run_id)

    @cached_property
    def job(self) -> Mapping[str, Any]:
        return _object(self.tree.get("job"))

    @property
    def job_namespace(self) -> str | None:
        return _str(self.job.get("namespace"))

    @property
    def job_name(self) -> str | None:
        return _str(self.job.get("name"))

    @property
    def job_label(self) -> str:
        """`namespace/name` of the job, as verdicts and alerts name it."""
        return f"{self.job.get('namespace')}/{self.job.get('name')}"

    @cached_property
    def job_facets(self) -> Mapping[str, Any]:
        return _object(self.job.get("facets"))

    @cached_property
    def datasets(self) -> tuple[EventDataset, ...]:
        """Its inputs, then its outputs, those with a namespace and a name (their position in
        the event kept in their ref)."""
        found: list[EventDataset] = []
        for role in ("inputs", "outputs"):
            listed = self.tree.get(role)
            for i, ds in enumerate(listed if isinstance(listed, list) else ()):
                if isinstance(ds, Mapping):
                    namespace, name = ds.get("namespace"), ds.get("name")
                    if isinstance(namespace, str) and isinstance(name, str):
                        found.append(EventDataset(DatasetRef(role, i, namespace, name), ds))
        return tuple(found)

    @property
    def inputs(self) -> tuple[EventDataset, ...]:
        return tuple(d for d in self.datasets if d.ref.role == "inputs")

    @property
    def outputs(self) -> tuple[EventDataset, ...]:
        return tuple(d for d in self.datasets if d.ref.role == "outputs")

    @property
    def refs(self) -> list[DatasetRef]:
        return [d.ref for d in self.datasets]

    @property
    def names_datasets(self) -> bool:
        """It lists an input or an output (named or not)."""
        return bool(self.tree.get("inputs") or self.tree.get("outputs"))

    def dataset(self, ref: DatasetRef) -> EventDataset:
        """The dataset `ref` names (an EventDataset of its JSON object, even one without a name
        this event's refs would skip)."""
        for found in self.datasets:
            if found.ref == ref:
                return found
        listed = self.tree.get(ref.role)
        raw = listed[ref.index] if isinstance(listed, list) and ref.index < len(listed) else None
        return EventDataset(ref, _object(raw))


def datasets_of(event: Event | Mapping[str, Any]) -> list[DatasetRef]:
    """The refs of an event's named inputs, then outputs."""
    return Event.of(event).refs
