"""Alerts along lineage (issue 39), without Spark: serve's own spool, workers and alert outbox, a
real LineageKeeper over a SQLite store, the evaluator a stand-in binding raw (as in
test_lineage_serve.py). A failure alert says how many downstream datasets had read the failing
write when it was made; a BLOCK failure on raw reaching agg, critical in its contract, alerts
once (not again when agg is written again from the same failing write); a non-BLOCK failure
does only under `--upstream block` (its marks are BLOCK); Slack gets every name escaped. ODCS
`tags: [critical]` is what marks a dataset."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pytest
from test_alerts import slack_texts
from test_lineage_serve import AGG, CLEAN, NOT_NULL, Evaluator, Sink, _complete

from lineage_quality import rawjson
from lineage_quality.contracts import load_contracts
from lineage_quality.contracts.binding import BoundRules, pattern_from_location
from lineage_quality.engine import verdict
from lineage_quality.lineage import Upstream, open_lineage
from lineage_quality.lineage.critical import critical_of
from lineage_quality.lineage.keeper import LineageKeeper
from lineage_quality.producer import Producer, Spool
from lineage_quality.producer.alert_outbox import AlertOutbox
from lineage_quality.producer.alert_sender import AlertSender, Webhook
from lineage_quality.producer.alerts import GENERIC, SLACK, message_for
from lineage_quality.producer.lineage_alerts import event_alerts
from lineage_quality.producer.settings import Settings
from lineage_quality.values.refs import DatasetRef

RAW = DatasetRef("outputs", 0, "file", "/lake/raw")


class BlockingEvaluator(Evaluator):
    """raw's null rule with the action BLOCK (or LOG, `action`)."""

    def __init__(self, action: str = "BLOCK") -> None:
        super().__init__()
        self.rule = attrs.evolve(NOT_NULL, action=action)

    def evaluate_each(self, event: Any, job_group: str, bound: Any) -> Any:
        yield RAW, [verdict(self.rule, self.nulls, 10)]


def _critical_agg() -> Any:
    return critical_of(
        [BoundRules("c", "agg", (pattern_from_location("/lake/agg"),), (), critical=True)]
    )


def _producer(
    tmp_path: Path, evaluator: Evaluator, policy: Upstream = Upstream.WARN
) -> tuple[Producer, Sink, AlertOutbox]:
    keeper = LineageKeeper(open_lineage(tmp_path / "history.db"), policy, _critical_agg())
    outbox = AlertOutbox(tmp_path / "spool.alerts.db")
    posted: list[str] = []
    sender = AlertSender(
        outbox,
        [Webhook("http://hook.invalid/a"), Webhook("http://hook.invalid/s", SLACK)],
        post=lambda url, body: posted.append(body),
    )
    sink = Sink()
    producer = Producer(
        evaluator,  # type: ignore[arg-type]
        sink,  # type: ignore[arg-type]
        Spool(tmp_path / "spool.db"),
        Settings.of(port=0),
        alerts=sender,
        lineage=keeper,
    )
    return producer, sink, outbox


def _send(producer: Producer, body: str) -> None:
    producer._accept(body, rawjson.loads(body))
    assert producer.spool.wait_empty(timeout=20)


def _generic(outbox: AlertOutbox) -> list[dict[str, Any]]:
    return [json.loads(r["body"]) for r in outbox.rows() if r["sink"].startswith("generic ")]


