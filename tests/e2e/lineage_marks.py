"""The `upstreamQuality` marks in forwarded events, per run, for the lineage tests under the
real listener (tests/e2e/test_lineage_e2e.py, tests/deploy/test_lineage_two_serves.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def marked_columns(
    events: list[dict[str, Any]],
    target: Path,
    rule: str,
    severity: str | None = None,
    **params: str,
) -> list[list[str | None]]:
    """For each run that wrote `target`, in event time order: the columns its upstreamQuality
    assertions name (None: the whole dataset). Each one must be a failure naming `rule` and
    carrying `params` as given (and of `severity`, when given)."""
    found: dict[str, set[str | None]] = {}
    for e in sorted(events, key=lambda e: e["eventTime"]):
        for o in e.get("outputs") or []:
            if e["eventType"] != "COMPLETE" or o["name"] != str(target):
                continue
            marks = found.setdefault(e["run"]["runId"], set())
            facet = (o.get("facets") or {}).get("dataQualityAssertions") or {}
            for a in facet.get("assertions", []):
                if a["assertion"] == "upstreamQuality":
                    assert a["success"] is False
                    assert severity is None or a["severity"] == severity, a
                    assert a["params"]["upstreamRule"] == rule
                    for key, value in params.items():
                        assert a["params"][key] == value, (key, a["params"])
                    marks.add(a.get("column"))
    return [sorted(m, key=lambda c: c or "") for m in found.values()]
