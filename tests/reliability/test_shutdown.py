"""`serve` stops within a bound whatever died first (issue 49.6; docs/operations.md, "Stopping").

`serve` runs as a process group (its evaluator's JVM in it, as under a supervisor or a container
runtime), with `--datahub-file`, contracts binding the events, and evaluations under way when the
stop comes. Each case asserts the exit within `--drain-seconds` + `STOP_GRACE_SECONDS` with exit
code 0, nothing accepted lost (forwarded, or still in the spool for the next start), and no JVM
left behind:

- SIGTERM to the whole group: the JVM dies with `serve`, mid-evaluation;
- the JVM SIGKILLed first, then SIGTERM to `serve`;
- the sink stuck (every request held unanswered, 4 workers inside a send), then SIGTERM.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import time
from pathlib import Path

import pytest
from faultkit import (
    RecordingSink,
    Sender,
    ServeProcess,
    java_descendants,
    key_of,
    make_event,
    openlineage_yml,
)

from lineage_quality.producer.shutdown import STOP_GRACE_SECONDS

DRAIN = 2.0
BOUND = DRAIN + STOP_GRACE_SECONDS

CONTRACT = """\
apiVersion: v3.1.0
kind: DataContract
id: shutdown
version: 1.0.0
status: active
schema:
  - name: data
    customProperties:
      - {{property: openlineage.namespace, value: file}}
      - {{property: openlineage.name, value: "{path}"}}
    quality:
      - metric: rowCount
        mustBeGreaterThan: 0
"""


def _serve(tmp_path: Path, sink: RecordingSink) -> tuple[ServeProcess, Path]:
    data = tmp_path / "data.csv"
    data.write_text("a\n" + "".join(f"{i}\n" for i in range(1000)))
    contracts = tmp_path / "contracts"
    contracts.mkdir()
    (contracts / "c.yaml").write_text(CONTRACT.format(path=data))
    args = [
        "--contracts", str(contracts), "--port", "0", "--spool", str(tmp_path / "spool.db"),
        "--openlineage-config", str(openlineage_yml(tmp_path / "ol.yml", sink)),
        "--datahub-file", str(tmp_path / "mcps.json"), "--drain-seconds", str(DRAIN),
        "--workers", "4", "--write-through-below", "0",
    ]  # fmt: skip
    serve = ServeProcess(args, tmp_path / "serve.log", prefix=["setsid"])  # its own group
    assert os.getpgid(serve.proc.pid) == serve.proc.pid
    serve.wait_ready(120)
    return serve, data


def _complete(run: int, data: Path) -> dict:
    return make_event(run, 0, "COMPLETE", inputs=[{"namespace": "file", "name": str(data)}])


def _stopped_within_bound(serve: ServeProcess, jvms: list[int], started: float) -> float:
    try:
        code = serve.proc.wait(timeout=BOUND + 30)
    except Exception:
        serve.proc.kill()
        raise
    elapsed = time.monotonic() - started
    log = serve.log_path.read_text()
    print(f"serve stopped in {elapsed:.1f}s (bound {BOUND:g}s), exit code {code}")
    assert code == 0, log[-3000:]
    assert elapsed < BOUND, f"stopped in {elapsed:.1f}s, over the bound {BOUND}s\n{log[-3000:]}"
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in jvms) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(_alive(pid) for pid in jvms), "the evaluator's JVM outlived serve"
    return elapsed


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _nothing_lost(tmp_path: Path, sink: RecordingSink, sent: set[tuple[str, int]]) -> None:
    """What `serve` took is at the sink or in the spool, for the next start."""
    with sqlite3.connect(tmp_path / "spool.db") as db:
        kept = [json.loads(body) for (body,) in db.execute("SELECT body FROM events")]
    spooled = {key_of(e) for e in kept if "seq" in e["run"].get("facets", {})}
    missing = sent - sink.received() - spooled
    assert not missing, (missing, len(kept))


@pytest.mark.parametrize("case", ["group", "jvm_first", "sink_stuck"])
def test_serve_stops_within_its_bound_whatever_died_first(tmp_path: Path, case: str) -> None:
    sink = RecordingSink()
    serve, data = _serve(tmp_path, sink)
    sender = Sender(serve.url)
    sent: set[tuple[str, int]] = set()
    try:
        jvms = java_descendants(serve.proc.pid)
        assert jvms, "the evaluator's JVM did not start"
        assert sender.post(_complete(0, data)) == 201
        assert sink.wait_for(lambda s: len(s.events) == 1, 120)  # evaluated, DataHub written
        sent.add(key_of(_complete(0, data)))
        if case == "sink_stuck":
            sink.hold()
        for run in range(1, 9):  # evaluations under way when the stop comes
            assert sender.post(_complete(run, data)) == 201
            sent.add(key_of(_complete(run, data)))
        if case == "sink_stuck":
            assert sink.wait_for(lambda s: s.attempts >= 5, 60)  # sends held at the sink
        else:
            time.sleep(0.3)
        if case == "jvm_first":
            for pid in jvms:
                os.kill(pid, signal.SIGKILL)
            time.sleep(0.5)
        started = time.monotonic()
        if case == "group":
            os.killpg(serve.proc.pid, signal.SIGTERM)
        else:
            serve.proc.send_signal(signal.SIGTERM)
        _stopped_within_bound(serve, jvms, started)
    finally:
        sender.close()
        sink.release()
        serve.stop()
        sink.close()
    _nothing_lost(tmp_path, sink, sent)
    assert (tmp_path / "mcps.json").stat().st_size > 0
    if case != "jvm_first":  # (a JVM dying on its own is an ERROR, by design: test_evaluator_jvm)
        # the stop judges nothing: an evaluation it cut short waits in the spool, never goes
        # out as an ERROR saying the JVM died or Spark was shut down
        for event in sink.events:
            (dataset,) = event["inputs"]
            facet = dataset["inputFacets"]["dataQualityAssertions"]
            assert all(a["success"] for a in facet["assertions"]), (case, facet["assertions"])