def test_a_block_failure_reaching_a_critical_dataset_alerts_once(tmp_path: Path) -> None:
    evaluator = BlockingEvaluator()
    producer, _, outbox = _producer(tmp_path, evaluator)
    producer.start()
    try:
        evaluator.nulls = 3
        _send(producer, _complete("01", 0, [], "/lake/raw"))
        (raw_alert,) = _generic(outbox)
        assert raw_alert["type"] == "lineage-quality.alert"
        assert raw_alert["downstream"]["read"] == 0  # nobody had read it when it failed
        _send(producer, _complete("02", 1, ["/lake/raw"], "/lake/clean", CLEAN))
        assert len(_generic(outbox)) == 1  # clean is not critical
        _send(producer, _complete("03", 2, ["/lake/clean"], "/lake/agg", AGG))
        critical = [a for a in _generic(outbox) if a["type"] == "lineage-quality.critical"]
        assert len(critical) == 1
        (alert,) = critical
        assert alert["dataset"] == {"namespace": "file", "name": "/lake/agg", "role": "outputs"}
        assert alert["upstream"] == {
            "dataset": "file:/lake/raw",
            "rule": "customer_id_not_null",
            "run": "0190e6f0-0000-7000-8000-000000000001",
            "column": "customer_id",
        }
        assert alert["columns"] == ["customer_id"] and alert["wholeDataset"] is False
        assert alert["runId"] == "0190e6f0-0000-7000-8000-000000000003"
        # agg written again from the same failing write: the same mark, no second alert
        _send(producer, _complete("04", 3, ["/lake/clean"], "/lake/agg", AGG))
        assert len([a for a in _generic(outbox) if a["type"] == "lineage-quality.critical"]) == 1
        slack = [json.loads(r["body"]) for r in outbox.rows() if r["sink"].startswith("slack ")]
        assert slack[-1]["text"].startswith(
            "a BLOCK failure upstream reached critical dataset file:/lake/agg"
        )
        assert "read by 0 downstream dataset(s) so far" in "\n".join(slack_texts(slack[0]))
    finally:
        producer.stop()


@pytest.mark.parametrize(
    "policy, critical", [(Upstream.WARN, 0), (Upstream.BLOCK, 1)], ids=["warn", "block"]
)
def test_a_failure_that_does_not_block_alerts_a_critical_dataset_only_under_upstream_block(
    tmp_path: Path, policy: Upstream, critical: int
) -> None:
    evaluator = BlockingEvaluator("ALERT")
    producer, _, outbox = _producer(tmp_path, evaluator, policy)
    producer.start()
    try:
        evaluator.nulls = 3
        _send(producer, _complete("01", 0, [], "/lake/raw"))
        _send(producer, _complete("02", 1, ["/lake/raw"], "/lake/clean", CLEAN))
        _send(producer, _complete("03", 2, ["/lake/clean"], "/lake/agg", AGG))
        types = [a["type"] for a in _generic(outbox)]
        assert types == ["lineage-quality.alert"] + ["lineage-quality.critical"] * critical
    finally:
        producer.stop()


def test_the_count_is_the_downstream_datasets_that_had_read_the_write(tmp_path: Path) -> None:
    """A failure alert made after clean, agg and countries read raw's failing write counts the
    three of them (a duplicate COMPLETE of raw's run, as the listener sends)."""
    store = open_lineage(tmp_path / "history.db")
    keeper = LineageKeeper(store, Upstream.WARN)
    raw = rawjson.loads(_complete("01", 0, [], "/lake/raw"))
    results = {RAW: [verdict(attrs.evolve(NOT_NULL, action="ALERT"), 3, 10)]}
    keeper.keep(raw, results)
    for body in (
        _complete("02", 1, ["/lake/raw"], "/lake/clean", CLEAN),
        _complete("03", 2, ["/lake/clean"], "/lake/agg", AGG),
        _complete("04", 3, ["/lake/raw"], "/lake/countries", {}),
    ):
        keeper.keep(rawjson.loads(body), {})
    (alert,) = event_alerts(raw, results, {}, keeper)
    assert alert.payload["downstream"]["read"] == 3
    assert set(alert.payload["downstream"]) == {"read", "at"}
    keeper.close()


