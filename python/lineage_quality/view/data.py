"""What the quality view shows, read from the stores as JSON-ready dicts: the one model behind
both the JSON API (`/api/v1/...`) and the HTML pages (`pages.py`), so the two never disagree.

Every read is bounded: the datasets list a page at a time (`LineageStore.latest_page`), a dataset
its latest `MAX_RUNS` writes and `MAX_RULES` rules, a run its `MAX_EDGES` inputs and outputs, the
lineage `MAX_NEIGHBOURS` datasets each way. Names come back as the store keeps them (from
events): whoever shows them makes them inert (`pages.py` through `inert.html_text`).
"""

from __future__ import annotations

import math
import urllib.parse
from typing import Any

import attrs

from lineage_quality.datahub.naming import platform_and_name
from lineage_quality.history.feedback import Feedback
from lineage_quality.history.points import Point
from lineage_quality.history.store import SqlHistory
from lineage_quality.lineage.gate import UNKNOWN as GATE_UNKNOWN
from lineage_quality.lineage.gate import GateVerdict, decide, when
from lineage_quality.lineage.impact import failing_write, walk
from lineage_quality.lineage.model import Write, as_json
from lineage_quality.lineage.store import HEALTH_FILTERS, LineageStore
from lineage_quality.links import marquez_dataset_url, split_dataset

PAGE_SIZE, MAX_PAGE_SIZE = 50, 500
MAX_RUNS = 30  # runs (columns of the grid, points of a chart) a dataset page shows
MAX_RULES = 200
MAX_EDGES = 1000
MAX_NEIGHBOURS = 200
MAX_FEEDBACK = 1000  # the latest records of what users said, on a dataset page
HEALTHS = ("", *HEALTH_FILTERS)


@attrs.frozen
class Links:
    """The tools beside this one, when configured: their web UIs' base URLs."""

    marquez: str | None = None
    datahub: str | None = None


@attrs.frozen
class Stores:
    """The lineage tables and the history of one store (either may be absent: None)."""

    lineage: LineageStore
    history: SqlHistory | None
    links: Links = Links()


def health(write: Write) -> str:
    """`blocked`, `not-evaluated`, `healthy` or `unhealthy` (docs/lineage.md's words)."""
    if write.blockers:
        return "blocked"
    if not write.evaluated:
        return "not-evaluated"
    return "healthy" if write.healthy else "unhealthy"


def write_doc(write: Write) -> dict[str, Any]:
    return {
        "dataset": write.dataset,
        "health": health(write),
        "run": write.run,
        "time": when(write.event_ms),
        "version": write.version,
        "evaluated": write.evaluated,
        "failures": [as_json(f) for f in write.failures],
        "marks": [as_json(m) for m in write.marks],
    }


def datasets(stores: Stores, search: str = "", health_filter: str = "", page: int = 1,
             limit: int = PAGE_SIZE) -> dict[str, Any]:  # fmt: skip
    """One page of the datasets list, by name."""
    limit = max(1, min(limit, MAX_PAGE_SIZE))
    page = max(1, page)
    health_filter = health_filter if health_filter in HEALTHS else ""
    found, total = stores.lineage.latest_page(search, health_filter, limit, (page - 1) * limit)
    return {
        "datasets": [write_doc(w) for w in found],
        "total": total,
        "page": page,
        "pages": max(1, math.ceil(total / limit)),
        "limit": limit,
        "search": search,
        "health": health_filter,
    }


def resolve(stores: Stores, name: str) -> str | None:
    """The dataset `name` means (as `gate --dataset` finds it), None unless exactly one."""
    if stores.lineage.latest(name) is not None:
        return name
    found = stores.lineage.find(name)
    return found[0] if len(found) == 1 else None


def point_doc(p: Point) -> dict[str, Any]:
    """A kept value; a masked column's (`masked`: its masked text) without its number or band,
    which the store keeps raw for the baselines (masked_values.py)."""
    masked = p.shown is not None
    finite = math.isfinite(p.value)
    return {
        "run": p.run_id,
        "time": when(p.event_ms),
        "eventMs": p.event_ms,
        "value": p.value if finite and not masked else None,
        "nonFinite": None if finite or masked else repr(p.value),
        "masked": p.shown,
        "status": p.status,
        "lower": None if masked else p.lower,
        "upper": None if masked else p.upper,
    }


def rule_history(stores: Stores, dataset: str, rule: str, runs: int = MAX_RUNS) -> list[Point]:
    if stores.history is None:
        return []
    return stores.history.series(dataset, rule, limit=max(1, min(runs, 1000)))


def feedback(stores: Stores, dataset: str) -> dict[str, list[Feedback]]:
    """What users said of each rule's history on the dataset (accept, rebaseline), by rule."""
    out: dict[str, list[Feedback]] = {}
    if stores.history is not None:
        for record in stores.history.feedback(dataset)[-MAX_FEEDBACK:]:
            out.setdefault(record.rule_id, []).append(record)
    return out


def dataset(stores: Stores, name: str, runs: int = MAX_RUNS) -> dict[str, Any] | None:
    """A dataset: its latest writes (newest first), every rule's latest values (the grid:
    a rule's value per run, with the band it was held to), the failures of its latest write."""
    key = resolve(stores, name)
    if key is None:
        return None
    writes = stores.lineage.writes(key, limit=runs)
    rules = []
    kept = stores.history.rules(key)[:MAX_RULES] if stores.history is not None else []
    said = feedback(stores, key)
    for rule_id, metric, count in kept:
        points = rule_history(stores, key, rule_id, runs)
        rules.append({"rule": rule_id, "metric": metric, "points": count,
                      "history": [point_doc(p) for p in points],
                      "feedback": [r.describe() for r in said.get(rule_id, ())]})  # fmt: skip
    latest = writes[0] if writes else None
    return {
        "dataset": key,
        "latest": None if latest is None else write_doc(latest),
        "writes": [write_doc(w) for w in writes],
        "rules": rules,
        "links": _links(stores.links, key),
    }


