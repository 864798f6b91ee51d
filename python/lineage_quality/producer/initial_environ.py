"""Overwriting secrets in the copy Linux keeps of the environment a process started with.

Removing a variable from `os.environ` (`unsetenv`) keeps it out of every process started
afterwards, but not out of `/proc/PID/environ`: the kernel reads that file from the memory the
environment was first written to (between the `env_start` and `env_end` of `/proc/PID/stat`),
which `unsetenv` never touches. Every process of the same user can read it -- the evaluator's
JVM among them, which runs contract SQL: `serve`'s PGPASSWORD stayed one file read away from it.
So, once a secret is read and removed, its `NAME=VALUE` is overwritten with zero bytes there.

The bytes are written only when the block read through `/proc/self/environ` is the one at those
addresses, byte for byte; elsewhere (not Linux, a kernel without those fields) nothing is done.
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Collection
from pathlib import Path


def wipe_initial_environment(names: Collection[str]) -> list[str]:
    """Overwrite `NAME=VALUE` of each of `names` in this process's initial environment (see the
    module docstring); the names overwritten."""
    if not names or not sys.platform.startswith("linux"):
        return []
    block_range = _block_range()
    if block_range is None:
        return []
    start, end = block_range
    try:
        block = Path("/proc/self/environ").read_bytes()
    except OSError:
        return []
    if len(block) != end - start or ctypes.string_at(start, end - start) != block:
        return []  # not the memory /proc reads: write nothing
    prefixes = tuple(os.fsencode(name) + b"=" for name in names)
    wiped: list[str] = []
    offset = 0
    for entry in block.split(b"\0"):
        if entry.startswith(prefixes):
            ctypes.memset(start + offset, 0, len(entry))
            wiped.append(os.fsdecode(entry.partition(b"=")[0]))
        offset += len(entry) + 1
    return wiped


def _block_range() -> tuple[int, int] | None:
    """(env_start, env_end) of this process: fields 50 and 51 of /proc/self/stat."""
    try:
        stat = Path("/proc/self/stat").read_bytes()
        fields = stat[stat.rindex(b")") + 2 :].split()  # from field 3 (the state) on
        start, end = int(fields[47]), int(fields[48])
    except (OSError, ValueError, IndexError):
        return None
    return (start, end) if 0 < start < end else None
