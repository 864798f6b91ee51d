"""The driver's peak memory since the last reset, read in a bench worker (bench/worker.py's
`memory` op): the JVM's and the Python process's.

- `jvm_rss_peak`: the driver JVM's peak resident set (VmHWM of /proc/<pid>/status): heap,
  metaspace, code, direct buffers, all that the kernel had to back at once.
- `jvm_heap_peak`: the sum of each heap pool's peak usage (MemoryPoolMXBean.getPeakUsage; G1's
  eden, survivor and old generation). The pools peak at different moments, so this is an upper
  bound of the heap in use at once.
- `python_rss_peak`: the worker's own Python process (VmHWM), the driver's other half.

A reset zeroes the pools' peaks and the kernel's high-water marks (`5` to
/proc/<pid>/clear_refs, Linux 4.0 on): figures per benchmark case, not since start-up. Where
the kernel refuses, `reset_ok` says so and the marks are those since the process started.
"""

from __future__ import annotations

import os
from typing import Any


def _hwm(pid: int) -> int | None:
    """VmHWM of a process, bytes."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _clear(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return False
    return True


def _heap_pools(spark: Any) -> list[Any]:
    jvm = spark.sparkContext._jvm
    pools = jvm.java.lang.management.ManagementFactory.getMemoryPoolMXBeans()
    return [p for p in pools if p.getType().name() == "HEAP"]


def _jvm_pid(spark: Any) -> int:
    return int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())


def reset(spark: Any) -> dict[str, Any]:
    """Start a new measurement: pools' peaks and both processes' high-water marks."""
    for pool in _heap_pools(spark):
        pool.resetPeakUsage()
    ok = _clear(_jvm_pid(spark)) and _clear(os.getpid())
    return {"reset_ok": ok}


def peaks(spark: Any) -> dict[str, Any]:
    """Peaks since the last reset, bytes."""
    heap = sum(int(p.getPeakUsage().getUsed()) for p in _heap_pools(spark))
    return {
        "jvm_rss_peak": _hwm(_jvm_pid(spark)),
        "jvm_heap_peak": heap,
        "python_rss_peak": _hwm(os.getpid()),
    }
