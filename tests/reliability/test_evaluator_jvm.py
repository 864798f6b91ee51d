"""The evaluator's JVM dies or hangs (issue 9.2, 9.3): `serve` starts a new one and goes on.

Both run `lineage-quality serve` in a subprocess (its JVM is its own): one kills the JVM between
events, the other gives it a pattern whose backtracking ignores Spark's cancel."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from faultkit import (
    RecordingSink,
    Sender,
    ServeProcess,
    java_descendants,
    make_event,
    openlineage_yml,
)

CONTRACT = """\
apiVersion: v3.1.0
kind: DataContract
id: jvm
version: 1.0.0
status: active
schema:
  - name: data
    customProperties:
      - {{property: openlineage.namespace, value: file}}
      - {{property: openlineage.name, value: "{folder}/*"}}
    properties:
      - name: a
        quality:
          - metric: nullValues
            mustBe: 0
            name: a_not_null
          - metric: invalidValues
            arguments: {{pattern: "{pattern}"}}
            name: a_pattern
"""


def _serve(tmp_path: Path, pattern: str, *extra: str) -> tuple[ServeProcess, RecordingSink, Path]:
    folder = tmp_path / "lake"
    folder.mkdir()
    contracts = tmp_path / "contracts"
    contracts.mkdir()
    (contracts / "c.yaml").write_text(CONTRACT.format(folder=folder, pattern=pattern))
    sink = RecordingSink()
    args = [
        "--contracts", str(contracts), "--port", "0", "--spool", str(tmp_path / "spool.db"),
        "--openlineage-config", str(openlineage_yml(tmp_path / "ol.yml", sink)), *extra,
    ]  # fmt: skip
    return ServeProcess(args, tmp_path / "serve.log"), sink, folder


def _post(serve: ServeProcess, run: int, dataset: Path) -> None:
    event = make_event(run, 0, "COMPLETE", inputs=[{"namespace": "file", "name": str(dataset)}])
    assert Sender(serve.url).post(event) == 201


def _verdicts(event: dict[str, Any]) -> dict[str, str]:
    facet = event["inputs"][0]["inputFacets"]["dataQualityAssertions"]
    named = ("a_not_null", "a_pattern")
    return {a["name"]: a["params"]["status"] for a in facet["assertions"] if a["name"] in named}


def test_a_killed_jvm_is_replaced_and_the_next_event_is_evaluated(tmp_path: Path) -> None:
    serve, sink, folder = _serve(tmp_path, "^[a-z]+$")
    try:
        serve.wait_ready(timeout=180)
        data = folder / "one.csv"
        data.write_text("a\nx\ny\n")
        _post(serve, 1, data)
        assert sink.wait_for(lambda s: len(s.events) == 1, timeout=120)
        assert _verdicts(sink.events[0]) == {"a_not_null": "PASSED", "a_pattern": "PASSED"}
        (jvm,) = java_descendants(serve.proc.pid)
        os.kill(jvm, 9)
        time.sleep(1)
        _post(serve, 2, data)
        assert sink.wait_for(lambda s: len(s.events) == 2, timeout=120)
        assert _verdicts(sink.events[1]) == {"a_not_null": "PASSED", "a_pattern": "PASSED"}
        assert java_descendants(serve.proc.pid) not in ([], [jvm])  # a new JVM did it
    finally:
        serve.stop()
    assert "the next evaluation starts a new one" in serve.log_path.read_text()


def test_work_ignoring_cancel_is_ended_by_replacing_the_jvm(tmp_path: Path) -> None:
    # Polynomial backtracking the static check lets through (a bounded repeat of `a+`): on 40
    # a's java.util.regex runs for many minutes and never looks at interrupts. The pattern DFA
    # answers ASCII values of it at once; the trailing non-ASCII letter sends the value to
    # java.util.regex (docs/evaluation.md), which is what a real value could do.
    serve, sink, folder = _serve(
        tmp_path,
        "^(a+){12}b$",
        "--evaluation-timeout", "90", "--evaluation-cancel-after", "30",
        "--evaluation-kill-after", "2",
    )  # fmt: skip
    try:
        # Warm the JVM first, so the cancel comes while the regex runs (not during start-up):
        # the 30 s of --evaluation-cancel-after count from each evaluation's start, the warm-up's
        # too, and its first Spark job on a loaded CI machine can take over 10 s (issue 44.9;
        # with 10 s, the warm-up was cancelled under the load of two suites side by side).
        serve.wait_ready(timeout=180)
        quick = folder / "quick.csv"
        quick.write_text("a\n" + "a" * 12 + "b\n")
        _post(serve, 3, quick)
        assert sink.wait_for(lambda s: len(s.events) >= 1, timeout=120)
        assert _verdicts(sink.events[0]) == {"a_not_null": "PASSED", "a_pattern": "PASSED"}
        # The busy JVM, named before the slow event: by the time the slow event is forwarded
        # its JVM may be gone already, or a new one starting (then `(jvm,)` failed, or named the
        # new JVM and waited for it to end).
        (jvm,) = java_descendants(serve.proc.pid)
        slow = folder / "slow.csv"
        slow.write_text("a\n" + "a" * 40 + "é\n", encoding="utf-8")
        _post(serve, 1, slow)
        assert sink.wait_for(lambda s: len(s.events) >= 2, timeout=120)
        first = _verdicts(sink.events[1])
        assert first["a_pattern"] == "ERROR"  # cancelled: reported as ERROR, never a pass
        deadline = time.monotonic() + 60
        while jvm in java_descendants(serve.proc.pid) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert jvm not in java_descendants(serve.proc.pid), "the busy JVM was never ended"
        _post(serve, 2, quick)
        assert sink.wait_for(
            lambda s: any(e["run"]["runId"].endswith("2") for e in s.events), timeout=120
        )
        (late_or_next,) = [e for e in sink.events if e["run"]["runId"].endswith("000000000002")]
        assert _verdicts(late_or_next) == {"a_not_null": "PASSED", "a_pattern": "PASSED"}
    finally:
        serve.stop()