def test_a_critical_alert_for_slack_is_inert() -> None:
    payload = {
        "type": "lineage-quality.critical",
        "runId": "<!channel>",
        "job": {"namespace": "ns", "name": "<!here>"},
        "dataset": {"namespace": "file", "name": "<https://evil.example|x>", "role": "outputs"},
        "upstream": {"dataset": "<!subteam^S1>", "rule": "*bold*\n• forged", "run": "r"},
        "wholeDataset": False,
        "columns": ["<@U123>"],
    }
    joined = "\n".join(slack_texts(message_for(SLACK, payload)))
    for live in ("<!channel>", "<!here>", "<https://evil", "<!subteam", "<@U123>", "\n• forged"):
        assert live not in joined
    assert "&lt;https://evil.example|x&gt;" in joined
    assert message_for(GENERIC, payload) == payload


def test_odcs_tags_critical_marks_the_dataset(tmp_path: Path) -> None:
    contract = tmp_path / "agg.yaml"
    contract.write_text(
        "apiVersion: v3.0.2\nkind: DataContract\nid: agg\nversion: 1.0.0\nstatus: active\n"
        "tags: [Critical]\n"
        "servers: [{server: lake, type: local, path: /lake/agg, format: parquet}]\n"
        "schema:\n  - name: agg\n    properties: [{name: customer_id}]\n"
    )
    plain = tmp_path / "raw.yaml"
    plain.write_text(
        contract.read_text().replace("tags: [Critical]\n", "").replace("/lake/agg", "/lake/raw")
    )
    (agg,) = load_contracts([contract])
    (raw,) = load_contracts([plain])
    assert agg.critical and not raw.critical
    event = rawjson.loads(_complete("01", 0, [], "/lake/agg"))
    critical = critical_of([agg, raw])
    assert critical(event, DatasetRef("outputs", 0, "file", "/lake/agg"))
    assert not critical_of([raw])(event, DatasetRef("outputs", 0, "file", "/lake/agg"))


def test_serve_gives_the_keeper_the_contracts_critical_datasets(tmp_path: Path) -> None:
    from lineage_quality.cli.main import build_parser
    from lineage_quality.cli.serve import _lineage

    contract = tmp_path / "agg.yaml"
    contract.write_text(
        "apiVersion: v3.0.2\nkind: DataContract\nid: agg\nversion: 1.0.0\nstatus: active\n"
        "servers: [{server: lake, type: local, path: /lake/agg, format: parquet}]\n"
        "schema:\n  - name: agg\n    tags: [critical]\n    properties: [{name: customer_id}]\n"
    )
    args = build_parser().parse_args(
        ["serve", "--contracts", str(contract), "--history", str(tmp_path / "history.db")]
    )
    keeper = _lineage(args, Settings(), load_contracts([contract]))
    assert keeper is not None
    event = rawjson.loads(_complete("01", 0, [], "/lake/agg"))
    assert keeper.critical(event, DatasetRef("outputs", 0, "file", "/lake/agg"))
    assert not keeper.critical(event, DatasetRef("outputs", 0, "file", "/lake/clean"))
    keeper.close()


def test_an_input_failure_counts_the_outputs_of_the_run_that_read_it(tmp_path: Path) -> None:
    """A failure in a run's own verdicts on its input (raw written by a job outside OpenLineage:
    no write of it is kept): the run's outputs read it."""
    keeper = LineageKeeper(open_lineage(tmp_path / "history.db"), Upstream.WARN)
    clean = rawjson.loads(_complete("02", 1, ["/lake/raw"], "/lake/clean", CLEAN))
    results = {
        DatasetRef("inputs", 0, "file", "/lake/raw"): [
            verdict(attrs.evolve(NOT_NULL, action="ALERT"), 3, 10)
        ]
    }
    keeper.keep(clean, results)
    (alert,) = event_alerts(clean, results, {}, keeper)
    assert alert.payload["dataset"]["role"] == "inputs"
    assert alert.payload["downstream"]["read"] == 1  # clean
    keeper.close()
