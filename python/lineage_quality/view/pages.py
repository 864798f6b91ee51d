"""The quality view's HTML pages, rendered on the server from `data.py`'s dicts: no script, no
external asset, one same-origin stylesheet (`STYLE`, served at `/view.css`).

Every text that reaches markup came from an event, a contract or another producer sharing the
store: each one, text and attribute alike, goes through `inert.html_text` (controls written
visibly, then HTML-escaped); a path segment of a link is `urllib.parse.quote`d first (no `/`, no
`:`, so no `javascript:` URL can be made), and a link out goes only to an http(s) base URL that
was configured, never one from an event.
"""

from __future__ import annotations

import math
import urllib.parse
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from lineage_quality.history import chart
from lineage_quality.history.feedback import Feedback
from lineage_quality.history.points import Point
from lineage_quality.inert import html_text

STYLE = """body{font-family:system-ui,sans-serif;margin:0;color:#1d2433;background:#f7f8fa}
header{background:#1d2433;color:#fff;padding:.6em 1.2em}header a{color:#fff;font-weight:bold}
main{padding:1em 1.2em}a{color:#1a56db;text-decoration:none}a:hover{text-decoration:underline}
table{border-collapse:collapse;background:#fff;margin:.5em 0 1.2em}
th,td{border:1px solid #dde1e7;padding:.3em .6em;text-align:left;vertical-align:top}
th{background:#eef1f5}.badge{border-radius:.8em;padding:.1em .6em;font-size:.85em;
white-space:nowrap}.time{white-space:nowrap}
.healthy,.PASSED{background:#dcfce7}.unhealthy,.FAILED,.ERROR{background:#fee2e2}
.blocked{background:#b42318;color:#fff}.not-evaluated,.SKIPPED{background:#fef3c7}
.grid td{text-align:center;font-size:.85em;min-width:3.5em}.muted{color:#6b7280}
form{margin:.5em 0}input,select,button{font-size:1em;padding:.2em .4em}
.lineage{display:flex;gap:2em;align-items:flex-start}.lineage section{flex:1}
svg{background:#fff;max-width:100%;height:auto}
"""


def e(value: object) -> str:
    """`value` as inert HTML text (or quoted attribute value)."""
    return html_text("" if value is None else str(value))


def path(*parts: str) -> str:
    """A same-origin link: each part URI-encoded whole (no `/` or `:` left in it)."""
    return "/" + "/".join(urllib.parse.quote(p, safe="") for p in parts)


def link(href: str, label: object, cls: str = "") -> str:
    klass = f' class="{e(cls)}"' if cls else ""
    return f'<a href="{e(href)}"{klass}>{e(label)}</a>'


def external(url: str | None, label: str) -> str:
    """A link out to a configured tool, only to an http(s) URL."""
    if not url or urllib.parse.urlsplit(url).scheme not in ("http", "https"):
        return ""
    return f'<a href="{e(url)}" rel="noreferrer">{e(label)}</a>'


def when(iso: str) -> str:
    """An ISO time (UTC) as shown: `2026-11-27 21:56:15Z`."""
    return e(iso.replace("T", " ").replace("+00:00", "Z"))


def badge(status: object) -> str:
    return f'<span class="badge {e(status)}">{e(status)}</span>'


def layout(title: str, body: str) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<title>{e(title)} - lineage-quality</title><link rel="stylesheet" href="/view.css">'
        f"</head><body><header>{link('/', 'lineage-quality')} quality view</header>"
        f"<main>{body}</main></body></html>\n"
    )


def _failures(items: Sequence[Mapping[str, Any]]) -> str:
    return ", ".join(
        f"{e(f['rule'])}{' on ' + e(f['column']) if f.get('column') else ''} "
        f"({e(f['status'])}, {e(f['action'])})"
        for f in items
    )


def _marks(items: Sequence[Mapping[str, Any]]) -> str:
    return ", ".join(
        f"{e(m.get('column') or '*')} from {e(m['origin'].get('dataset'))} "
        f"rule {e(m['origin'].get('rule'))}{' (blocking)' if m.get('blocking') else ''}"
        for m in items
    )


