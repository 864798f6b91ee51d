"""Kafka in's skeleton (producer/kafka/skeleton.py) against the full way (receiver/body.py `decode`,
envelope.py, keys.py): what the skeleton takes, the full way takes too, with the same facts;
what the full way refuses, the skeleton never takes. Checked on listener-shaped events and on
hundreds of hostile variants of them: each field `check_event` looks at given every JSON type,
emptied or removed, and bodies that are not quite JSON (NaN, a lone surrogate, bytes that are not
UTF-8, duplicate keys, numbers past 64 bits, a BOM, trailing bytes)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from lineage_quality.producer.envelope import Envelope
from lineage_quality.producer.kafka.keys import message_key
from lineage_quality.producer.kafka.skeleton import read_facts
from lineage_quality.producer.receiver.body import RejectedError, decode, decode_quick
from lineage_quality.values.event import Event

LIMIT = 1 << 22
RUN, PARENT, ROOT = (f"0198a1b2-0000-7000-8000-00000000000{i}" for i in (1, 2, 3))
_IN_FIELD = {"namespace": "file", "name": "/data/in", "field": "id"}
_FACET = {"_producer": "https://github.com/OpenLineage/OpenLineage", "_schemaURL": "https://x/f"}


def _listener_event() -> dict[str, Any]:
    """A COMPLETE as the Spark listener writes one: a parent and root run, Spark's facets, a
    read and a write with schema and column lineage."""
    return {
        "eventTime": "2026-11-27T10:00:00.123Z",
        "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.40.1/integration/spark",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "eventType": "COMPLETE",
        "run": {
            "runId": RUN,
            "facets": {
                "parent": {
                    **_FACET,
                    "run": {"runId": PARENT},
                    "job": {"namespace": "spark", "name": "app"},
                    "root": {
                        "run": {"runId": ROOT},
                        "job": {"namespace": "airflow", "name": "dag.task"},
                    },
                },
                "spark_properties": {**_FACET, "properties": {"spark.master": "local[2]"}},
                "processing_engine": {**_FACET, "version": "3.5.9", "name": "spark"},
                "environment-properties": {**_FACET, "environment-properties": {}},
            },
        },
        "job": {
            "namespace": "spark",
            "name": "app.execute_insert_into_hadoop_fs_relation_command.out",
            "facets": {"jobType": {**_FACET, "processingType": "BATCH", "jobType": "JOB"}},
        },
        "inputs": [
            {
                "namespace": "file",
                "name": "/data/in",
                "facets": {
                    "schema": {**_FACET, "fields": [{"name": "id", "type": "long"}]},
                    "dataSource": {**_FACET, "name": "file", "uri": "file"},
                },
                "inputFacets": {},
            }
        ],
        "outputs": [
            {
                "namespace": "file",
                "name": "/data/out",
                "facets": {
                    "columnLineage": {
                        **_FACET,
                        "fields": {"id": {"inputFields": [_IN_FIELD]}},
                    },
                },
                "outputFacets": {"outputStatistics": {**_FACET, "rowCount": 10, "size": 1234}},
            }
        ],
    }


def _shapes() -> list[dict[str, Any]]:
    """The listener's shapes: a COMPLETE with parent and root, a START of the application's run
    (no parent, no datasets), a RUNNING with a parent but no root, and one with no type."""
    complete = _listener_event()
    start = copy.deepcopy(complete)
    start["eventType"] = "START"
    del start["run"]["facets"]["parent"], start["inputs"], start["outputs"]
    running = copy.deepcopy(complete)
    running["eventType"] = "RUNNING"
    del running["run"]["facets"]["parent"]["root"]
    untyped = copy.deepcopy(complete)
    del untyped["eventType"]
    return [complete, start, running, untyped]


def _same_as_full_way(body: bytes) -> bool:
    """Asserts the skeleton's answer agrees with the full way's; True when the skeleton took it."""
    read = read_facts(body)
    try:
        text, tree = decode(body, None, LIMIT)
    except RejectedError:
        assert read is None, f"the skeleton took what the full way refuses: {body[:200]!r}"
        return False
    if read is None:
        return False  # the full way answers (slower): allowed
    skeletal, facts = read
    full = Envelope.of(text, tree)
    assert skeletal == text
    assert (facts.event_type, facts.run_ids, facts.lane) == (
        full.event_type, full.run_ids, full.lane,
    )  # fmt: skip
    assert facts.key == message_key(tree)
    assert facts.lists_datasets == Event.of(tree).names_datasets
    envelope = Envelope.of_facts(*read)
    assert envelope.tree == decode_quick(body, LIMIT)[1] and not envelope.exact  # as before
    assert envelope.event is not None and envelope.event.run_id == full.event.run_id  # type: ignore[union-attr]
    assert envelope.lists_datasets == full.lists_datasets
    return True


def test_the_listeners_events_are_taken_with_the_full_ways_facts() -> None:
    for event in _shapes():
        assert _same_as_full_way(json.dumps(event).encode())
    complete = read_facts(json.dumps(_listener_event()).encode())
    assert complete is not None
    facts = complete[1]
    assert facts.run_ids == (RUN, PARENT, ROOT) and facts.lane == f"run:{RUN}"
    assert facts.key == "run:airflow/dag.task" and facts.event_type == "COMPLETE"


# every field check_event (or a fact) reads, and values of each JSON type for it
_PATHS = [
    ("eventTime",), ("producer",), ("schemaURL",), ("eventType",), ("run",), ("run", "runId"),
    ("run", "facets"), ("run", "facets", "spark_properties"), ("run", "facets", "parent"),
    ("run", "facets", "parent", "run"), ("run", "facets", "parent", "run", "runId"),
    ("run", "facets", "parent", "job"), ("run", "facets", "parent", "job", "namespace"),
    ("run", "facets", "parent", "job", "name"), ("run", "facets", "parent", "root"),
    ("run", "facets", "parent", "root", "run"),
    ("run", "facets", "parent", "root", "run", "runId"),
    ("run", "facets", "parent", "root", "job"),
    ("run", "facets", "parent", "root", "job", "name"),
    ("job",), ("job", "namespace"), ("job", "name"), ("job", "facets"),
    ("job", "facets", "jobType"),
    ("inputs",), ("inputs", 0), ("inputs", 0, "namespace"), ("inputs", 0, "name"),
    ("inputs", 0, "facets"), ("inputs", 0, "facets", "schema"), ("inputs", 0, "inputFacets"),
    ("inputs", 0, "outputFacets"), ("outputs",), ("outputs", 0), ("outputs", 0, "name"),
    ("outputs", 0, "facets"), ("outputs", 0, "outputFacets"),
    ("outputs", 0, "outputFacets", "outputStatistics"), ("dataset",),
]  # fmt: skip
_GONE = object()
_VALUES = [
    _GONE, None, "", "x", 0, -1.5, True, [], [{}], {}, {"run": 1}, {"runId": "r"},
    "2026-11-27T10:00:00", "9999-12-31T23:59:00-01:00", "2999-01-01T00:00:00Z", "COMPLETE",
    "UNKNOWN", "\ud800", "r" * 37, "r" * 36, {"namespace": "", "name": ""},
    {"namespace": "n", "name": "m"},
]  # fmt: skip


def _variant(event: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any] | None:
    out = copy.deepcopy(event)
    holder: Any = out
    for step in path[:-1]:
        try:
            holder = holder[step]
        except (KeyError, IndexError, TypeError):
            return None
    try:
        if value is _GONE:
            del holder[path[-1]]
        else:
            holder[path[-1]] = value
    except (KeyError, IndexError, TypeError):
        return None
    return out


@pytest.mark.parametrize("path", _PATHS, ids=lambda p: ".".join(map(str, p)))
def test_each_field_of_every_type_is_answered_as_the_full_way_answers(
    path: tuple[Any, ...],
) -> None:
    taken = refused = 0
    for base in _shapes():
        for value in _VALUES:
            event = _variant(base, path, value)
            if event is None:
                continue
            body = json.dumps(event).encode("utf-8", "surrogatepass")
            if _same_as_full_way(body):
                taken += 1
            else:
                refused += 1
    assert taken + refused > 0


def _with(old: bytes, new: bytes) -> bytes:
    """The listener's COMPLETE with `old` replaced by `new` in its bytes."""
    return json.dumps(_listener_event()).encode().replace(old, new)


