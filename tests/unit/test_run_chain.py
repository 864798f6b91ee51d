"""The two rules of a run's parent/root chain, each written once: which run ids an event concerns
(values/event.py `chain_run_ids`, kept as `run_verdicts.storable_ids`) and which job keys it on
Kafka (kafka/keys.py `run_key`); and that the full way reads them through those rules
(tests/unit/test_skeleton.py holds the skeleton to the same answers)."""

from __future__ import annotations

from typing import Any

import pytest

from lineage_quality.producer.kafka.keys import message_key, run_key
from lineage_quality.producer.run_verdicts import run_ids, storable_ids
from lineage_quality.values.event import Event, chain_run_ids


@pytest.mark.parametrize(
    ("own", "parent", "root", "expected"),
    [
        ("r", "p", "t", ("r", "p", "t")),  # own, then parent, then root
        ("r", "t", "p", ("r", "t", "p")),  # the order is the chain's, not the ids'
        ("r", "r", "t", ("r", "t")),  # parent is the run itself
        ("r", "p", "p", ("r", "p")),  # root is the parent
        ("r", "p", "r", ("r", "p")),  # root is the run itself
        ("r", "r", "r", ("r",)),
        ("r", None, "t", ("r", "t")),  # no parent: the root still follows the run
        ("r", "p", None, ("r", "p")),  # no root
        ("r", None, None, ("r",)),
        ("r", "", "t", ("r", "t")),  # an empty id is no id
        ("r", "p", "", ("r", "p")),
        (None, "p", "t", ("p", "t")),  # no run id of its own
        ("", "p", "p", ("p",)),
        (None, None, None, ()),
    ],
)
def test_the_run_ids_are_the_runs_its_parents_and_its_roots_each_once(
    own: str | None, parent: str | None, root: str | None, expected: tuple[str, ...]
) -> None:
    assert chain_run_ids(own, parent, root) == expected


def test_the_stored_run_ids_escape_a_lone_surrogate_and_stay_each_once() -> None:
    assert storable_ids(("r", "p\ud800", "t")) == ("r", "p\\ud800", "t")
    # an escape that equals an id as written is one key, where the first of them stood
    assert storable_ids(("r\\ud800", "p", "r\ud800")) == ("r\\ud800", "p")
    assert storable_ids(()) == ()


def _tree(run: dict[str, Any], parent: Any = None) -> dict[str, Any]:
    facets = {} if parent is None else {"parent": parent}
    return {"run": {**run, "facets": facets}, "job": {"namespace": "spark", "name": "app.step"}}


def test_an_event_and_its_verdicts_read_the_run_ids_by_the_rule() -> None:
    parent = {"run": {"runId": "r"}, "root": {"run": {"runId": "t"}}}
    assert Event.of(_tree({"runId": "r"}, parent)).run_ids == ("r", "t")
    parent = {"run": {"runId": "p"}, "root": {"run": {"runId": "t"}}}
    assert Event.of(_tree({"runId": "r"}, parent)).run_ids == ("r", "p", "t")
    assert run_ids(_tree({"runId": "r\ud800"}, parent)) == ["r\\ud800", "p", "t"]
    # a run id of another type than a string is no id
    parent = {"run": {"runId": 7}, "root": {"run": {"runId": "t"}}}
    assert Event.of(_tree({"runId": None}, parent)).run_ids == ("t",)
    assert Event.of(_tree({"runId": "r"}, "not a facet")).run_ids == ("r",)


_ROOT, _PARENT, _OWN = ("airflow", "dag"), ("airflow", "dag.task"), ("spark", "app.step")


@pytest.mark.parametrize(
    ("root", "parent", "own", "expected"),
    [
        (_ROOT, _PARENT, _OWN, "run:airflow/dag"),  # the root's job before the parent's
        ((None, None), _PARENT, _OWN, "run:airflow/dag.task"),
        (("airflow", None), _PARENT, _OWN, "run:airflow/dag.task"),  # half a name is none
        ((None, "dag"), _PARENT, _OWN, "run:airflow/dag.task"),
        (("airflow", 5), _PARENT, _OWN, "run:airflow/dag.task"),  # nor a name of another type
        (("", ""), _PARENT, _OWN, "run:/"),  # empty strings are names
        ((None, None), (None, None), _OWN, "run:spark/app.step"),
        ((None, None), ("airflow", None), _OWN, "run:spark/app.step"),
        ((None, None), (["airflow"], "dag.task"), _OWN, "run:spark/app.step"),
        (_ROOT, (None, None), _OWN, "run:airflow/dag"),  # a root without a parent's job
        # the event's own job is written whatever it holds, as the Java transport does
        ((None, None), (None, None), (None, None), "run:null/null"),
        ((None, None), (None, None), (5, True), "run:5/True"),
    ],
)
def test_a_run_is_keyed_by_the_first_named_job_of_its_root_its_parent_and_its_own(
    root: tuple[Any, Any], parent: tuple[Any, Any], own: tuple[Any, Any], expected: str
) -> None:
    assert run_key(*root, *parent, *own) == expected


@pytest.mark.parametrize(
    ("parent", "expected"),
    [
        ({"job": {"namespace": "a", "name": "p"}, "root": {"job": {"namespace": "a", "name": "t"}}},
         "run:a/t"),
        ({"job": {"namespace": "a", "name": "p"}, "root": {"job": {"name": "t"}}}, "run:a/p"),
        ({"job": {"namespace": "a", "name": "p"}, "root": {"job": "t"}}, "run:a/p"),
        ({"job": {"namespace": "a", "name": "p"}, "root": ["t"]}, "run:a/p"),
        ({"job": {"namespace": "a"}, "root": {"run": {"runId": "t"}}}, "run:spark/app.step"),
        ({"job": None}, "run:spark/app.step"),
        ("not a facet", "run:spark/app.step"),
    ],
)  # fmt: skip
def test_the_full_way_keys_a_parsed_event_by_the_rule(parent: Any, expected: str) -> None:
    assert message_key(_tree({"runId": "r"}, parent)) == expected


def test_facets_of_another_shape_leave_the_events_own_job() -> None:
    tree = _tree({"runId": "r"})
    tree["run"]["facets"] = "not facets"
    assert message_key(tree) == "run:spark/app.step"
