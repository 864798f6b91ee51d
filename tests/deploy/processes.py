"""Process plumbing shared by the deployment-test servers: free ports, a server process that is
started in its own process group and stopped with everything it spawned, a bounded wait that
fails with the tail of the server's log, and a runner for Spark drivers in subprocesses.

Test support only: nothing here ships in the runtime package.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyspark

REPO_ROOT = Path(__file__).resolve().parents[2]
PYSPARK_HOME = Path(pyspark.__file__).resolve().parent
# The interpreter running the tests is the one with pyspark and lineage_quality installed; Spark
# executors must run it too, or they would import a different (or no) pyspark.
PYTHON = sys.executable

STOP_GRACE_S = 20.0
DRIVER_TIMEOUT_S = 300.0  # one tiny Spark application; generous because the host is shared

# How a JVM says that a port was taken between free_port() and its bind: worth a retry.
BIND_FAILURES = (
    "Address already in use",  # java.net.BindException (Spark, Jetty)
    "Could not create ServerSocket",  # Thrift (Hive metastore)
    "Failed to bind",  # s3proxy
)


class ServerStartError(RuntimeError):
    """A server did not come up; the message says why and carries the tail of its log."""


def free_port() -> int:
    """Ask the kernel for an unused 127.0.0.1 port (closed again before the server binds it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def tail(path: Path, lines: int = 40) -> str:
    """The last ``lines`` lines of a log file, or a note that there is none."""
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return f"(no log at {path})"


def port_was_taken(*logs: Path) -> bool:
    """True when one of ``logs`` says a port was already in use: a start worth retrying on
    fresh ports (another process took ours between ``free_port`` and the server's bind)."""
    return any(marker in tail(log, 400) for log in logs for marker in BIND_FAILURES)


def spark_env(**extra: str) -> dict[str, str]:
    """The environment for Spark daemons and drivers started by these tests.

    ``SPARK_HOME`` is PySpark's own distribution (it has ``bin/`` and ``jars/``). The host name
    of this machine may resolve to a non-loopback address; ``SPARK_LOCAL_IP`` keeps every
    Spark JVM (and its web UI) on 127.0.0.1. ``PYSPARK_PYTHON`` makes executors run this venv.
    """
    env = {
        **os.environ,
        "SPARK_HOME": str(PYSPARK_HOME),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "PYSPARK_PYTHON": PYTHON,
        "PYSPARK_DRIVER_PYTHON": PYTHON,
    }
    # Submit arguments of the outer test session must not leak into the drivers started here.
    env.pop("PYSPARK_SUBMIT_ARGS", None)
    env.update(extra)
    return env


@dataclass
class ServerProcess:
    """One server process, the leader of its own process group.

    Its own group (``start_new_session``) lets ``stop`` reach what it spawned too: a Spark
    Worker's executors are child JVMs in the Worker's group, and must not outlive the tests.
    """

    name: str
    process: subprocess.Popen[bytes]
    log_path: Path
    _stopped: bool = field(default=False, repr=False)

    @classmethod
    def start(
        cls,
        name: str,
        argv: Sequence[str],
        *,
        log_path: Path,
        cwd: Path,
        env: Mapping[str, str] | None = None,
    ) -> ServerProcess:
        log_path.parent.mkdir(parents=True, exist_ok=True)
        with log_path.open("ab") as log:
            process = subprocess.Popen(
                list(argv),
                cwd=cwd,
                env=dict(env) if env is not None else None,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        return cls(name=name, process=process, log_path=log_path)

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None

    def log_tail(self, lines: int = 40) -> str:
        return tail(self.log_path, lines)

    def stop(self) -> None:
        """SIGTERM to the group, wait, then SIGKILL to whatever of the group is left."""
        if self._stopped:
            return
        self._stopped = True
        _signal_group(self.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=STOP_GRACE_S)
        # Children (executors) may outlive a leader that exited on SIGTERM: kill the group.
        _signal_group(self.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=10)
        # A JVM left running would hold ports and cores for the rest of the machine's work:
        # say so loudly (a teardown error) rather than leave it behind unnoticed.
        deadline = time.monotonic() + 10
        while (left := group_members(self.pid)) and time.monotonic() < deadline:
            time.sleep(0.2)
        if left:
            raise RuntimeError(
                f"{self.name}: processes {left} of group {self.pid} survived SIGKILL"
            )

    def wait_until(
        self, ready: Callable[[], bool], *, timeout: float, what: str, interval: float = 0.25
    ) -> float:
        """Poll ``ready`` until it is true; return the seconds it took.

        Raises ``ServerStartError`` (after stopping the process) when the process exits first or
        ``timeout`` passes; the message has the tail of the log.
        """
        started = time.monotonic()
        deadline = started + timeout
        while True:
            if ready():
                return time.monotonic() - started
            if not self.alive():
                raise ServerStartError(
                    f"{self.name} exited with {self.process.returncode} before {what}; "
                    f"log {self.log_path}:\n{self.log_tail()}"
                )
            if time.monotonic() > deadline:
                self.stop()
                raise ServerStartError(
                    f"{self.name}: no {what} after {timeout:.0f}s; "
                    f"log {self.log_path}:\n{self.log_tail()}"
                )
            time.sleep(interval)


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def group_members(pgid: int) -> list[int]:
    """Live pids in process group ``pgid`` (for checking that nothing was left behind).

    Zombies do not count: they hold no memory or ports, and whether they are reaped depends on
    the machine's init, not on us.
    """
    result = subprocess.run(
        ["ps", "-e", "-o", "pid=,pgid=,stat="], capture_output=True, text=True, check=True
    )
    members = []
    for line in result.stdout.splitlines():
        pid, group, stat = line.split()[:3]
        if int(group) == pgid and not stat.startswith("Z"):
            members.append(int(pid))
    return members


# ------------------------------------------------------------------- Spark drivers in subprocesses


@dataclass(frozen=True)
class DriverRun:
    """What a driver subprocess did: its exit code, output, and the ``RESULT`` it printed."""

    returncode: int
    stdout: str
    stderr: str
    result: Any

    def describe(self) -> str:
        return (
            f"exit {self.returncode}\n--- stdout (tail) ---\n{self.stdout[-3000:]}"
            f"\n--- stderr (tail) ---\n{self.stderr[-6000:]}"
        )


RESULT_PREFIX = "RESULT "


def run_driver(
    script: Path,
    *args: str,
    conf: Mapping[str, str] | None = None,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    timeout: float = DRIVER_TIMEOUT_S,
) -> DriverRun:
    """Run ``python script [--conf-json JSON] args...`` as a Spark driver in its own process.

    A subprocess, because the test session already holds a local SparkContext (one per JVM).
    Its own process group, so a timeout kills the driver's JVM too, not just the Python side.
    The script reports by printing one ``RESULT <json>`` line; that JSON is ``.result``.
    """
    argv = [PYTHON, str(script)]
    if conf is not None:
        argv += ["--conf-json", json.dumps(dict(conf))]
    argv += list(args)
    process = subprocess.Popen(
        argv,
        cwd=cwd,
        env=dict(env) if env is not None else spark_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _signal_group(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        stderr += f"\n(killed after {timeout:.0f}s)"
    finally:
        _signal_group(process.pid, signal.SIGKILL)  # a JVM the driver left behind
    result = None
    for line in stdout.splitlines():
        if line.startswith(RESULT_PREFIX):
            result = json.loads(line[len(RESULT_PREFIX) :])
    return DriverRun(process.returncode, stdout, stderr, result)