def run(stores: Stores, run_id: str) -> dict[str, Any] | None:
    """A run: what it read and wrote, each output with its write's health and every value the
    run kept (the assertions), and the failing-row samples of its failed rules (masked as they
    were taken: lineage_quality.samples)."""
    edges = stores.lineage.edges_of_run(run_id, MAX_EDGES)
    if not edges:
        return None
    writes = {w.dataset: w for w in stores.lineage.writes_of_run(run_id, MAX_EDGES)}
    sides: dict[str, list[dict[str, Any]]] = {"read": [], "wrote": []}
    for edge in edges:
        entry: dict[str, Any] = {"dataset": edge.dataset, "version": edge.version}
        write = writes.get(edge.dataset) if edge.role == "outputs" else None
        if write is not None:
            entry["write"] = write_doc(write)
        if stores.history is not None:
            entry["assertions"] = [
                {"rule": r, "metric": m, **point_doc(p)}
                for r, m, p in stores.history.of_run(edge.dataset, run_id)
            ]
        entry["samples"] = []
        if stores.history is not None:
            kept = stores.history.samples_of_run(edge.dataset, run_id)
            entry["samples"] = [{"rule": r, **kept[r].to_json()} for r in sorted(kept)]
        sides["wrote" if edge.role == "outputs" else "read"].append(entry)
    return {"run": run_id, "job": edges[0].job, "time": when(edges[0].event_ms), **sides}


def _neighbour(stores: Stores, name: str, via_run: str, job: str) -> dict[str, Any]:
    write = stores.lineage.latest(name)
    marked = sorted({m.column or "*" for m in write.marks}) if write is not None else []
    shown = None if write is None else health(write)
    return {"dataset": name, "run": via_run, "job": job, "health": shown, "markedColumns": marked}


def lineage(stores: Stores, name: str) -> dict[str, Any] | None:
    """Upstream (what the run of its latest write read) and downstream (what the runs that
    read it wrote) of a dataset, each with its health and marked columns; and, when its latest
    failing write spread, what `impact` finds from it."""
    key = resolve(stores, name)
    if key is None:
        return None
    latest = stores.lineage.latest(key)
    assert latest is not None  # resolve found it
    upstream = [
        _neighbour(stores, e.dataset, latest.run, e.job)
        for e in stores.lineage.edges_of_run(latest.run, MAX_EDGES)
        if e.role == "inputs"
    ][:MAX_NEIGHBOURS]
    downstream: dict[str, dict[str, Any]] = {}
    for reader in stores.lineage.readers(key, 0, MAX_NEIGHBOURS * 5)[::-1]:  # newest first
        for out in stores.lineage.writes_of_run(reader.run, MAX_NEIGHBOURS):
            if out.dataset != key and out.dataset not in downstream:
                downstream[out.dataset] = _neighbour(stores, out.dataset, reader.run, reader.job)
        if len(downstream) >= MAX_NEIGHBOURS:
            break
    start = failing_write(stores.lineage.writes(key, limit=MAX_RUNS))
    impact = None
    if start is not None:
        walked = walk(start, stores.lineage)
        impact = {
            "from": write_doc(start),
            "affected": [
                {"dataset": d, "columns": [c or "*" for c in cols]}
                for d, cols in walked.datasets.items()
            ],
            "truncated": walked.truncated,
        }
    return {"dataset": key, "health": health(latest), "upstream": upstream,
            "downstream": list(downstream.values()), "impact": impact}  # fmt: skip


def gate(stores: Stores, name: str) -> GateVerdict:
    """Exactly what `gate --dataset NAME` decides from the store (lineage/gate.py)."""
    found = stores.lineage.find(name)
    if len(found) > 1:
        return GateVerdict(
            GATE_UNKNOWN,
            f"{name}: cannot tell: it names {len(found)} datasets ({', '.join(found)}); "
            "give namespace:name",
            {"dataset": name, "status": "ambiguous", "exit": GATE_UNKNOWN, "candidates": found},
        )
    key = found[0] if found else name
    return decide(key, stores.lineage.latest(key) if found else None)


def _links(links: Links, dataset: str) -> dict[str, str]:
    """The dataset's pages in Marquez and DataHub, when their URLs are configured."""
    out = {}
    namespace, name = split_dataset(dataset)
    if links.marquez and namespace:
        out["marquez"] = marquez_dataset_url(links.marquez, namespace, name)
    if links.datahub and namespace:
        out["datahub"] = datahub_dataset_url(links.datahub, namespace, name)
    return out


def datahub_dataset_url(web_url: str, namespace: str, name: str, env: str = "PROD") -> str:
    """The dataset's page in the DataHub web UI (`/dataset/<urn>`, the URN URI-encoded), its
    platform and name as the DataHub output names them (datahub/naming.py)."""
    platform, path = platform_and_name(namespace, name) or (namespace, name)
    urn = f"urn:li:dataset:(urn:li:dataPlatform:{platform},{path},{env})"
    return f"{web_url.rstrip('/')}/dataset/{urllib.parse.quote(urn, safe='')}"
