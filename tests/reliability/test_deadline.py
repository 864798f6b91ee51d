"""Evaluation deadlines.

* A long evaluation holds up only its own run: other runs' events pass it.
* Past `evaluation_timeout` the COMPLETE event goes on, the rules still running as ERROR (never a
  pass); the real results follow in an OTHER event for the same run, also after a restart.
* On real Spark, work still running after `cancel_after` is cancelled (job group), and the
  follow-up says so.

The first three use an evaluator that needs no Spark: every rule passes, and the datasets named
`slow` wait for a gate the test opens.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest
from faultkit import RecordingSink, Sender, http_transport, key_of, make_event, record_fault

from lineage_quality.contracts import BoundRules, load_contracts
from lineage_quality.producer import Evaluator, Forwarder, Producer, Spool
from lineage_quality.producer.backoff import Backoff
from lineage_quality.producer.settings import Settings
from lineage_quality.results import RuleResult, Status
from lineage_quality.values.refs import DatasetRef

CONTRACT = """\
apiVersion: v3.0.2
kind: DataContract
id: deadline
version: 1.0.0
status: active
schema:
  - name: {name}
    customProperties:
      - property: openlineage.namespace
        value: file
      - property: openlineage.name
        value: "/deadline/{name}"
    properties:
      - name: id
        quality:
          - metric: nullValues
            mustBe: 0
            name: {name}_id_not_null
