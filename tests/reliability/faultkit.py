"""Test support for the fault-injection suite (nothing here ships in the runtime package).

* `RecordingSink`: an OpenLineage HTTP endpoint on 127.0.0.1 that records what it takes. It can
  refuse connections (bound, not listening: "down"), hold requests at a gate ("slow"), and
  require a Bearer key.
* `Sender`: a keep-alive HTTP/1.1 client for the producer.
* `make_event`: a valid RunEvent numbered (run, seq), with no rules bound to it.
* `ServeProcess`: a real `lineage-quality serve` subprocess.
* `tmpfs`: a tiny tmpfs mounted in a temp folder (we are root in CI), for disk-full tests.
* `FAULTS`: the sent / forwarded / lost counts of each fault test, printed at the end of the run.
"""

from __future__ import annotations

import contextlib
import datetime
import http.client
import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
RUN_EVENT_SCHEMA = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
TEST_PRODUCER = "https://github.com/lineage-quality/tests/reliability"

# An ODCS contract binding one rule (`{key}_id_not_null`) to the file dataset at `{path}`
CONTRACT = """\
apiVersion: v3.0.2
kind: DataContract
id: bad-{key}
version: 1.0.0
status: active
schema:
  - name: {key}
    customProperties:
      - property: openlineage.namespace
        value: file
      - property: openlineage.name
        value: "{path}"
    properties:
      - name: id
        quality:
          - metric: nullValues
            mustBe: 0
            name: {key}_id_not_null
"""

# (test, sent, accepted, forwarded, lost, duplicates) of every fault test in this session
FAULTS: list[dict[str, Any]] = []


def record_fault(name: str, sent: int, accepted: int, forwarded: int, **extra: Any) -> int:
    """Record and print a fault test's counts, and assert that no accepted event was lost."""
    lost = accepted - forwarded
    row = {"fault": name, "sent": sent, "accepted": accepted, "forwarded": forwarded, "lost": lost}
    row.update(extra)
    FAULTS.append(row)
    print(" ".join(f"{k}={v}" for k, v in row.items()))
    assert lost == 0, row
    return lost


def make_event(
    run: int, seq: int, event_type: str = "RUNNING", pad: int = 0, **extra: Any
) -> dict[str, Any]:
    facets: dict[str, Any] = {
        "seq": {"_producer": TEST_PRODUCER, "_schemaURL": TEST_PRODUCER + "/seq", "n": seq}
    }
    if pad:
        facets["pad"] = {"_producer": TEST_PRODUCER, "_schemaURL": TEST_PRODUCER, "x": "p" * pad}
    event: dict[str, Any] = {
        "eventType": event_type,
        # when it is made: after the data its test wrote (a run cannot have read or written
        # files modified after its COMPLETE, and the evaluator will not judge those as its data)
        "eventTime": datetime.datetime.now(datetime.UTC)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z"),
        "producer": TEST_PRODUCER,
        "schemaURL": RUN_EVENT_SCHEMA,
        "run": {"runId": f"00000000-0000-4000-8000-{run:012d}", "facets": facets},
        "job": {"namespace": "reliability", "name": f"job_{run}"},
        "inputs": [],
        "outputs": [],
    }
    event.update(extra)
    return event


def key_of(event: dict[str, Any]) -> tuple[str, int]:
    return event["run"]["runId"], int(event["run"]["facets"]["seq"]["n"])


def check_run_order(events: list[dict[str, Any]]) -> None:
    """Per run, the first forwarding of each event follows the order they were sent in."""
    seen: set[tuple[str, int]] = set()
    last: dict[str, int] = {}
    for event in events:
        key = key_of(event)
        if key in seen:
            continue  # a duplicate (at least once)
        seen.add(key)
        run, seq = key
        assert seq > last.get(run, -1), (
            f"run {run}: event {seq} forwarded after {last[run]}; the run's events as "
            f"forwarded: {[key_of(e)[1] for e in events if key_of(e)[0] == run]}"
        )
        last[run] = seq


