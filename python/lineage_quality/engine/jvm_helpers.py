"""The engine's JVM helpers (jvm-config/src, built into lineage-quality-engine.jar by `make jars`).

A helper is used only when the jar is part of the session's `spark.jars`, so executors have it
too, not just the driver; without it each caller runs its plain-Spark path, with the same
result. `LINEAGE_QUALITY_<NAME>=0` (e.g. `LINEAGE_QUALITY_PATTERN_DFA=0`) turns one helper off,
to compare timings."""

from __future__ import annotations

import logging
import os
from typing import Any

from pyspark import SparkContext

log = logging.getLogger(__name__)

ENGINE_JAR_NAME = "lineage-quality-engine.jar"

_found: dict[tuple[int, str], Any] = {}  # (id of the SparkContext, class) -> class, or None


def jvm_helper(class_name: str, switch: str) -> Any:
    """The JavaClass `lineagequality.<class_name>`, or None when it cannot be used here."""
    if os.environ.get(f"LINEAGE_QUALITY_{switch}", "1") == "0":
        return None
    sc = SparkContext._active_spark_context
    if sc is None:
        return None
    key = (id(sc), class_name)
    if key not in _found:
        if any(k[0] != id(sc) for k in _found):
            _found.clear()  # one live context at a time
        helper = None
        if ENGINE_JAR_NAME in (sc.getConf().get("spark.jars") or ""):
            from py4j.java_gateway import JavaClass

            jvm: Any = sc._jvm
            if not any(k[0] == id(sc) for k in _found):
                _py4j_no_delay(sc)
            found = getattr(jvm.lineagequality, class_name, None)
            helper = found if isinstance(found, JavaClass) else None
        _found[key] = helper
    return _found[key]


def _py4j_no_delay(sc: SparkContext) -> None:
    """TCP_NODELAY on py4j's sockets (JVM helper `lineagequality.Py4jSockets`): without it every
    py4j answer past 8 KiB (a wide table's schema, a long file listing) waits ~40 ms on Nagle's
    algorithm. Once per SparkContext; `LINEAGE_QUALITY_PY4J_NODELAY=0` leaves the sockets as
    py4j set them, to compare timings."""
    if os.environ.get("LINEAGE_QUALITY_PY4J_NODELAY", "1") == "0":
        return
    try:
        jvm: Any = sc._jvm
        gateway: Any = sc._gateway
        jvm.lineagequality.Py4jSockets.noDelay(gateway.java_gateway_server)
    except Exception as exc:  # an older engine jar, another gateway: only slower
        log.debug("py4j sockets left as they are: %s", exc)
