"""`lineage-quality serve` as users start it, in its own process (its own JVM: the test session's
SparkContext is local, and a deployment needs the evaluator on a cluster, a metastore or S3),
forwarding to a file; and jobs submitted with the real listener pointed at it."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lineage_quality.sparksubmit import listener_args, spark_submit

REPO_ROOT = Path(__file__).resolve().parents[2]
JOBS = Path(__file__).resolve().parent / "jobs"


@dataclass
class Serve:
    url: str
    events_path: Path
    log_path: Path

    def events(self) -> list[dict[str, Any]]:
        if not self.events_path.exists():
            return []
        lines = self.events_path.read_text().splitlines()
        return [json.loads(line) for line in lines if line.strip()]

    def wait_for(
        self, found: Callable[[list[dict[str, Any]]], bool], timeout: float = 300
    ) -> list[dict[str, Any]]:
        """The forwarded events once `found(events)` holds; fails with serve's log if never."""
        deadline = time.monotonic() + timeout
        while True:
            events = self.events()
            if found(events):
                return events
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"serve did not forward what was expected within {timeout:g}s; "
                    f"{len(events)} event(s); its log:\n{self.log()[-4000:]}"
                )
            time.sleep(0.5)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def submit(
        self, job: str, args: list[str], conf: dict[str, str], workdir: Path, master: str
    ) -> None:
        """Run `jobs/<job>` under spark-submit with the real listener pointed at this serve."""
        log = workdir / f"{job}-{time.monotonic_ns()}.log"
        settings = {"spark.ui.enabled": "false", **conf}
        result = spark_submit(
            [*listener_args(REPO_ROOT, self.url, settings, master=master), str(JOBS / job), *args],
            cwd=REPO_ROOT,
            log_file=log,
        )
        assert result.returncode == 0, log.read_text()[-4000:]


@contextlib.contextmanager
def serve_process(
    workdir: Path, contracts: Path, conf: dict[str, str], *extra: str
) -> Iterator[Serve]:
    """`serve --contracts contracts --spark-conf k=v ...` on a free loopback port, forwarding to
    `workdir/events.jsonl`; stopped (SIGTERM, then kill) at the end."""
    workdir.mkdir(parents=True, exist_ok=True)
    events = workdir / "events.jsonl"
    config = workdir / "openlineage.yml"
    config.write_text(f"transport:\n  type: file\n  log_file_path: {events}\n  append: true\n")
    log_path = workdir / "serve.log"
    cmd = [
        sys.executable, "-m", "lineage_quality.cli", "serve",
        "--contracts", str(contracts), "--port", "0", "--spool", str(workdir / "spool.db"),
        "--openlineage-config", str(config),
    ]  # fmt: skip
    for key, value in conf.items():
        cmd += ["--spark-conf", f"{key}={value}"]
    cmd += list(extra)
    with log_path.open("wb") as err:
        proc = subprocess.Popen(
            cmd, cwd=REPO_ROOT, env=dict(os.environ), stdout=subprocess.PIPE, stderr=err
        )
    lines: queue.Queue[bytes] = queue.Queue()
    assert proc.stdout is not None
    stdout = proc.stdout
    threading.Thread(target=lambda: [lines.put(x) for x in stdout], daemon=True).start()
    try:
        try:
            line = lines.get(timeout=120).decode()
        except queue.Empty:
            raise AssertionError(f"serve did not start: {log_path.read_text()[-4000:]}") from None
        assert " listening on " in line, log_path.read_text()[-4000:]
        url = line.split(" listening on ")[1].split("/api/v1/lineage")[0]
        yield Serve(url, events, log_path)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)


def completes(events: list[dict[str, Any]], job_part: str) -> list[dict[str, Any]]:
    """COMPLETE events of jobs whose name contains `job_part`, in event time order."""
    found = [e for e in events if e["eventType"] == "COMPLETE" and job_part in e["job"]["name"]]
    return sorted(found, key=lambda e: e["eventTime"])


def assertions_of(event: dict[str, Any], name_part: str) -> dict[str, dict[str, Any]]:
    """The assertions on the event's output whose name contains `name_part`, by rule name."""
    for out in event.get("outputs", []):
        if name_part in out["name"]:
            facet = out.get("facets", {}).get("dataQualityAssertions")
            if facet is not None:
                return {a["name"]: a for a in facet["assertions"]}
    return {}
