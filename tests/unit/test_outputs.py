"""Outputs from one factory (issue 38, step 4): result sinks and alert senders are made from
`Settings.outputs` by `type` (producer/outputs/), the same for `serve` and the in-driver mode;
an unknown type is an error naming it; a new output is one module and one registry line."""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import recording_output

from flaky_webhook import FlakyWebhook
from lineage_quality.cli.main import build_parser
from lineage_quality.cli.serve import _settings
from lineage_quality.engine import verdict
from lineage_quality.errors import ConfigError
from lineage_quality.kinds import RuleKind
from lineage_quality.producer import Producer, Spool
from lineage_quality.producer.alert_outbox import outbox_path
from lineage_quality.producer.outputs import registry
from lineage_quality.producer.outputs.factory import Outputs, build_outputs, secrets_of
from lineage_quality.producer.outputs.output_type import Durability
from lineage_quality.producer.settings import OutputSpec, Settings
from lineage_quality.results import RuleResult
from lineage_quality.rules import Operator, Rule, Threshold
from lineage_quality.values.refs import DatasetRef

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "lineage_quality"
OUTPUTS = PACKAGE / "producer" / "outputs"
SLACK_URL = "https://hooks.slack.com/services/T000/B000/secret-part"
OUT = DatasetRef("outputs", 0, "file", "/out")
RULE = Rule(
    id="n", kind=RuleKind.NULL_VALUES, columns=["a"], threshold=Threshold(Operator.MUST_BE, 0)
)


def _complete(run: str = "0190e6f0-0000-7000-8000-000000000001") -> str:
    return json.dumps(
        {
            "eventType": "COMPLETE",
            "eventTime": "2026-11-22T06:00:00.000Z",
            "producer": "p",
            "run": {"runId": run},
            "job": {"namespace": "n", "name": "j"},
            "outputs": [{"namespace": "file", "name": "/out"}],
        }
    )


class Evaluator:
    """Binds the output of every COMPLETE; its null-count rule fails (2 nulls, an ALERT)."""

    bindings = ()

    def bound(self, event: Mapping[str, Any]) -> dict[DatasetRef, list[Any]]:
        return {OUT: [object()]} if event.get("eventType") == "COMPLETE" else {}

    def evaluate(self, event: Mapping[str, Any]) -> dict[DatasetRef, list[RuleResult]]:
        return {OUT: [verdict(RULE, 2, 5)]}

    def evaluate_each(
        self, event: Mapping[str, Any], job_group: str, bound: Any
    ) -> Iterator[tuple[DatasetRef, list[RuleResult]]]:
        yield OUT, [verdict(RULE, 2, 5)]


class Sink:
    def __init__(self) -> None:
        self.sent: list[str] = []

    def send(self, body: str) -> None:
        self.sent.append(body)

    def close(self) -> None:
        pass


@pytest.fixture
def recording() -> Iterator[None]:
    registry.register(recording_output.OUTPUT)  # the one registry line of a new output
    yield
    registry.unregister(recording_output.OUTPUT.type)


def test_the_factory_builds_the_alert_types_from_settings(tmp_path: Path) -> None:
    settings = Settings.of(
        spool=tmp_path / "s.db",
        alert_max_pending=7,
        outputs=[
            {"type": "webhook", "url": "http://127.0.0.1:9/hook"},
            OutputSpec("slack", {"url": SLACK_URL}),
        ],
    )
    outputs = build_outputs(settings)
    assert outputs.result_sinks == ()
    assert outputs.alerts is not None
    assert outputs.alerts.sinks == [
        ("generic http://127.0.0.1:9/hook", "generic"),
        (f"slack {SLACK_URL}", "slack"),
    ]
    # one durable outbox for every alert output, beside the spool, bounded by the settings
    assert outputs.alerts.outbox.path == outbox_path(tmp_path / "s.db")
    assert outputs.alerts.outbox.max_pending == 7
    outputs.alerts.outbox.close()
    assert build_outputs(Settings.of(spool=tmp_path / "t.db")) == Outputs()


