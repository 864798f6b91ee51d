"""serve along lineage (issue 39), without Spark: the producer's own spool, workers, enrich and
a real LineageKeeper over a SQLite history store; the evaluator binds only raw (a stand-in for
the Spark evaluation, as in test_parse_once.py). A failing column rule on raw marks the derived
columns of clean and agg, which have no contract, in the facets that reach the sink; a healthy
write of raw clears the marks on the next runs."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from lineage_quality import rawjson
from lineage_quality.engine import verdict
from lineage_quality.kinds import RuleKind
from lineage_quality.lineage import Upstream, open_lineage
from lineage_quality.lineage.keeper import LineageKeeper
from lineage_quality.producer import Producer, Spool
from lineage_quality.producer.settings import Settings
from lineage_quality.results import RuleResult
from lineage_quality.rules import Operator, Rule, Threshold
from lineage_quality.values.refs import DatasetRef

HOUR_AGO = time.time() - 3600
RAW = DatasetRef("outputs", 0, "file", "/lake/raw")
NOT_NULL = Rule(
    id="raw.customer_id",
    kind=RuleKind.NULL_VALUES,
    columns=["customer_id"],
    threshold=Threshold(Operator.MUST_BE, 0),
    name="customer_id_not_null",
)


class Evaluator:
    """Binds raw's output; its verdict: `nulls` null customer ids out of 10."""

    def __init__(self) -> None:
        self.nulls = 0

    def bound(self, event: Mapping[str, Any]) -> dict[DatasetRef, list[Any]]:
        outputs = event.get("outputs") or []
        if event.get("eventType") == "COMPLETE" and outputs and outputs[0]["name"] == "/lake/raw":
            return {RAW: [object()]}
        return {}

    def evaluate_each(
        self, event: Mapping[str, Any], job_group: str, bound: Any
    ) -> Iterator[tuple[DatasetRef, list[RuleResult]]]:
        yield RAW, [verdict(NOT_NULL, self.nulls, 10)]


class Sink:
    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    def send(self, body: str) -> None:
        self.sent.append(json.loads(body))

    def close(self) -> None:
        pass


def _field(dataset: str, field: str, kind: str = "DIRECT") -> dict[str, Any]:
    return {
        "namespace": "file",
        "name": dataset,
        "field": field,
        "transformations": [{"type": kind, "subtype": "IDENTITY"}],
    }


def _complete(
    run: str, minute: int, inputs: list[str], output: str, lineage: dict[str, Any] | None = None
) -> str:
    facets = {} if lineage is None else {"columnLineage": {"fields": lineage}}
    return json.dumps(
        {
            "eventType": "COMPLETE",
            "eventTime": time.strftime(  # within the store's retention, whenever this runs
                "%Y-%m-%dT%H:%M:%SZ", time.gmtime(HOUR_AGO + 60 * minute)
            ),
            "producer": "p",
            "run": {"runId": f"0190e6f0-0000-7000-8000-0000000000{run}"},
            "job": {"namespace": "spark", "name": output},
            "inputs": [{"namespace": "file", "name": n} for n in inputs],
            "outputs": [{"namespace": "file", "name": output, "facets": facets}],
        }
    )


CLEAN = {
    "customer_id": {"inputFields": [_field("/lake/raw", "customer_id")]},
    "amount": {"inputFields": [_field("/lake/raw", "amount"), _field("/lake/raw", "customer_id",
                                                                      "INDIRECT")]},
}  # fmt: skip
AGG = {
    "customer_id": {"inputFields": [_field("/lake/clean", "customer_id")]},
    "total": {"inputFields": [_field("/lake/clean", "amount")]},
}


def _upstream(event: Mapping[str, Any]) -> list[tuple[str | None, str, str]]:
    facet = event["outputs"][0].get("facets", {}).get("dataQualityAssertions", {})
    return [
        (a.get("column"), a["params"]["upstreamDataset"], a["params"]["upstreamRule"])
        for a in facet.get("assertions", [])
        if a["assertion"] == "upstreamQuality"
    ]