class RecordingSink:
    def __init__(self, api_key: str | None = None, listening: bool = True) -> None:
        self.api_key = api_key
        self.events: list[dict[str, Any]] = []
        self.attempts = 0
        self.unauthorized = 0
        self._budget: int | None = None  # take this many events, hold the rest until `release`
        self.delay = 0.0  # seconds before answering each request
        # a status to answer instead of taking the event (None: take it), asked per request
        self.refuse: Callable[[dict[str, Any]], int | None] = lambda event: None
        self._changed = threading.Condition()
        sink = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if sink.delay:
                    time.sleep(sink.delay)
                if sink.api_key and self.headers.get("Authorization") != f"Bearer {sink.api_key}":
                    with sink._changed:
                        sink.unauthorized += 1
                    self._answer(401)
                    return
                with sink._changed:
                    sink.attempts += 1
                    sink._changed.notify_all()
                    if not sink._changed.wait_for(sink._may_take, 60):
                        self._answer(503)
                        return
                    refused = sink.refuse(json.loads(body))
                    if refused is not None:
                        self._answer(refused)
                        return
                    sink.events.append(json.loads(body))
                    sink._changed.notify_all()
                self._answer(200)

            def _answer(self, status: int) -> None:
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler, bind_and_activate=False)
        self._server.daemon_threads = True
        self._server.server_bind()  # bound but not listening: connections are refused
        self._thread: threading.Thread | None = None
        if listening:
            self.up()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def up(self) -> None:
        self._server.server_activate()
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.1,), daemon=True)
        self._thread.start()

    def _may_take(self) -> bool:
        return self._budget is None or len(self.events) < self._budget

    def hold(self, after: int = 0) -> None:
        """Take `after` more events, then hold every request (unanswered) until `release`."""
        with self._changed:
            self._budget = len(self.events) + after
            self._changed.notify_all()

    def release(self) -> None:
        with self._changed:
            self._budget = None
            self._changed.notify_all()

    def wait_for(self, predicate: Callable[[RecordingSink], bool], timeout: float = 60) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: predicate(self), timeout)

    def received(self) -> set[tuple[str, int]]:
        with self._changed:
            return {key_of(e) for e in self.events}

    def close(self) -> None:
        self.release()
        if self._thread is not None:
            self._server.shutdown()
        self._server.server_close()


class Sender:
    """Posts events over one kept-alive connection (reconnecting when it is closed)."""

    def __init__(self, url: str, api_key: str | None = None) -> None:
        host, port = url.removeprefix("http://").split(":")
        self.host, self.port = host, int(port)
        self.headers = {"Content-Type": "application/json"}
        if api_key:
            self.headers["Authorization"] = f"Bearer {api_key}"
        self._conn: http.client.HTTPConnection | None = None

    def post_raw(self, body: bytes, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
        if self._conn is None:
            self._conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
        try:
            self._conn.request("POST", "/api/v1/lineage", body=body, headers=headers or {})
            resp = self._conn.getresponse()
            payload = resp.read()
        except (OSError, http.client.HTTPException):
            self.close()
            raise
        if resp.will_close:
            self.close()
        return resp.status, payload

    def post(self, event: dict[str, Any]) -> int:
        return self.post_raw(json.dumps(event).encode(), self.headers)[0]

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


class ServeProcess:
    """`lineage-quality serve` in a subprocess; its log goes to `log_path`."""

    def __init__(
        self,
        args: list[str],
        log_path: Path,
        env: dict[str, str] | None = None,
        prefix: list[str] | None = None,
    ) -> None:
        cmd = [*(prefix or []), sys.executable, "-m", "lineage_quality.cli", "-v", "serve", *args]
        self.log_path = log_path
        self._log = log_path.open("ab")
        self.proc = subprocess.Popen(
            cmd,
            cwd=REPO_ROOT,
            env={**os.environ, **(env or {})},
            stdout=subprocess.PIPE,
            stderr=self._log,
        )
        self._lines: queue.Queue[bytes] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.url = self._wait_url(timeout=60)

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(b"")

    def _wait_url(self, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        while (remaining := deadline - time.monotonic()) > 0:
            try:
                line = self._lines.get(timeout=remaining).decode()
            except queue.Empty:
                break
            if not line:
                break
            if " listening on " in line:
                return line.split(" listening on ")[1].split("/api/v1/lineage")[0]
        self.stop()
        raise AssertionError(f"serve did not start:\n{self.log_path.read_text()[-3000:]}")

    def wait_ready(self, timeout: float) -> None:
        """Until `/readyz` answers 200: the spool is open and the evaluator's Spark session is
        up (serve warms it at start)."""
        deadline = time.monotonic() + timeout
        host, port = self.url.removeprefix("http://").rsplit(":", 1)
        while time.monotonic() < deadline:
            conn = http.client.HTTPConnection(host, int(port), timeout=5)
            try:
                conn.request("GET", "/readyz")
                if conn.getresponse().status == 200:
                    return
            except (OSError, http.client.HTTPException):
                pass
            finally:
                conn.close()
            time.sleep(0.5)
        raise AssertionError(f"serve not ready in {timeout}s:\n{self.log_path.read_text()[-3000:]}")

    def kill9(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)
        self._log.close()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)
        self._log.close()


@contextlib.contextmanager
def tmpfs(path: Path, size: str) -> Iterator[bool]:
    """Mount a tmpfs of `size` on `path`; yields False (and mounts nothing) where not permitted."""
    path.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        yield False
        return
    try:
        yield True
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True, check=False)


