"""The Kafka message key of an OpenLineage event: the key OpenLineage's own Kafka transports give
it (Java client `KafkaTransport.getMessageKey`, openlineage-python's `_get_message_key`), so
that our output topic is partitioned as the listener's own topic would be.

A run event is keyed by the job at the top of its chain: `run:<namespace>/<name>` of the
`parent` facet's `root.job` if any, else of the parent's `job`, else of the event's own `job`.
Every event of a run has the same job and parent, hence one key, one partition, and Kafka keeps
them in the order they were written. Runs of one job, and the runs of a parent/child chain, share
it too. A dataset event is keyed `dataset:<namespace>/<name>`, a job event `job:<namespace>/<name>`.
An event with none of these has no key (None), as in OpenLineage.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeGuard

_EMPTY: Mapping[str, Any] = {}


def message_key(event: Mapping[str, Any]) -> str | None:
    """The key OpenLineage's Kafka transport gives `event` (a parsed event)."""
    run, job = event.get("run"), event.get("job")
    if _is_map(run):
        if not _is_map(job):
            return None
        parent = _object(_object(run.get("facets")).get("parent"))
        root_job = _object(_object(parent.get("root")).get("job"))
        parent_job = _object(parent.get("job"))
        return run_key(
            root_job.get("namespace"),
            root_job.get("name"),
            parent_job.get("namespace"),
            parent_job.get("name"),
            job.get("namespace"),
            job.get("name"),
        )
    dataset = event.get("dataset")
    if _is_map(dataset):
        return f"dataset:{_text(dataset.get('namespace'))}/{_text(dataset.get('name'))}"
    if _is_map(job):
        return f"job:{_text(job.get('namespace'))}/{_text(job.get('name'))}"
    return None


def key_bytes(key: str | None) -> bytes | None:
    """`key` as the bytes of the message: UTF-8, a lone surrogate (valid in a JSON string, not in
    UTF-8) written as its escape, so every event of the run still gets the same key."""
    return None if key is None else key.encode("utf-8", "backslashreplace")


def run_key(
    root_namespace: object,
    root_name: object,
    parent_namespace: object,
    parent_name: object,
    namespace: object,
    name: object,
) -> str:
    """The key of a run event from the namespace and name of the job at the top of its chain:
    its `parent` facet's `root.job` when both of those are strings, else the parent's `job` when
    both are, else its own job's (None for what is absent). Over the names alone, so that the
    full way (`message_key`) and Kafka in's skeleton (skeleton.py) share one rule."""
    if isinstance(root_namespace, str) and isinstance(root_name, str):
        return f"run:{root_namespace}/{root_name}"
    if isinstance(parent_namespace, str) and isinstance(parent_name, str):
        return f"run:{parent_namespace}/{parent_name}"
    return f"run:{_text(namespace)}/{_text(name)}"


def _is_map(value: Any) -> TypeGuard[Mapping[str, Any]]:
    """A parsed JSON object: a dict first (an ABC `isinstance` costs a Python-level call on the
    relay's every event), else any Mapping."""
    return type(value) is dict or isinstance(value, Mapping)


def _object(value: Any) -> Mapping[str, Any]:
    """`value` if a parsed JSON object (`_is_map`, inlined), else an empty one (a missing link
    of the chain)."""
    return value if type(value) is dict or isinstance(value, Mapping) else _EMPTY


def _text(value: Any) -> str:
    """A name as the Java transport writes it into the key (`String + null` is "null")."""
    return "null" if value is None else str(value)