def test_the_factory_builds_the_datahub_types_from_settings(tmp_path: Path) -> None:
    pytest.importorskip("datahub.emitter.mcp", reason="pip install 'lineage-quality[datahub]'")
    from lineage_quality.datahub.file import McpFileWriter
    from lineage_quality.datahub.rest import McpRestWriter
    from lineage_quality.datahub.sink import DataHubSink

    settings = Settings.of(
        spool=tmp_path / "s.db",
        outputs=[
            {"type": "datahub-rest", "url": "http://127.0.0.1:9", "env": "dev", "token": "t"},
            {"type": "datahub-file", "path": str(tmp_path / "mcps.json"), "platform_instance": "x"},
        ],
    )
    outputs = build_outputs(settings)
    try:
        assert outputs.alerts is None
        rest, file = outputs.result_sinks
        assert isinstance(rest, DataHubSink) and isinstance(file, DataHubSink)
        assert [type(w) for w in rest.writers] == [McpRestWriter]
        assert (rest.naming.env, rest.naming.platform_instance) == ("DEV", None)
        assert [type(w) for w in file.writers] == [McpFileWriter]
        assert (file.naming.env, file.naming.platform_instance) == ("PROD", "x")
    finally:
        for sink in outputs.result_sinks:
            sink.close()


def test_an_unknown_type_is_a_clear_error_naming_it(tmp_path: Path) -> None:
    settings = Settings.of(spool=tmp_path / "s.db", outputs=[{"type": "kafak", "topic": "q"}])
    with pytest.raises(ConfigError, match=r"unknown output type 'kafak' \(known: datahub-file, "):
        build_outputs(settings)
    with pytest.raises(ConfigError, match=r"output 'webhook': unknown option\(s\) uri"):
        build_outputs(Settings.of(outputs=[{"type": "webhook", "uri": "http://x"}]))
    with pytest.raises(ConfigError, match=r"output 'datahub-file' needs option\(s\) path"):
        build_outputs(Settings.of(outputs=[{"type": "datahub-file"}]))
    with pytest.raises(ConfigError, match="alert webhook must be an http"):
        build_outputs(Settings.of(outputs=[{"type": "slack", "url": "ftp://x"}]))
    with pytest.raises(ValueError, match="a dict with a 'type'"):
        Settings.of(outputs=[{"url": "http://x"}])


def test_what_was_built_before_a_wrong_output_is_closed(tmp_path: Path, recording: None) -> None:
    built: list[Any] = []
    kind = recording_output.OUTPUT
    registry.unregister(kind.type)
    registry.register(
        type(kind)(
            kind.type,
            kind.durability,
            lambda o, b: built.append(kind.build(o, b)) or built[-1],
            kind.options,
            kind.required,
        )
    )
    specs = [{"type": "recording", "name": "a"}, {"type": "nope"}]
    with pytest.raises(ConfigError, match="'nope'"):
        build_outputs(Settings.of(spool=tmp_path / "s.db", outputs=specs))
    assert [s.closed for s in built] == [True]


def test_serve_flags_are_settings_outputs(recording: None) -> None:
    args = build_parser().parse_args(
        [
            "serve", "--contracts", "c",
            "--datahub-gms", "http://gms:8080", "--datahub-file", "out.json",
            "--datahub-env", "dev",
            "--alert-webhook", "https://ops/hook", "--alert-slack-webhook", SLACK_URL,
            "--output", '{"type": "recording", "name": "any type, by JSON"}',
        ]
    )  # fmt: skip
    settings = _settings(args, None, 0)
    # issue 40: the DataHub outputs remember each rule's assertion beside the spool (a superseded
    # one is marked removed after a restart too), one state file per writer
    spool = settings.spool.path
    state = str(spool.with_name(spool.stem + ".datahub-assertions.json"))
    assert settings.outputs.specs == (
        OutputSpec("datahub-rest", {"url": "http://gms:8080", "env": "dev", "state": state}),
        OutputSpec(
            "datahub-file", {"path": "out.json", "env": "dev", "state": f"{state}.file"}
        ),
        OutputSpec("webhook", {"url": "https://ops/hook"}),
        OutputSpec("slack", {"url": SLACK_URL}),
        OutputSpec("recording", {"name": "any type, by JSON"}),
    )
    # the Slack URL is a secret: redacted from the logs by serve, never in a repr
    assert secrets_of(settings.outputs.specs) == ["https://ops/hook", SLACK_URL]
    assert SLACK_URL not in repr(settings)
    args.output = ["{not json"]
    with pytest.raises(ConfigError, match="--output: "):
        _settings(args, None, 0)


def test_each_kind_states_one_durability_rule() -> None:
    durability = {t: k.durability for t, k in registry.TYPES.items()}
    assert durability == {
        "datahub-rest": Durability.DROPPED_AND_COUNTED,
        "datahub-file": Durability.DROPPED_AND_COUNTED,
        "webhook": Durability.OUTBOXED,
        "slack": Durability.OUTBOXED,
    }


