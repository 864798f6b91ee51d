"""An `Impact` drawn: one self-contained HTML page with an inline SVG graph. Pure.

Every name in it comes from events (datasets, columns, rules, runs, jobs), so every one goes
through `inert.html_text` before it reaches markup, text or attribute alike (controls written
visibly, so the page printed to a terminal drives nothing; then HTML-escaped), and
the page allows no script at all (a `Content-Security-Policy` of `default-src 'none'`): a
dataset named `</text><script>...` shows as typed. Layout: one column per hop depth, the failing
write first; an arrow per (upstream dataset, affected dataset).
"""

from __future__ import annotations

from lineage_quality.inert import html_text
from lineage_quality.lineage.impact import Impact
from lineage_quality.lineage.impact_view import columns_text, headline

NODE_W, NODE_H, GAP_X, GAP_Y, PAD = 300, 64, 80, 24, 20
MAX_LABEL = 44  # characters of a name drawn in a box (the full name is in its tooltip)


def _e(text: object) -> str:
    return html_text(str(text))


def _cut(text: str, limit: int = MAX_LABEL) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def _layout(impact: Impact) -> dict[str, tuple[int, int]]:
    """Each dataset's box (x, y): its first depth, in the order reached."""
    depth: dict[str, int] = {impact.start.dataset: 0}
    for hop in impact.hops:
        depth.setdefault(hop.dataset, hop.depth)
    rows: dict[int, int] = {}
    where: dict[str, tuple[int, int]] = {}
    for name, d in depth.items():
        row = rows.get(d, 0)
        rows[d] = row + 1
        where[name] = (PAD + d * (NODE_W + GAP_X), PAD + row * (NODE_H + GAP_Y))
    return where


def _node(name: str, x: int, y: int, detail: str, failing: bool) -> str:
    fill = "#fdecea" if failing else "#fff4e5"
    return (
        f'<g class="node"><title>{_e(name)}\n{_e(detail)}</title>'
        f'<rect x="{x}" y="{y}" width="{NODE_W}" height="{NODE_H}" rx="6" '
        f'fill="{fill}" stroke="#b42318"/>'
        f'<text x="{x + 10}" y="{y + 24}" font-weight="bold">{_e(_cut(name))}</text>'
        f'<text x="{x + 10}" y="{y + 46}">{_e(_cut(detail))}</text></g>'
    )


def impact_svg(impact: Impact) -> str:
    where = _layout(impact)
    columns = impact.datasets
    width = max(x for x, _ in where.values()) + NODE_W + PAD
    height = max(y for _, y in where.values()) + NODE_H + PAD
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'font-family="sans-serif" font-size="13" role="img">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" '
        'markerHeight="8" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#b42318"/>'
        "</marker></defs>",
    ]
    drawn: set[tuple[str, str]] = set()
    for hop in impact.hops:
        if (hop.source, hop.dataset) in drawn or hop.source not in where:
            continue
        drawn.add((hop.source, hop.dataset))
        (x1, y1), (x2, y2) = where[hop.source], where[hop.dataset]
        parts.append(
            f'<line x1="{x1 + NODE_W}" y1="{y1 + NODE_H // 2}" x2="{x2}" y2="{y2 + NODE_H // 2}" '
            f'stroke="#b42318" stroke-width="1.5" marker-end="url(#arrow)">'
            f"<title>{_e(hop.job)} (run {_e(hop.run)})</title></line>"
        )
    start = impact.start
    failed = [f.rule for f in start.failures] + [m.origin.rule for m in start.marks]
    x, y = where[start.dataset]
    parts.append(_node(start.dataset, x, y, "failed: " + ", ".join(failed), True))
    for name, cols in columns.items():
        if name == start.dataset:
            continue
        x, y = where[name]
        parts.append(_node(name, x, y, columns_text(cols), False))
    parts.append("</svg>")
    return "".join(parts)


def impact_html(impact: Impact) -> str:
    """The page: the failing write's line, the graph, and the affected datasets as a list."""
    items = "".join(
        f"<li><b>{_e(name)}</b>: {_e(columns_text(cols))}</li>"
        for name, cols in impact.datasets.items()
    )
    note = "<p>Truncated: the walk stopped at its bound.</p>" if impact.truncated else ""
    return (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'\">"
        f"<title>impact of {_e(impact.start.dataset)}</title>"
        "<style>body{font-family:sans-serif;margin:1.5em}</style></head><body>"
        f"<h1>Impact of a failing write</h1><p>{_e(headline(impact.start))}</p>"
        f"{impact_svg(impact)}<h2>Affected downstream datasets ({len(impact.datasets)})</h2>"
        f"<ul>{items}</ul>{note}</body></html>\n"
    )