def test_serve_marks_the_derived_columns_downstream_and_clears_them(tmp_path: Path) -> None:
    evaluator, sink = Evaluator(), Sink()
    keeper = LineageKeeper(open_lineage(tmp_path / "history.db"), Upstream.WARN)
    producer = Producer(
        evaluator,  # type: ignore[arg-type]
        sink,  # type: ignore[arg-type]
        Spool(tmp_path / "spool.db"),
        Settings.of(port=0),
        lineage=keeper,
    )
    producer.start()

    def send(body: str) -> dict[str, Any]:
        producer._accept(body, rawjson.loads(body))
        assert producer.spool.wait_empty(timeout=20)
        return sink.sent[-1]

    try:
        evaluator.nulls = 3
        raw = send(_complete("01", 0, [], "/lake/raw"))
        assert (
            raw["outputs"][0]["facets"]["dataQualityAssertions"]["assertions"][0]["success"]
            is False
        )
        clean = send(_complete("02", 1, ["/lake/raw"], "/lake/clean", CLEAN))
        agg = send(_complete("03", 2, ["/lake/clean"], "/lake/agg", AGG))
        assert _upstream(clean) == [("customer_id", "file:/lake/raw", "customer_id_not_null")]
        assert _upstream(agg) == [("customer_id", "file:/lake/raw", "customer_id_not_null")]
        (assertion,) = agg["outputs"][0]["facets"]["dataQualityAssertions"]["assertions"]
        assert assertion["severity"] == "warn" and assertion["success"] is False
        assert assertion["params"]["via"] == "file:/lake/clean"
        assert assertion["params"]["upstreamRun"] == "0190e6f0-0000-7000-8000-000000000001"
        tests = agg["run"]["facets"]["test"]["tests"]
        assert [(t["type"], t["status"], t["params"]["dataset"]) for t in tests] == [
            ("upstreamQuality", "fail", "file:/lake/agg")
        ]
        evaluator.nulls = 0  # raw is written again, healthy
        send(_complete("04", 10, [], "/lake/raw"))
        clean = send(_complete("05", 11, ["/lake/raw"], "/lake/clean", CLEAN))
        agg = send(_complete("06", 12, ["/lake/clean"], "/lake/agg", AGG))
        assert _upstream(clean) == [] and _upstream(agg) == []
        assert "dataQualityAssertions" not in agg["outputs"][0]["facets"]  # as received
        marks = producer.metrics.registry.get_sample_value(
            "lineage_quality_upstream_marks_total", {"scope": "column"}
        )
        assert marks == 2  # clean's and agg's, the first time
    finally:
        producer.stop()
    assert keeper.failures == 0
    keeper.close()


def test_the_policy_is_a_setting_and_a_serve_option() -> None:
    import pytest

    from lineage_quality.cli.main import build_parser

    assert Settings().lineage.upstream is Upstream.WARN  # default: marks, never blocking
    assert Settings.of(upstream="BLOCK").lineage.upstream is Upstream.BLOCK  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="one of off, warn, block"):
        Settings.of(upstream="stop")  # type: ignore[arg-type]
    args = build_parser().parse_args(["serve", "--contracts", "c", "--upstream", "block"])
    assert args.upstream is Upstream.BLOCK
    assert build_parser().parse_args(["serve", "--contracts", "c"]).upstream is Upstream.WARN


def test_with_the_lineage_kept_a_complete_is_spooled_only_when_an_output_is_marked(
    tmp_path: Path,
) -> None:
    """A COMPLETE nothing is evaluated on has its lineage kept at once by the intake: written
    through when no output of it is marked (as fast as without lineage), spooled for a worker to
    add the marks when one is; a COMPLETE naming no dataset is not looked at
    (producer/intake.py)."""
    from lineage_quality.producer.intake import Intake
    from lineage_quality.producer.metrics import Metrics
    from lineage_quality.producer.write_through import SinkLatency, WriteThrough

    class FastSink:
        def __init__(self) -> None:
            self.sent: list[str] = []

        def send_once(self, text: str, timeout: float) -> int:
            self.sent.append(text)
            return 200

    class Unbound:
        def bound(self, event: Any) -> dict[DatasetRef, list[Any]]:
            return {}

    named = _complete("01", 0, ["/lake/raw"], "/lake/clean")
    bare = _complete("02", 0, [], "/lake/clean")  # another run: its own lane
    bare = json.dumps({**json.loads(bare), "outputs": []})
    for marked, spooled in ((True, [named]), (False, [])):
        sink, latency = FastSink(), SinkLatency(1.0)
        latency.took(0.001)
        spool = Spool(tmp_path / f"spool-{marked}.db")
        seen: list[Any] = []

        def step(tree: Any, marked: bool = marked, seen: list[Any] = seen) -> bool:
            seen.append(tree["run"]["runId"])
            return marked

        intake = Intake(
            spool,
            Unbound(),
            WriteThrough(sink, latency, 0.005, 1.0),  # type: ignore[arg-type]
            Metrics(()),
            lambda name: None,
            lineage=step,
        )
        for body in (named, bare):
            intake.accept(body, rawjson.loads(body))
        kept = []
        while (item := spool.claim(timeout=0.1)) is not None:
            kept.append(item.body)
            spool.done(item.id)
        assert kept == spooled
        assert sink.sent == [b for b in (named, bare) if b not in spooled]
        assert seen == [json.loads(named)["run"]["runId"]]  # only the one naming datasets
