"""An `Impact` (impact.py) as `impact` prints it: one JSON document and a text table. Pure.

Names, rules and runs come from events: the table is made inert for the terminal by the command
(`inert.inert`); the HTML drawing is impact_html.py.
"""

from __future__ import annotations

from typing import Any

from lineage_quality.lineage.gate import describe, when
from lineage_quality.lineage.impact import Hop, Impact
from lineage_quality.lineage.model import Failure, Mark, Origin, Write, as_json

WHOLE_TEXT = "(whole dataset)"


def columns_text(columns: tuple[str | None, ...]) -> str:
    return WHOLE_TEXT if None in columns else ", ".join(c for c in columns if c is not None)


def _origin(o: Origin) -> dict[str, Any]:
    doc: dict[str, Any] = {"dataset": o.dataset, "rule": o.rule, "run": o.run}
    if o.column is not None:
        doc["column"] = o.column
    if o.version is not None:
        doc["version"] = o.version
    return doc


def _write(w: Write) -> dict[str, Any]:
    return {
        "dataset": w.dataset,
        "run": w.run,
        "eventTime": when(w.event_ms),
        "version": w.version,
        "evaluated": w.evaluated,
        "failures": [as_json(f) for f in w.failures],
        "marks": [as_json(m) for m in w.marks],
    }


def _hop(h: Hop) -> dict[str, Any]:
    return {
        "dataset": h.dataset,
        "run": h.run,
        "job": h.job,
        "eventTime": when(h.event_ms),
        "version": h.version,
        "from": h.source,
        "depth": h.depth,
        "wholeDataset": h.whole,
        "columns": [c for c in h.columns if c is not None],
        "blocking": h.blocking,
    }


def impact_doc(impact: Impact) -> dict[str, Any]:
    """The JSON document: the failing write, its origins, the affected datasets (columns over
    all their runs), each affected write (`runs`) and every dataset written by a run that read
    a walked write, affected or not (`readers`)."""
    return {
        "dataset": impact.start.dataset,
        "write": _write(impact.start),
        "origins": [_origin(o) for o in impact.origins],
        "datasets": [
            {
                "dataset": d,
                "wholeDataset": None in cols,
                "columns": [c for c in cols if c is not None],
            }
            for d, cols in impact.datasets.items()
        ],
        "runs": [_hop(h) for h in impact.hops],
        "readers": list(impact.readers),
        "truncated": impact.truncated,
    }


def headline(w: Write) -> str:
    """The failing write in one line."""
    found: list[Failure | Mark] = [*w.failures, *w.marks]
    items = [describe(x) for x in found]
    why = "; ".join(items[:3]) + (f" (and {len(items) - 3} more)" if len(items) > 3 else "")
    version = f", version {w.version}" if w.version else ""
    state = f"failed: {why}" if items else "healthy"
    return f"{w.dataset}: write of run {w.run} at {when(w.event_ms)}{version} {state}"


def impact_table(impact: Impact) -> str:
    """The text table: one row per affected write, then a summary line."""
    lines = [headline(impact.start)]
    rows = [("DEPTH", "DATASET", "COLUMNS", "RUN", "JOB", "FROM")]
    rows += [
        (str(h.depth), h.dataset, columns_text(h.columns), h.run, h.job, h.source)
        for h in impact.hops
    ]
    if impact.hops:
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
        for r in rows:
            cells = [c.ljust(w) for c, w in zip(r, widths, strict=False)]
            lines.append("  ".join([*cells, r[-1]]))
    affected = len(impact.datasets)
    unaffected = len([d for d in impact.readers if d not in impact.datasets])
    summary = f"{affected} downstream dataset(s) affected"
    if unaffected:
        summary += f"; {unaffected} more read it without an affected column"
    if impact.truncated:
        summary += " (truncated: the walk stopped at its bound)"
    lines.append(summary)
    return "\n".join(lines)
