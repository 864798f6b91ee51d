"""What the producer needs to know about a raw OpenLineage event (a JSON object as a dict): is it
well-formed, which lane (ordering key) it travels in, and the follow-up event that carries results
which came too late for the event itself. Pure: no Spark, no I/O.

Validation checks what a sink needs to accept the event (the OpenLineage spec's required fields and
shapes, which Marquez also enforces); facets are opaque, so unknown facets pass untouched. Run ids
(the run's, and its parent's and root's in the `parent` facet) are keys of the run bookkeeping:
one longer than `bounds.MAX_RUN_ID_CHARS` (a UUID needs 36) is refused.
"""

from __future__ import annotations

import copy
import datetime as dt
import re
from collections.abc import Mapping, Sequence
from typing import Any, TypeGuard

from lineage_quality.bounds import MAX_FUTURE_SKEW_SECONDS, MAX_RUN_ID_CHARS
from lineage_quality.rawjson import storable
from lineage_quality.values.refs import DatasetRef
from lineage_quality.version import PRODUCER

EVENT_TYPES = frozenset({"START", "RUNNING", "COMPLETE", "ABORT", "FAIL", "OTHER"})
RUN_EVENT_SCHEMA = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"


class InvalidEventError(ValueError):
    """The body is JSON but not a well-formed OpenLineage event; the message says why."""


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # a valid pair is one character once parsed


def _is_object(value: object) -> TypeGuard[Mapping[str, Any]]:
    """A JSON object: a dict as `json` parses it (the fast, common check first: an ABC
    `isinstance` costs a Python-level call, and an event takes dozens of checks), or any other
    Mapping."""
    return isinstance(value, (dict, Mapping))  # dict first: exact type, no ABC machinery


def _require_str(obj: Mapping[str, Any], key: str, where: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str) or not value:
        raise InvalidEventError(f"`{where}{key}` must be a non-empty string")
    return value


def _check_facets(obj: Mapping[str, Any], key: str, where: str) -> None:
    facets = obj.get(key)
    if facets is None:
        return
    if not _is_object(facets):
        raise InvalidEventError(f"`{where}{key}` must be an object")
    for name, facet in facets.items():
        if facet is not None and not _is_object(facet):
            raise InvalidEventError(f"facet `{where}{key}.{name}` must be an object")


def _check_named(obj: Any, where: str, facet_keys: Sequence[str]) -> None:
    if not _is_object(obj):
        raise InvalidEventError(f"`{where}` must be an object")
    _require_str(obj, "namespace", where + ".")
    _require_str(obj, "name", where + ".")
    for key in facet_keys:
        _check_facets(obj, key, where + ".")


def _check_run_ids(run: Mapping[str, Any]) -> None:
    """Refuse a run id longer than a UUID needs: the run's, its parent's, its root's. Refused
    rather than cut: two runs cut to the same prefix would share their verdicts."""
    found = [("run.runId", run.get("runId"))]
    parent = (run.get("facets") or {}).get("parent")
    where = "run.facets.parent"
    for part in (parent, parent.get("root") if _is_object(parent) else None):
        link = part.get("run") if _is_object(part) else None
        if _is_object(link):
            found.append((f"{where}.run.runId", link.get("runId")))
        where += ".root"
    for field, value in found:
        if isinstance(value, str) and len(value) > MAX_RUN_ID_CHARS:
            raise InvalidEventError(
                f"`{field}` is longer than {MAX_RUN_ID_CHARS} characters ({len(value)}): "
                "OpenLineage run ids are UUIDs"
            )


def _check_time(event: Mapping[str, Any]) -> None:
    problem = time_problem(_require_str(event, "eventTime", ""))
    if problem is not None:
        raise InvalidEventError(problem)


def time_problem(text: str) -> str | None:
    """What is wrong with `text` as an `eventTime` (ISO 8601 with a UTC offset, not far ahead of
    this producer's clock); None: nothing."""
    try:
        parsed = dt.datetime.fromisoformat(text)
    except ValueError:
        return f"`eventTime` is not an ISO 8601 date-time: {text[:64]!r}"
    if parsed.tzinfo is None:
        return "`eventTime` needs a UTC offset (e.g. `Z` or `+00:00`)"
    try:
        ahead = (parsed - dt.datetime.now(dt.UTC)).total_seconds()
    except OverflowError:  # 9999-12-31T23:59-01:00 is past datetime's range in UTC
        ahead = float("inf")
    if ahead > MAX_FUTURE_SKEW_SECONDS:
        return (
            f"`eventTime` {text[:64]!r} is more than {MAX_FUTURE_SKEW_SECONDS // 3600} hours "
            "ahead of this producer's clock: fix the sender's clock or time zone"
        )
    return None


