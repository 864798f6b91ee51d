"""The evaluator's own JVM: is it alive, and starting a new one after it died.

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
