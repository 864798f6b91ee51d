"""The stop's last lines (issue 49.6, producer/shutdown.py): a step that never ends is ended by
the watchdog at the bound, with exit code 1 and the step named; a second signal ends the
process at once; a call that blocks is left behind after its share (`within`). In subprocesses
of their own: the watchdog ends its process."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time

from lineage_quality.producer.shutdown import share, within

STUCK = """
import logging, sys, time
from lineage_quality.producer.shutdown import Stopping
logging.basicConfig(level=logging.INFO, stream=sys.stderr)
stopping = Stopping(drain_seconds=0.5, grace=1.0)
stopping.install()
print("ready", flush=True)
stopping.requested.wait()
stopping.now("closing a sink that never answers")
time.sleep(60)
"""


def _started() -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", STUCK], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    return proc


def test_a_stop_stuck_in_a_step_ends_at_the_bound_with_code_1_naming_the_step() -> None:
    proc = _started()
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    elapsed = time.monotonic() - started
    assert proc.returncode == 1, err
    assert 1.4 < elapsed < 5.0, elapsed  # the bound: 0.5 s of drain + 1 s
    assert "SIGTERM: stopping, within 1.5s (--drain-seconds 0.5 + 1)" in err
    assert "the stop did not end within 1.5s (still closing a sink that never answers)" in err


def test_a_second_signal_ends_the_stop_at_once() -> None:
    proc = _started()
    proc.send_signal(signal.SIGTERM)
    time.sleep(0.3)
    started = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 128 + signal.SIGINT, err
    assert time.monotonic() - started < 1.0
    assert "SIGINT again while stopping (closing a sink that never answers): exiting now" in err


def test_within_leaves_a_blocked_call_behind_after_its_share() -> None:
    never = threading.Event()
    started = time.monotonic()
    assert within(0.3, "waiting for nothing", never.wait) is False
    assert 0.3 <= time.monotonic() - started < 1.0
    assert within(1.0, "a quick close", lambda: None) is True
    assert within(1.0, "a failing close", lambda: 1 / 0) is False
    assert share(time.monotonic() + 10, 3.0) == 3.0
    assert 3.5 < share(time.monotonic() + 5, 30.0) <= 4.0  # a margin kept for the steps after
    assert share(time.monotonic() - 1, 3.0) == 0.0