def check_event(event: Any) -> str:
    """The event's kind (`RunEvent`, `JobEvent`, `DatasetEvent`); raises InvalidEventError naming
    the first problem. A spec-valid event passes whatever (custom) facets it carries."""
    if not _is_object(event):
        raise InvalidEventError("an OpenLineage event is a JSON object")
    if "run" not in event and "job" not in event and "dataset" not in event:
        raise InvalidEventError("not an OpenLineage event: no `run`, `job` or `dataset`")
    _check_time(event)
    _require_str(event, "producer", "")
    if "schemaURL" in event and not isinstance(event["schemaURL"], str):
        raise InvalidEventError("`schemaURL` must be a string")
    if "run" in event:
        kind = "RunEvent"
        run = event["run"]
        if not _is_object(run):
            raise InvalidEventError("`run` must be an object")
        _require_str(run, "runId", "run.")
        _check_facets(run, "facets", "run.")
        _check_run_ids(run)
        if "job" not in event:
            raise InvalidEventError("a run event needs a `job`")
        event_type = event.get("eventType")
        if event_type is not None and (
            not isinstance(event_type, str) or event_type not in EVENT_TYPES  # [] is unhashable
        ):
            raise InvalidEventError(
                f"unknown eventType {str(event_type)[:32]!r}; one of {sorted(EVENT_TYPES)}"
            )
    elif "dataset" in event:
        kind = "DatasetEvent"
        _check_named(event["dataset"], "dataset", ("facets",))
    else:
        kind = "JobEvent"
    if "job" in event:
        _check_named(event["job"], "job", ("facets",))
    for role, keys in (
        ("inputs", ("facets", "inputFacets")),
        ("outputs", ("facets", "outputFacets")),
    ):
        datasets = event.get(role)
        if datasets is None:
            continue
        if not isinstance(datasets, list):
            raise InvalidEventError(f"`{role}` must be a list")
        for i, ds in enumerate(datasets):
            _check_named(ds, f"{role}[{i}]", keys)
    return kind


def dataset_shape_problem(event: object) -> str | None:
    """What keeps `event` (from a file of events) from being read for its datasets: not an
    object, a lone surrogate in a string, inputs/outputs not lists of named objects with object
    facets; None when it can be read."""
    if not isinstance(event, dict):
        return "not a JSON object (an event)"
    text = _lone_surrogate(event)
    if text is not None:
        return f"a string holds a lone surrogate (\\u{ord(text):04x}): not text"
    for role in ("inputs", "outputs"):
        datasets = event.get(role)
        if datasets is None:
            continue
        if not isinstance(datasets, list):
            return f"`{role}` is not a list"
        for i, dataset in enumerate(datasets):
            if not isinstance(dataset, dict):
                return f"`{role}[{i}]` is not an object"
            for field in ("namespace", "name"):
                if not isinstance(dataset.get(field), str):
                    return f"`{role}[{i}].{field}` is not a string"
            facets = dataset.get("facets")
            if facets is not None and not isinstance(facets, dict):
                return f"`{role}[{i}].facets` is not an object"
            if facets and any(not isinstance(f, dict) for f in facets.values()):
                return f"a facet of `{role}[{i}]` is not an object"
    return None


def _lone_surrogate(value: object) -> str | None:
    """The first lone surrogate in any string (key or value) of `value`, walked without
    recursion (the parse bounded the depth)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found = _LONE_SURROGATE.search(item)
            if found:
                return found.group()
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None


def run_lane(run_id: str) -> str:
    """The lane of a run's events (`lane_of`), from its run id."""
    return "run:" + storable(run_id)


def lane_of(event: Mapping[str, Any]) -> str:
    """The ordering key: events of one lane are forwarded in arrival order, lanes independently.

    A run's events share `run.runId`; job and dataset events are ordered per job / dataset. A
    lone surrogate in a name is kept as its escape (the lane is a key in the spool's database).
    """
    run = event.get("run")
    if _is_object(run) and isinstance(run.get("runId"), str):
        return run_lane(str(run["runId"]))
    for key in ("job", "dataset"):
        obj = event.get(key)
        if _is_object(obj):
            return storable(f"{key}:{obj.get('namespace')}:{obj.get('name')}")
    return ""


def late_skeleton(
    event: Mapping[str, Any], refs: Sequence[DatasetRef], event_type: str
) -> tuple[dict[str, Any], dict[DatasetRef, DatasetRef]]:
    """The follow-up event for results that came too late: the same run and job, only the
    datasets in `refs`, `eventType` set to `event_type`. Returns it with a map from each ref of
    `event` to the same dataset's ref in the follow-up."""
    out: dict[str, Any] = {
        k: copy.deepcopy(v) for k, v in event.items() if k not in ("inputs", "outputs")
    }
    out["eventType"] = event_type
    out["producer"] = PRODUCER
    out["schemaURL"] = RUN_EVENT_SCHEMA
    mapping: dict[DatasetRef, DatasetRef] = {}
    for role in ("inputs", "outputs"):
        kept: list[Any] = []
        for ref in sorted((r for r in refs if r.role == role), key=lambda r: r.index):
            mapping[ref] = DatasetRef(role, len(kept), ref.namespace, ref.name)
            kept.append(copy.deepcopy(event[role][ref.index]))
        out[role] = kept
    return out, mapping


def now_iso() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")
