"""The evaluator's own JVM: is it alive, starting a new one after it died, and ending it when
the producer stops.

PySpark keeps one gateway JVM per Python process in class attributes. When the JVM dies (an
`OutOfMemoryError` ends it: the evaluator runs with -XX:+ExitOnOutOfMemoryError, a crash, a kill),
every later call fails until those attributes are cleared, after which the next SparkSession
starts a new JVM. Only for the session the producer started itself: a job's own session (the
in-driver mode, tests) is never reset.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import threading
import time
from typing import Any

from pyspark import SparkContext
from pyspark.sql import SparkSession

log = logging.getLogger(__name__)


def jvm_alive(spark: SparkSession) -> bool:
    try:
        spark.sparkContext._jvm.java.lang.System.currentTimeMillis()  # type: ignore[union-attr]
    except Exception:
        return False
    return True


def jvm_pid() -> int | None:
    gateway: Any = SparkContext._gateway
    proc = getattr(gateway, "proc", None)
    return int(proc.pid) if proc is not None else None


def jvm_exited() -> bool:
    """Whether the process of PySpark's JVM has ended (asked of the process, not the JVM)."""
    proc = getattr(SparkContext._gateway, "proc", None)
    return proc is not None and proc.poll() is not None


def context_running(spark: SparkSession, timeout: float) -> bool:
    """Whether `spark`'s SparkContext is up, asked on a thread of its own: False when it is
    stopped, the call fails, or no answer comes within `timeout` seconds."""
    answer: list[bool] = []

    def ask() -> None:
        with contextlib.suppress(Exception):
            answer.append(not spark.sparkContext._jsc.sc().isStopped())

    asking = threading.Thread(target=ask, name="lq-jvm-ask", daemon=True)
    asking.start()
    asking.join(timeout)
    return bool(answer and answer[0])


def stop_jvm(spark: SparkSession, timeout: float) -> None:
    """Stop `spark` and end its JVM within `timeout` seconds, whatever state it is in: Spark's
    own stop (on a thread of its own, given half the time: a JVM that hangs never answers),
    then SIGTERM (Spark's shutdown hooks remove its temporary folders), then SIGKILL."""
    proc = getattr(SparkContext._gateway, "proc", None)
    if proc is None or proc.poll() is not None:
        return
    deadline = time.monotonic() + timeout
    stopping = threading.Thread(target=_quietly_stop, args=(spark,), name="lq-jvm-stop")
    stopping.daemon = True
    stopping.start()
    stopping.join(timeout / 2)
    if proc.poll() is None:
        with contextlib.suppress(OSError):
            proc.terminate()
        try:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            log.warning("the evaluator's JVM did not end on SIGTERM: killed")
            with contextlib.suppress(OSError):
                proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=2)


def _quietly_stop(spark: SparkSession) -> None:
    with contextlib.suppress(Exception):  # a dead or dying JVM: the signals below end it
        spark.stop()


def kill_jvm() -> None:
    """End the JVM at once: the only way to stop work that ignores interruption (a regex)."""
    gateway: Any = SparkContext._gateway
    proc = getattr(gateway, "proc", None)
    if proc is None:
        return
    with contextlib.suppress(OSError):
        os.kill(proc.pid, signal.SIGKILL)
    with contextlib.suppress(Exception):
        proc.wait(timeout=10)  # reaped: its memory and core are free now


def forget_dead_jvm() -> None:
    """Clear PySpark's hold on a dead JVM so the next session starts a new one."""
    gateway: Any = SparkContext._gateway
    with contextlib.suppress(Exception):
        gateway.shutdown()
    proc = getattr(gateway, "proc", None)
    if proc is not None:
        with contextlib.suppress(Exception):
            proc.kill()
            proc.wait(timeout=10)
    SparkContext._gateway = None
    SparkContext._jvm = None
    SparkContext._active_spark_context = None
    SparkSession._instantiatedSession = None
    SparkSession._activeSession = None
    log.warning("the evaluator's JVM is gone; the next evaluation starts a new one")
