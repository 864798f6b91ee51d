"""`gate --dataset`'s decision on a dataset's latest write (issue 39). Pure.

Exit 0: the latest write was evaluated and nothing blocks it: `healthy` when no rule failed and
no mark came (docs/lineage.md's definition), `unhealthy` when non-blocking failures (an ERROR
too) or marks are there, named on the line (not blocking is not healthy); 1: a BLOCK rule
failed on it, or it was marked by a failure upstream under the `block` policy; 2: the dataset
was never written as far as the store knows (or its writes expired), or its latest write was not
evaluated (yet).
"""

from __future__ import annotations

import datetime
from typing import Any

import attrs

from lineage_quality.lineage.model import Failure, Mark, Write, as_json

HEALTHY, BLOCKED, UNKNOWN = 0, 1, 2


@attrs.frozen
class GateVerdict:
    code: int
    line: str
    doc: dict[str, Any]


def describe(item: Failure | Mark) -> str:
    """One failure or mark, for the gate's line."""
    if isinstance(item, Failure):
        where = f" on {item.column}" if item.column else ""
        return f"rule {item.rule}{where} {item.status} ({item.action})"
    o = item.origin
    column = f".{o.column}" if o.column else ""
    version = f" version {o.version}" if o.version else ""
    on = f" on {item.column}" if item.column else ""
    return f"marked{on}: upstream {o.dataset}{column} rule {o.rule} failed in run {o.run}{version}"


def when(ms: int) -> str:
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.UTC).isoformat(timespec="seconds")


def decide(name: str, write: Write | None) -> GateVerdict:
    """The gate's answer for `name`, whose latest known write is `write`."""
    if write is None:
        return GateVerdict(
            UNKNOWN,
            f"{name}: never evaluated (no write of it is known)",
            {"dataset": name, "status": "unknown", "exit": UNKNOWN},
        )
    version = f", version {write.version}" if write.version else ""
    which = f"write of run {write.run} at {when(write.event_ms)}{version}"
    doc: dict[str, Any] = {
        "dataset": write.dataset,
        "write": {
            "run": write.run,
            "eventTime": when(write.event_ms),
            "version": write.version,
            "evaluated": write.evaluated,
        },
        "failures": [as_json(f) for f in write.failures],
        "marks": [as_json(m) for m in write.marks],
    }
    blocking = write.blockers
    if blocking:
        more = f" (and {len(blocking) - 1} more)" if len(blocking) > 1 else ""
        line = f"{write.dataset}: BLOCK: {describe(blocking[0])}{more} [{which}]"
        return GateVerdict(BLOCKED, line, {**doc, "status": "blocked", "exit": BLOCKED})
    items: list[Failure | Mark] = [*write.failures, *write.marks]
    notes = [describe(x) for x in items]
    noted = f"; not blocking: {'; '.join(notes[:3])}" if notes else ""
    if len(notes) > 3:
        noted += f" (and {len(notes) - 3} more)"
    if not write.evaluated:
        line = f"{write.dataset}: latest write not evaluated [{which}]{noted}"
        return GateVerdict(UNKNOWN, line, {**doc, "status": "not-evaluated", "exit": UNKNOWN})
    if write.healthy:
        line = f"{write.dataset}: healthy [{which}]"
        return GateVerdict(HEALTHY, line, {**doc, "status": "healthy", "exit": HEALTHY})
    line = f"{write.dataset}: unhealthy, not blocking [{which}]{noted}"
    return GateVerdict(HEALTHY, line, {**doc, "status": "unhealthy", "exit": HEALTHY})