_ROWS, _LOCAL, _TYPE = b'"rowCount": 10', b'"local[2]"', b'"eventType": "COMPLETE"'
_PROPS, _RUN_ID = b'"properties": {', b'"runId": "' + RUN.encode()


def _nested(depth: int) -> bytes:
    return _with(_PROPS, _PROPS + b'"deep": ' + b"[" * depth + b"]" * depth + b", ")


@pytest.mark.parametrize(
    "body",
    [
        b'{"eventTime": NaN}',
        b"[]",
        b'"event"',
        b"\xef\xbb\xbf" + json.dumps(_listener_event()).encode(),  # a BOM
        json.dumps(_listener_event()).encode() + b" x",  # trailing bytes
        _with(_ROWS, b'"rowCount": NaN'),
        _with(_ROWS, b'"rowCount": 1e400'),
        _with(_ROWS, b'"rowCount": 2' + b"0" * 30),
        _with(_ROWS, b'"rowCount": 01'),
        _with(_LOCAL, b'"\\ud800"'),  # a lone surrogate
        _with(_LOCAL, b'"\xff\xfe"'),  # not UTF-8
        _with(_LOCAL, b'"a\nb"'),  # a raw newline in a string
        _with(RUN.encode(), b"\\ud800" + RUN[6:].encode()),
        _with(_TYPE, _TYPE + b', "eventType": "BAD"'),
        _with(_TYPE, b'"eventType": "BAD", ' + _TYPE),
        _with(_RUN_ID, b'"runId": "x", ' + _RUN_ID),
        _with(b'"inputFacets": {}', b'"inputFacets": {}, "inputFacets": 5'),
        # at and past the depth where msgspec and `decode` stop, a few frames apart
        *(_nested(depth) for depth in (899, 900, 950, 983, 989, 992, 1000, 2000)),
        _with(_PROPS, _PROPS + b'"many": [' + b"1," * 200_000 + b"1], "),
    ],
    ids=lambda b: repr(b[:40]),
)
def test_bodies_that_are_not_quite_json_are_answered_as_the_full_way_answers(body: bytes) -> None:
    _same_as_full_way(body)


