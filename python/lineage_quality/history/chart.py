"""A rule's history as a chart: an SVG (or an HTML page holding it), no plotting library.

Each point is a run's value (a `circle`, `data-status` PASSED or FAILED; failed ones red and
marked with a cross), the line joins them in time order, and the band each verdict held its value
to (a history rule's mean ± k sd, or a threshold, as the store kept it) is a shaded area. Every
element that carries data has `data-*` attributes, so the chart can be read back (and tested)
without rendering it.
"""

from __future__ import annotations

import datetime
import html
import math
from collections.abc import Sequence

from lineage_quality.history.verdicts import Point

WIDTH, HEIGHT, PAD = 900, 360, 60


def band(points: Sequence[Point]) -> list[tuple[float, float] | None]:
    """Per point, the band its verdict held it to (both ends known), else None."""
    return [
        (p.lower, p.upper) if p.lower is not None and p.upper is not None else None for p in points
    ]


def svg(title: str, points: Sequence[Point]) -> str:
    bands = band(points)
    values = [p.value for p in points] + [v for b in bands if b for v in b]
    low, high = (min(values), max(values)) if values else (0.0, 1.0)
    if math.isclose(low, high):
        low, high = low - 1, high + 1
    span_t = (points[-1].event_ms - points[0].event_ms) if len(points) > 1 else 1

    def x(i: int) -> float:
        if len(points) < 2:
            return WIDTH / 2
        return PAD + (WIDTH - 2 * PAD) * (points[i].event_ms - points[0].event_ms) / span_t

    def y(v: float) -> float:
        return HEIGHT - PAD - (HEIGHT - 2 * PAD) * (v - low) / (high - low)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" data-points="{len(points)}" '
        f'data-failed="{sum(p.status == "FAILED" for p in points)}">',
        f"<title>{html.escape(title)}</title>",
        f'<text x="{PAD}" y="24" font-family="sans-serif" font-size="14">'
        f"{html.escape(title)}</text>",
        f'<line x1="{PAD}" y1="{HEIGHT - PAD}" x2="{WIDTH - PAD}" y2="{HEIGHT - PAD}" '
        'stroke="#888"/>',
        f'<text x="{PAD - 6}" y="{y(high):.1f}" text-anchor="end" font-size="11">{high:.6g}</text>',
        f'<text x="{PAD - 6}" y="{y(low):.1f}" text-anchor="end" font-size="11">{low:.6g}</text>',
    ]
    banded = [(i, b) for i, b in enumerate(bands) if b is not None]
    if banded:
        upper = " ".join(f"{x(i):.1f},{y(b[1]):.1f}" for i, b in banded)
        lower = " ".join(f"{x(i):.1f},{y(b[0]):.1f}" for i, b in reversed(banded))
        parts.append(
            f'<polygon class="band" points="{upper} {lower}" fill="#9ecae1" '
            f'fill-opacity="0.4" data-band-points="{len(banded)}"/>'
        )
    if len(points) > 1:
        path = " ".join(f"{x(i):.1f},{y(p.value):.1f}" for i, p in enumerate(points))
        parts.append(f'<polyline points="{path}" fill="none" stroke="#3182bd"/>')
    for i, p in enumerate(points):
        failed = p.status == "FAILED"
        when = _iso(p.event_ms)
        parts.append(
            f'<circle class="point" cx="{x(i):.1f}" cy="{y(p.value):.1f}" r="{5 if failed else 3}" '
            f'fill="{"#d62728" if failed else "#3182bd"}" data-status="{p.status}" '
            f'data-value="{p.value!r}" data-time="{when}" data-run="{html.escape(p.run_id)}">'
            f"<title>{when} {p.value:.6g} {p.status}</title></circle>"
        )
        if failed:
            cx, cy = x(i), y(p.value)
            parts.append(
                f'<path class="failed-mark" d="M{cx - 8:.1f},{cy - 8:.1f} L{cx + 8:.1f},'
                f'{cy + 8:.1f} M{cx - 8:.1f},{cy + 8:.1f} L{cx + 8:.1f},{cy - 8:.1f}" '
                f'stroke="#d62728" stroke-width="2" data-time="{when}"/>'
            )
    if points:
        parts.append(
            f'<text x="{PAD}" y="{HEIGHT - PAD + 20}" font-size="11">'
            f"{_iso(points[0].event_ms)}</text>"
        )
        parts.append(
            f'<text x="{WIDTH - PAD}" y="{HEIGHT - PAD + 20}" text-anchor="end" font-size="11">'
            f"{_iso(points[-1].event_ms)}</text>"
        )
    parts.append("</svg>")
    return "\n".join(parts)


def page(title: str, points: Sequence[Point]) -> str:
    return (
        '<!doctype html>\n<html><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title></head><body>\n"
        f"{svg(title, points)}\n</body></html>\n"
    )


def _iso(ms: int) -> str:
    when = datetime.datetime.fromtimestamp(ms / 1000, datetime.UTC)
    return when.isoformat(timespec="seconds").replace("+00:00", "Z")