def datasets_page(doc: Mapping[str, Any]) -> str:
    """The datasets list: search, health filter, one page, links to the next."""
    options = "".join(
        f'<option value="{e(h)}"{" selected" if h == doc["health"] else ""}>{e(h or "any")}'
        "</option>"
        for h in ("", "unhealthy", "blocking", "healthy", "not-evaluated")
    )
    rows = "".join(
        f'<tr class="dataset"><td>{link(path("datasets", d["dataset"]), d["dataset"])}</td>'
        f"<td>{badge(d['health'])}</td><td>{_failures(d['failures'])}</td>"
        f"<td>{_marks(d['marks'])}</td><td class='time'>{when(d['time'])}</td>"
        f"<td>{link(path('runs', d['run']), d['run'])}</td>"
        f"<td>{link(path('lineage', d['dataset']), 'lineage')}</td></tr>"
        for d in doc["datasets"]
    )
    nav = []
    for label, page in (("previous", doc["page"] - 1), ("next", doc["page"] + 1)):
        if 1 <= page <= doc["pages"]:
            query = urllib.parse.urlencode(
                {"q": doc["search"], "health": doc["health"], "page": page}
            )
            nav.append(link(f"/?{query}", label))
    body = (
        f"<h1>Datasets ({doc['total']})</h1>"
        '<form method="get" action="/"><input type="search" name="q" placeholder="search" '
        f'value="{e(doc["search"])}"> <select name="health">{options}</select> '
        '<button type="submit">filter</button></form>'
        "<table><thead><tr><th>dataset</th><th>health</th><th>failing rules</th>"
        "<th>marks from upstream</th><th>latest write</th><th>run</th><th></th></tr></thead>"
        f"<tbody>{rows}</tbody></table>"
        f"<p>page {doc['page']} of {doc['pages']} {' '.join(nav)}</p>"
    )
    return layout("Datasets", body)


def _point(doc: Mapping[str, Any]) -> Point:
    value = doc["value"] if doc["value"] is not None else float(doc["nonFinite"] or "nan")
    found = Point(doc["run"], doc["eventMs"], value, doc["status"], doc["lower"], doc["upper"])
    # a masked column's value: its text alone (the NaN above is never shown)
    return attrs.evolve(found, shown=doc.get("masked"))


def _number(value: float | None) -> str:
    return "" if value is None else (f"{value:.6g}" if math.isfinite(value) else repr(value))


def expected(doc: Mapping[str, Any]) -> str:
    low, high = doc.get("lower"), doc.get("upper")
    if low is None and high is None:
        return ""
    return f"[{_number(low) or '-inf'}, {_number(high) or 'inf'}]"


def actual(doc: Mapping[str, Any]) -> str:
    return doc.get("masked") or doc["nonFinite"] or _number(doc["value"])


def dataset_page(
    doc: Mapping[str, Any],
    points: Mapping[str, Sequence[Point]],
    said: Mapping[str, Sequence[Feedback]] | None = None,
) -> str:
    """A dataset: its health, links out, the rules x runs grid, each rule's chart (with what
    users said: accepted points, rebaselines) and its feedback listed."""
    said = said or {}
    name = doc["dataset"]
    latest = doc["latest"] or {"run": "", "time": "", "health": "unknown", "failures": ()}
    outs = " ".join(external(url, f"open in {tool.title()}")
                    for tool, url in doc["links"].items())  # fmt: skip
    runs = [w["run"] for w in doc["writes"]][::-1]  # oldest first, as the charts
    head = "".join(f"<th>{link(path('runs', r), r[:8])}</th>" for r in runs)
    grid = []
    for rule in doc["rules"]:
        by_run = {p["run"]: p for p in rule["history"]}
        cells = []
        for r in runs:
            p = by_run.get(r)
            if p is None:
                cells.append('<td class="muted">-</td>')
                continue
            tip = f"{p['status']}: actual {actual(p)}, expected {expected(p) or 'n/a'}"
            cells.append(f'<td class="{e(p["status"])}" title="{e(tip)}">{e(actual(p))}</td>')
        grid.append(f'<tr class="rule"><th>{e(rule["rule"])}</th>{"".join(cells)}</tr>')
    failing = "".join(
        f"<tr><td>{e(f['rule'])}</td><td>{e(f.get('column') or '')}</td>"
        f"<td>{badge(f['status'])}</td><td>{e(f['action'])}</td></tr>"
        for f in latest.get("failures", ())
    )
    charts = "".join(
        f'<h3>{e(rule["rule"])} <span class="muted">({e(rule["metric"])}, '
        f"{rule['points']} values kept)</span></h3>"
        + _history_table(rule["history"])
        + chart.svg(rule["rule"], points.get(rule["rule"], ()), said.get(rule["rule"], ()))
        + _said(rule.get("feedback", ()))
        for rule in doc["rules"]
    )
    body = (
        f"<h1>{e(name)}</h1><p>{badge(latest['health'])} latest write by run "
        f"{link(path('runs', latest['run']), latest['run'])} at "
        f"{when(latest['time'])} {link(path('lineage', name), 'lineage')} {outs}</p>"
        "<h2>Failing on the latest write</h2>"
        + _failing_table(failing)
        + (f"<p>Marks from upstream: {_marks(latest['marks'])}</p>" if latest.get("marks") else "")
        + f'<h2>Rules x runs</h2><table class="grid"><tr><th>rule</th>{head}</tr>'
        + "".join(grid)
        + "</table><h2>History</h2>"
        + charts
    )
    return layout(name, body)


def _said(records: Sequence[str]) -> str:
    if not records:
        return ""
    return '<ul class="feedback">' + "".join(f"<li>{e(r)}</li>" for r in records) + "</ul>"


def _failing_table(rows: str) -> str:
    if not rows:
        return "<p>none</p>"
    return (
        f"<table><tr><th>rule</th><th>column</th><th>status</th><th>action</th></tr>{rows}</table>"
    )


