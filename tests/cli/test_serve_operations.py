"""`lineage-quality --log-format json serve` as users start it (issue 10.5): /readyz turns 200
once the evaluator's Spark session is up (started in the background at start-up), /healthz needs
no key, /metrics and the quality view at / need it, and every log line of ours is a JSON
object."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
KEY = "serve-operations-key-0123456789"


def get(url: str, key: str | None = None) -> tuple[int, bytes]:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_serve_readiness_metrics_and_json_logs(tmp_path: Path) -> None:
    config = tmp_path / "openlineage.yml"
    config.write_text(
        f"transport:\n  type: file\n  log_file_path: {tmp_path / 'out.jsonl'}\n  append: true\n"
    )
    stderr = tmp_path / "serve.log"
    cmd = [
        sys.executable, "-m", "lineage_quality.cli", "--log-format", "json", "serve",
        "--contracts", str(REPO_ROOT / "tests" / "e2e" / "contracts"),
        "--port", "0", "--spool", str(tmp_path / "spool.db"),
        "--openlineage-config", str(config), "--spark-master", "local[1]",
        "--alert-webhook", "http://127.0.0.1:9/hook-secret-path",
    ]  # fmt: skip
    with stderr.open("wb") as err:
        proc = subprocess.Popen(
            cmd,
            cwd=REPO_ROOT,
            env={**os.environ, "LINEAGE_QUALITY_API_KEY": KEY},
            stdout=subprocess.PIPE,
            stderr=err,
        )
    lines: queue.Queue[bytes] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout], daemon=True).start()  # type: ignore[union-attr]
    try:
        line = lines.get(timeout=60).decode()
        assert " listening on " in line, stderr.read_text()[-3000:]
        url = line.split(" listening on ")[1].split("/api/v1/lineage")[0]

        assert get(url + "/healthz") == (200, b'{"status": "ok"}')
        assert get(url + "/metrics")[0] == 401
        status, body = get(url + "/metrics", KEY)
        assert status == 200 and b"lineage_quality_events_received_total 0.0" in body
        # the quality view at the root of the port (its history store on by default), behind
        # the key as every route but the probes
        assert get(url + "/")[0] == 401
        status, body = get(url + "/", KEY)
        assert status == 200 and b"<h1>Datasets (0)</h1>" in body
        status, body = get(url + "/api/v1/datasets/%2Flake%2Fraw/gate", KEY)
        assert status == 200 and json.loads(body)["exit"] == 2

        seen = []
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            status, body = get(url + "/readyz")
            seen.append((status, json.loads(body)))
            if status == 200:
                break
            time.sleep(0.5)
        assert seen[-1] == (200, {"status": "ready", "problems": []}), seen[-1]
        # Before the session was up, the only reason given was the evaluator starting.
        assert all(p == (503, {"status": "not ready", "problems": ["evaluator starting"]})
                   for p in seen[:-1])  # fmt: skip
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=120)

    ours = []
    for text in stderr.read_text().splitlines():
        if text.startswith("{"):
            ours.append(json.loads(text))
        else:  # only the JVM's own output may be plain text, never our loggers
            assert "lineage_quality" not in text, text
    messages = [r["message"] for r in ours if r["logger"].startswith("lineage_quality")]
    assert any("forwarding lineage events through FileTransport" in m for m in messages)
    assert all({"time", "level", "logger", "message"} <= r.keys() for r in ours)
    assert "hook-secret-path" not in stderr.read_text()
