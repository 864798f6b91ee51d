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


def message_key(event: Mapping[str, Any]) -> str | None:
    """The key OpenLineage's Kafka transport gives `event` (a parsed event)."""
    run, job = event.get("run"), event.get("job")
    if _is_map(run):
        if not _is_map(job):
            return None
        top = _chain_top(run) or job
        return f"run:{_text(top.get('namespace'))}/{_text(top.get('name'))}"
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


def _chain_top(run: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The job of the `parent` facet's root, else of the parent; None when there is no parent
    (or neither names a job with a namespace and a name)."""
    facets = run.get("facets")
    parent = facets.get("parent") if _is_map(facets) else None
    if not _is_map(parent):
        return None
    root = parent.get("root")
    for holder in (root, parent):
        job = holder.get("job") if _is_map(holder) else None
        if _is_map(job) and _named(job):
            return job
    return None


def _is_map(value: Any) -> TypeGuard[Mapping[str, Any]]:
    """A parsed JSON object: a dict first (an ABC `isinstance` costs a Python-level call on the
    relay's every event), else any Mapping."""
    return type(value) is dict or isinstance(value, Mapping)


def _named(job: Mapping[str, Any]) -> bool:
    return isinstance(job.get("namespace"), str) and isinstance(job.get("name"), str)


def _text(value: Any) -> str:
    """A name as the Java transport writes it into the key (`String + null` is "null")."""
    return "null" if value is None else str(value)