"""


def bindings(tmp_path: Path, *names: str) -> list[BoundRules]:
    folder = tmp_path / "contracts"
    folder.mkdir(exist_ok=True)
    for name in names:
        (folder / f"{name}.yaml").write_text(CONTRACT.format(name=name))
    return load_contracts([folder])


class GatedEvaluator(Evaluator):
    def __init__(self, bound: Sequence[BoundRules], slow: Sequence[str] = ()) -> None:
        super().__init__(bound)
        self.slow = {f"/deadline/{n}" for n in slow}
        self.gate = threading.Event()
        self.cancelled: list[str] = []

    def evaluate_each(
        self,
        event: Mapping[str, Any],
        job_group: str | None = None,
        bound: Mapping[DatasetRef, Sequence[BoundRules]] | None = None,
    ) -> Iterator[tuple[DatasetRef, list[RuleResult]]]:
        for ref, groups in (bound if bound is not None else self.bound(event)).items():
            if ref.name in self.slow:
                assert self.gate.wait(60)
                if job_group in self.cancelled:
                    raise RuntimeError("cancelled")
            rules = [r for g in groups for r in g.rules]
            yield ref, [RuleResult(r, Status.PASSED, 0.0, 0, 5) for r in rules]

    def cancel(self, job_group: str) -> None:
        self.cancelled.append(job_group)
        self.gate.set()


def complete(run: int, seq: int) -> dict[str, Any]:
    return make_event(
        run,
        seq,
        "COMPLETE",
        inputs=[{"namespace": "file", "name": "/deadline/fast"}],
        outputs=[{"namespace": "file", "name": "/deadline/slow"}],
    )


def verdicts(event: dict[str, Any]) -> dict[str, tuple[bool, str | None]]:
    """rule name -> (success, error message) of the `*_not_null` rules of the event's datasets
    (the contract reader may add rules of its own, e.g. that the column exists)."""
    out: dict[str, tuple[bool, str | None]] = {}
    for role, key in (("inputs", "inputFacets"), ("outputs", "facets")):
        for ds in event.get(role) or []:
            for a in (ds.get(key) or {}).get("dataQualityAssertions", {}).get("assertions", []):
                if a["name"].endswith("_not_null"):
                    out[a["name"]] = (a["success"], (a.get("params") or {}).get("error"))
    return out


def producer_for(
    evaluator: Evaluator, sink: RecordingSink, spool: Path, **options: Any
) -> Producer:
    producer = Producer(
        evaluator,
        Forwarder(http_transport(sink)),
        Spool(spool),
        Settings.of(port=0, retry=Backoff(initial=0.05, maximum=0.2), **options),
    )
    producer.start()
    return producer


def test_a_long_evaluation_holds_up_only_its_own_run(tmp_path: Path, sink: RecordingSink) -> None:
    evaluator = GatedEvaluator(bindings(tmp_path, "fast", "slow"), slow=["slow"])
    producer = producer_for(evaluator, sink, tmp_path / "spool.db")
    sender = Sender(producer.url)
    try:
        events = [make_event(1, 0, "START"), complete(1, 1)]
        events += [make_event(2, 0, "START"), make_event(2, 1), make_event(2, 2, "COMPLETE")]
        assert all(sender.post(e) == 201 for e in events)
        others = {key_of(e) for e in events} - {key_of(events[1])}
        assert sink.wait_for(lambda s: s.received() == others, timeout=30)
        assert key_of(events[1]) not in sink.received()  # still evaluating

        evaluator.gate.set()
        assert sink.wait_for(lambda s: len(s.events) == len(events), timeout=30)
    finally:
        sender.close()
        producer.stop()
    (done,) = [e for e in sink.events if key_of(e) == key_of(events[1])]
    assert verdicts(done) == {"fast_id_not_null": (True, None), "slow_id_not_null": (True, None)}
    assert producer.counters["timeouts"] == 0
    record_fault(
        "long evaluation, other runs pass",
        sent=len(events),
        accepted=len(events),
        forwarded=len(sink.received()),
        overtaken_by=len(others) - 1,
    )


def test_timeout_forwards_errors_then_an_other_event_with_the_results(
    tmp_path: Path, sink: RecordingSink
) -> None:
    evaluator = GatedEvaluator(bindings(tmp_path, "fast", "slow"), slow=["slow"])
    producer = producer_for(evaluator, sink, tmp_path / "spool.db", evaluation_timeout=1.0)
    sender = Sender(producer.url)
    try:
        events = [make_event(1, 0, "START"), complete(1, 1), make_event(1, 2, "OTHER")]
        assert all(sender.post(e) == 201 for e in events)
        assert sink.wait_for(lambda s: len(s.events) == 3, timeout=30)
        assert not evaluator.gate.is_set()  # forwarded while the evaluation still runs

        evaluator.gate.set()
        assert sink.wait_for(lambda s: len(s.events) == 4, timeout=30)
        assert producer.spool.wait_empty(timeout=30)
    finally:
        sender.close()
        producer.stop()
    start, timed_out, other, late = sink.events
    assert [key_of(e) for e in (start, timed_out, other)] == [key_of(e) for e in events]
    assert verdicts(timed_out) == {
        "fast_id_not_null": (True, None),
        "slow_id_not_null": (False, "evaluation timed out after 1s"),
    }
    assert timed_out["run"]["facets"]["test"]["tests"]  # also in the run's TestRunFacet

    assert late["eventType"] == "OTHER"
    assert late["run"]["runId"] == timed_out["run"]["runId"] and late["job"] == timed_out["job"]
    assert late["inputs"] == [] and [d["name"] for d in late["outputs"]] == ["/deadline/slow"]
    assert verdicts(late) == {"slow_id_not_null": (True, None)}
    assert late["eventTime"] > timed_out["eventTime"]
    assert producer.counters["timeouts"] == producer.counters["late"] == 1
    lost = record_fault(
        "evaluation timeout (1 s)",
        sent=len(events),
        accepted=len(events),
        forwarded=len(sink.received()),
        late_results_events=1,
    )
    assert lost == 0


def test_late_results_survive_a_restart(tmp_path: Path, sink: RecordingSink) -> None:
    contracts = bindings(tmp_path, "fast", "slow")
    spool = tmp_path / "spool.db"
    first = producer_for(
        GatedEvaluator(contracts, slow=["slow"]), sink, spool, evaluation_timeout=1.0
    )
    sender = Sender(first.url)
    try:
        assert sender.post(complete(1, 1)) == 201
        assert sink.wait_for(lambda s: len(s.events) == 1, timeout=30)
    finally:
        sender.close()
        first.stop()  # the evaluation is cancelled; its follow-up stays in the spool
    assert first.spool.pending() == 1

    second = producer_for(GatedEvaluator(contracts), sink, spool, evaluation_timeout=1.0)
    try:
        assert sink.wait_for(lambda s: len(s.events) == 2, timeout=30)
        assert second.spool.wait_empty(timeout=30)
    finally:
        second.stop()
    timed_out, late = sink.events
    assert verdicts(timed_out)["slow_id_not_null"] == (False, "evaluation timed out after 1s")
    assert late["eventType"] == "OTHER" and verdicts(late) == {"slow_id_not_null": (True, None)}
    record_fault("evaluation timeout, then restart", sent=1, accepted=1, forwarded=1)


@pytest.mark.spark
def test_spark_work_past_cancel_after_is_cancelled(
    tmp_path: Path, sink: RecordingSink, spark: Any
) -> None:
    class EndlessEvaluator(Evaluator):
        """Every dataset reads as 10**13 rows: the scan would take hours."""

        groups: ClassVar[set[str]] = set()

        def read(self, ref: DatasetRef, facets: Any, fmt: str | None, *rest: Any) -> Any:
            return self.spark.range(10**13).selectExpr("id")

        def cancel(self, job_group: str) -> None:
            self.groups.add(job_group)
            super().cancel(job_group)

    evaluator = EndlessEvaluator(bindings(tmp_path, "slow"), spark=spark)
    producer = producer_for(
        evaluator, sink, tmp_path / "spool.db", evaluation_timeout=1.0, cancel_after=2.5
    )
    sender = Sender(producer.url)
    event = make_event(1, 1, "COMPLETE", outputs=[{"namespace": "file", "name": "/deadline/slow"}])
    try:
        assert sender.post(event) == 201
        assert sink.wait_for(lambda s: len(s.events) == 2, timeout=120)
    finally:
        sender.close()
        producer.stop()
    timed_out, late = sink.events
    assert verdicts(timed_out) == {"slow_id_not_null": (False, "evaluation timed out after 1s")}
    assert late["eventType"] == "OTHER"
    assert verdicts(late) == {"slow_id_not_null": (False, "evaluation cancelled after 2.5s")}
    tracker = spark.sparkContext.statusTracker()
    (group,) = evaluator.groups
    jobs = [tracker.getJobInfo(j) for j in tracker.getJobIdsForGroup(group)]
    assert any(j is not None and j.status == "FAILED" for j in jobs)  # the cancel happened
    assert all(j is None or j.status == "FAILED" for j in jobs)  # and nothing finished
    assert not tracker.getActiveJobsIds()
    record_fault(
        "evaluation cancelled (Spark)",
        sent=1,
        accepted=1,
        forwarded=len(sink.received()),
        cancelled_spark_jobs=len(jobs),
    )