def test_a_run_facet_with_fields_named_as_parents_goes_the_full_way() -> None:
    """Any facet of the run is read as a parent's shape; one of another shape is not refused:
    the full way reads it (and takes it)."""
    event = _listener_event()
    event["run"]["facets"]["custom"] = {**_FACET, "run": "not an object", "job": [1]}
    body = json.dumps(event).encode()
    assert read_facts(body) is None
    decode(body, None, LIMIT)  # taken there


def _chained(parent: str | None, root: str | None, keep_jobs: bool = True) -> bytes:
    """The listener's COMPLETE with its parent's and root's run ids set (None: no such link)."""
    event = _listener_event()
    facet = event["run"]["facets"]["parent"]
    if root is None:
        del facet["root"]
    else:
        facet["root"]["run"]["runId"] = root
    if parent is None:
        del facet["run"]
    else:
        facet["run"]["runId"] = parent
    if not keep_jobs:
        del facet["job"]
        facet.get("root", {}).pop("job", None)
    return json.dumps(event).encode()


@pytest.mark.parametrize(
    ("parent", "root", "run_ids"),
    [
        (RUN, ROOT, (RUN, ROOT)),  # the parent is the run itself
        (PARENT, PARENT, (RUN, PARENT)),  # the root is the parent
        (PARENT, RUN, (RUN, PARENT)),  # the root is the run itself
        (None, ROOT, (RUN, ROOT)),  # no parent run: the root still follows the run
        (PARENT, None, (RUN, PARENT)),
        (ROOT, PARENT, (RUN, ROOT, PARENT)),  # the chain's order, not the ids'
        ("", ROOT, (RUN, ROOT)),  # an empty id is no id
    ],
)
def test_the_chains_edge_cases_are_read_as_the_full_way_reads_them(
    parent: str | None, root: str | None, run_ids: tuple[str, ...]
) -> None:
    for keep_jobs in (True, False):
        body = _chained(parent, root, keep_jobs)
        assert _same_as_full_way(body)
        read = read_facts(body)
        assert read is not None and read[1].run_ids == run_ids
        own = "spark/" + _listener_event()["job"]["name"]
        top = ("airflow/dag.task" if root is not None else "spark/app") if keep_jobs else own
        assert read[1].key == f"run:{top}"