def test_adding_an_output_is_one_module_and_one_registry_line(
    tmp_path: Path, recording: None
) -> None:
    # The built-in output types are as a new one is: a module each, one `register` line each.
    infrastructure = {"__init__", "output_type", "registry", "factory"}
    kind_modules = sorted(p.stem for p in OUTPUTS.glob("*.py") if p.stem not in infrastructure)
    tree = ast.parse((OUTPUTS / "registry.py").read_text())
    lines = [
        ast.unparse(node)
        for node in tree.body
        if isinstance(node, ast.Expr) and ast.unparse(node).startswith("register(")
    ]
    assert sorted(lines) == sorted(f"register({m}.OUTPUT)" for m in kind_modules)
    for module in kind_modules:  # its type is named in its module only
        type_ = registry.TYPES[module.replace("_", "-")].type
        naming = [p.stem for p in OUTPUTS.glob("*.py") if f'"{type_}"' in p.read_text()]
        assert naming == [module]

    # The new one (tests/unit/recording_output.py, registered by the fixture) is built from the
    # settings by its type and gets every evaluation's results, like DataHub.
    settings = Settings.of(
        port=0, spool=tmp_path / "s.db", outputs=[{"type": "recording", "name": "mine"}]
    )
    outputs = build_outputs(settings)
    (sink,) = outputs.result_sinks
    assert isinstance(sink, recording_output.RecordingSink) and sink.name == "mine"
    producer = Producer(
        Evaluator(),  # type: ignore[arg-type]
        Sink(),  # type: ignore[arg-type]
        Spool(settings.spool.path, settings),
        settings,
        result_sinks=outputs.result_sinks,
        alerts=outputs.alerts,
    )
    producer.start()
    try:
        assert "dataQualityAssertions" in producer.process(_complete())
    finally:
        producer.stop()
    ((event, results),) = sink.emitted
    assert event["eventType"] == "COMPLETE" and list(results) == [OUT]
    assert sink.closed


def test_the_in_driver_producer_gets_the_same_outputs_as_serve(
    tmp_path: Path, recording: None
) -> None:
    """DriverProducer composed from public parts: its intake in front of the spool, the outputs
    (a result sink, a webhook) and the gate behind the evaluation."""
    from lineage_quality.driver.runtime import DriverProducer

    hook = FlakyWebhook()
    hook.up.set()
    settings = Settings.of(
        port=0,
        workers=2,
        evaluation_timeout=None,
        warm_evaluator=False,
        spool=tmp_path / "driver.db",
        outputs=[{"type": "recording", "name": "dh"}, {"type": "webhook", "url": hook.url}],
    )
    outputs = build_outputs(settings)
    firsts: list[bool] = []
    driver = DriverProducer(
        Evaluator(),  # type: ignore[arg-type]
        Sink(),  # type: ignore[arg-type]
        Spool(settings.spool.path, settings),
        settings,
        hold_seconds=60,
        on_first_event=lambda: firsts.append(True),
        outputs=outputs,
    )
    driver.start()
    try:
        driver.intake.accept(_complete(), None)  # a COMPLETE: ends its run, passes at once
        assert driver.spool.wait_empty(timeout=10)
    finally:
        driver.stop(drain_timeout=10)  # waits for the alert to be delivered
    assert firsts == [True]
    assert driver.blocking() == []  # an ALERT rule failed: alerted, not blocking
    ((dataset, result),) = driver.results()
    assert (dataset, result.rule.id) == (OUT.key, "n")
    (sink,) = outputs.result_sinks
    assert isinstance(sink, recording_output.RecordingSink)
    assert [list(results) for _, results in sink.emitted] == [[OUT]] and sink.closed
    (alert,) = hook.taken
    assert alert["runId"] == "0190e6f0-0000-7000-8000-000000000001"
    hook.close()


def test_the_zero_code_mode_reads_the_outputs_as_a_json_list() -> None:
    from lineage_quality.driver.auto import outputs

    assert outputs(None) == [] and outputs("") == []
    assert outputs('[{"type": "webhook", "url": "http://x"}]') == [
        {"type": "webhook", "url": "http://x"}
    ]
    with pytest.raises(ConfigError, match="not JSON"):
        outputs("[{")
    with pytest.raises(ConfigError, match="a JSON list"):
        outputs('{"type": "webhook"}')