def openlineage_yml(path: Path, sink: RecordingSink, api_key: str | None = None) -> Path:
    """An openlineage.yml forwarding to `sink` (no client-side retries: the producer retries)."""
    lines = [
        "transport:",
        "  type: http",
        f"  url: {sink.url}",
        "  timeout: 60",
        "  retry: {total: 0, connect: 0, read: 0}",
    ]
    if api_key:
        lines += ["  auth:", "    type: api_key", f"    apiKey: {api_key}"]
    path.write_text("\n".join(lines) + "\n")
    return path


def http_transport(sink: RecordingSink, api_key: str | None = None) -> Any:
    from openlineage.client.transport.http import HttpConfig, HttpTransport

    config: dict[str, Any] = {
        "url": sink.url,
        "timeout": 60,
        "retry": {"total": 0, "connect": 0, "read": 0},
    }
    if api_key:
        config["auth"] = {"type": "api_key", "apiKey": api_key}
    return HttpTransport(HttpConfig.from_dict(config))


def java_descendants(pid: int) -> list[int]:
    """Live JVMs started (directly or not) by process `pid`: a zombie holds nothing."""
    out = subprocess.run(
        ["ps", "-o", "pid=,stat=,comm=", "--ppid", str(pid)], capture_output=True, check=False
    )
    found = []
    for line in out.stdout.decode().splitlines():
        child, stat, comm = line.split(None, 2)
        if comm.strip() == "java" and not stat.startswith("Z"):
            found.append(int(child))
        found.extend(java_descendants(int(child)))
    return found


# An ODCS contract of three rules on the float column `amount` (NaN and Infinity in real data)
# and the key `id` of the file dataset at `{path}` (issue 44); `{profile}`: "true" or "false".
AMOUNTS_CONTRACT = """\
apiVersion: v3.0.2
kind: DataContract
id: amounts
version: 1.0.0
status: active
schema:
  - name: amounts
    lineageQuality.profile: {profile}
    customProperties:
      - property: openlineage.namespace
        value: file
      - property: openlineage.name
        value: "{path}"
    properties:
      - name: amount
        quality:
          - metric: avg
            mustBeLessThan: 10
            name: amount_avg
          - metric: avg
            mustBeBetween: [0.5, 2]
            name: amount_avg_vs_previous
            customProperties:
              - property: lineageQuality.history
                value: {{compare: relativeChange}}
      - name: id
        quality:
          - metric: nullValues
            mustBe: 0
            name: id_not_null
"""
SEQ = re.compile(rb'"seq": ?\{[^{}]*"n": ?(\d+)')


class RawSink:
    """An OpenLineage endpoint that takes every POST and keeps its bytes (nothing here parses
    what it is sent: a test may send what `json` cannot read); events are told apart by a
    marker found in the bytes (`mark`: a regex whose group 1 is the event's number; by default
    `make_event`'s `seq` facet)."""

    def __init__(self, mark: re.Pattern[bytes] = SEQ) -> None:
        self.mark = mark
        self.bodies: list[bytes] = []
        self.changed = threading.Condition()
        sink = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                with sink.changed:
                    sink.bodies.append(body)
                    sink.changed.notify_all()
                self.send_response(201)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, args=(0.1,), daemon=True).start()

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def marks(self) -> list[int]:
        """The numbers of the events taken, once per time taken (a duplicate shows twice)."""
        with self.changed:
            return [int(m.group(1)) for b in self.bodies for m in self.mark.finditer(b)]

    def seqs(self) -> set[int]:
        return set(self.marks())

    def wait_for(self, seqs: set[int], timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if seqs <= self.seqs():
                return True
            time.sleep(0.05)
        return False

    def body_of(self, seq: int) -> bytes:
        with self.changed:
            return next(b for b in self.bodies if seq in self._numbers(b))

    def _numbers(self, body: bytes) -> set[int]:
        return {int(m.group(1)) for m in self.mark.finditer(body)}