def _history_table(history: Sequence[Mapping[str, Any]]) -> str:
    rows = "".join(
        f"<tr><td>{link(path('runs', p['run']), p['run'])}</td>"
        f"<td class='time'>{when(p['time'])}</td>"
        f"<td>{badge(p['status'])}</td><td>{e(actual(p))}</td><td>{e(expected(p))}</td></tr>"
        for p in history[::-1][:10]
    )
    return ("<table><tr><th>run</th><th>time</th><th>status</th><th>actual</th>"
            f"<th>expected</th></tr>{rows}</table>")  # fmt: skip


def _side(entries: Sequence[Mapping[str, Any]]) -> str:
    parts = []
    for d in entries:
        write = d.get("write")
        state = f" {badge(write['health'])} {_failures(write['failures'])}" if write else ""
        rows = "".join(
            f"<tr><td>{e(a['rule'])}</td><td>{e(a['metric'])}</td><td>{badge(a['status'])}</td>"
            f"<td>{e(actual(a))}</td><td>{e(expected(a))}</td></tr>"
            for a in d.get("assertions", ())
        )
        table = (f"<table><tr><th>rule</th><th>metric</th><th>status</th><th>actual</th>"
                 f"<th>expected</th></tr>{rows}</table>" if rows else "")  # fmt: skip
        samples = "".join(_samples(s) for s in d["samples"])
        parts.append(
            f'<div class="side"><h3>{link(path("datasets", d["dataset"]), d["dataset"])}'
            f"{' version ' + e(d['version']) if d.get('version') else ''}</h3>"
            f"<p>{link(path('lineage', d['dataset']), 'lineage')}{state}</p>{table}{samples}</div>"
        )
    return "".join(parts) or "<p>none</p>"


def _samples(doc: Mapping[str, Any]) -> str:
    """One failed rule's samples (values already masked, each through `e`)."""
    columns = list(doc.get("columns") or ())
    head = "".join(f"<th>{e(c)}</th>" for c in columns)
    rows = "".join(
        "<tr>" + "".join(f"<td>{e(r.get(c) if r.get(c) is not None else 'null')}</td>"
                         for c in columns) + "</tr>"
        for r in doc.get("rows") or ()
    )  # fmt: skip
    masked = f" (masked: {e(', '.join(doc['masked']))})" if doc.get("masked") else ""
    error = f"<p>{e(doc['error'])}</p>" if doc.get("error") else ""
    return (f'<div class="samples"><p><b>failing rows of {e(doc["rule"])}</b>{masked}</p>{error}'
            f"<table><tr>{head}</tr>{rows}</table></div>")  # fmt: skip


def run_page(doc: Mapping[str, Any]) -> str:
    body = (
        f"<h1>Run {e(doc['run'])}</h1><p>job {e(doc['job'])}, completed {when(doc['time'])}"
        f"</p><h2>Outputs</h2>{_side(doc['wrote'])}<h2>Inputs</h2>{_side(doc['read'])}"
    )
    return layout(f"run {doc['run']}", body)


def _neighbours(items: Sequence[Mapping[str, Any]]) -> str:
    rows = "".join(
        f'<li class="neighbour">{link(path("lineage", n["dataset"]), n["dataset"])} '
        f"{badge(n['health'] or 'unknown')}"
        f"{' marked: ' + e(', '.join(n['markedColumns'])) if n['markedColumns'] else ''}"
        f' <span class="muted">({e(n["job"])}, run '
        f"{link(path('runs', n['run']), n['run'][:8])})</span></li>"
        for n in items
    )
    return f"<ul>{rows}</ul>" if rows else "<p>none known</p>"


def lineage_page(doc: Mapping[str, Any]) -> str:
    name = doc["dataset"]
    impact = doc.get("impact")
    spread = ""
    if impact:
        items = "".join(
            f"<li>{link(path('lineage', a['dataset']), a['dataset'])}: "
            f"{e(', '.join(a['columns']))}</li>"
            for a in impact["affected"]
        )
        spread = (
            f"<h2>Impact of its failing write (run {e(impact['from']['run'])})</h2>"
            f"<ul>{items}</ul>" + ("<p>truncated at its bound</p>" if impact["truncated"] else "")
        )
    body = (
        f"<h1>Lineage of {link(path('datasets', name), name)}</h1><p>{badge(doc['health'])}</p>"
        f'<div class="lineage"><section><h2>Upstream</h2>{_neighbours(doc["upstream"])}'
        f"</section><section><h2>Downstream</h2>{_neighbours(doc['downstream'])}</section>"
        f"</div>{spread}"
    )
    return layout(f"lineage of {name}", body)


def not_found(what: str) -> str:
    return layout("not found", f"<h1>Not found</h1><p>{e(what)}</p>")


def points_of(doc: Mapping[str, Any]) -> dict[str, list[Point]]:
    """Each rule's history of a dataset doc, as the chart's points."""
    return {r["rule"]: [_point(p) for p in r["history"]] for r in doc["rules"]}
