"""A rule's history as a chart: an SVG (or an HTML page holding it), no plotting library.

Each point is a run's value (a `circle`, `data-status` PASSED or FAILED; failed ones red and
marked with a cross), the line joins them in time order, and the band each verdict held its value
to (a history rule's mean ± k sd, or a threshold, as the store kept it) is a shaded area. Every
element that carries data has `data-*` attributes, so the chart can be read back (and tested)
without rendering it. What users said (history/feedback.py) is drawn too: a run accepted as
normal gets a green ring (`class="accepted"`, `data-by`, `data-why`), a rebaseline a dashed
vertical line at its `since` (`class="rebaseline"`); the HTML page lists every record under the
chart (`<ul class="feedback">`).

Everything the store holds came from events or from other producers sharing the store: every text
is written escaped for HTML and XML, control characters escaped as visible text (`\\x1b`, as the
terminal output) so the SVG stays well-formed XML, and a value that is not a finite number (NaN,
an infinity) is drawn as a mark of its own at the plot's edge (`class="nonfinite"`), out of the
scale and the line. So is a masked column's value (`class="masked"`, mid-height, its masked text:
masked_values.py): neither its number nor its band is drawn.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from lineage_quality.history.feedback import Action, Feedback, FeedbackState
from lineage_quality.history.points import Point
from lineage_quality.history.times import iso_ms
from lineage_quality.inert import html_text
from lineage_quality.results import NON_FINITE

WIDTH, HEIGHT, PAD = 900, 360, 60
text = html_text  # `value` safe in HTML and XML text and in a quoted attribute


def band(points: Sequence[Point]) -> list[tuple[float, float] | None]:
    """Per point, the band its verdict held it to (both ends known and finite), else None."""
    return [
        (p.lower, p.upper)
        if p.shown is None
        and p.lower is not None
        and p.upper is not None
        and math.isfinite(p.lower)
        and math.isfinite(p.upper)
        else None
        for p in points
    ]


def svg(title: str, points: Sequence[Point], feedback: Sequence[Feedback] = ()) -> str:
    bands = band(points)
    state = FeedbackState.of(feedback)
    why = {r.run_id: r for r in feedback if r.action is Action.ACCEPT}
    values = [p.value for p in points if _plotted(p)]
    values += [v for b in bands if b for v in b]
    low, high = (min(values), max(values)) if values else (0.0, 1.0)
    if math.isclose(low, high):
        low, high = low - 1, high + 1
    span_t = (points[-1].event_ms - points[0].event_ms) if len(points) > 1 else 1
    span_t = span_t or 1  # every point at one time

    def x(i: int) -> float:
        if len(points) < 2:
            return WIDTH / 2
        return PAD + (WIDTH - 2 * PAD) * (points[i].event_ms - points[0].event_ms) / span_t

    def at(p: Point) -> float:
        return HEIGHT / 2 if p.shown is not None else y(p.value)

    def y(v: float) -> float:
        if math.isnan(v):  # the mid-height of the plot, with its own mark
            return HEIGHT / 2
        if math.isinf(v):  # the plot's top or bottom edge
            return PAD if v > 0 else HEIGHT - PAD
        return HEIGHT - PAD - (HEIGHT - 2 * PAD) * (v - low) / (high - low)

    safe_title = text(title)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" data-points="{len(points)}" '
        f'data-failed="{sum(p.status == "FAILED" for p in points)}" '
        f'data-nonfinite="{sum(p.shown is None and not math.isfinite(p.value) for p in points)}" '
        f'data-masked="{sum(p.shown is not None for p in points)}" '
        f'data-accepted="{sum(p.run_id in state.accepted for p in points)}">',
        f"<title>{safe_title}</title>",
        f'<text x="{PAD}" y="24" font-family="sans-serif" font-size="14">{safe_title}</text>',
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
    line = [(i, p) for i, p in enumerate(points) if _plotted(p)]
    if len(line) > 1:
        path = " ".join(f"{x(i):.1f},{y(p.value):.1f}" for i, p in line)
        parts.append(f'<polyline points="{path}" fill="none" stroke="#3182bd"/>')
    rebaseline = next((r for r in reversed(feedback) if r.action is Action.REBASELINE), None)
    if rebaseline is not None and rebaseline.since_ms is not None and len(points) > 1:
        first, last = points[0].event_ms, points[-1].event_ms
        since = min(max(rebaseline.since_ms, first), last)
        rx = PAD + (WIDTH - 2 * PAD) * (since - first) / span_t
        label = text(f"rebaseline from {iso_ms(rebaseline.since_ms)} by {rebaseline.by}")
        parts.append(
            f'<line class="rebaseline" x1="{rx:.1f}" y1="{PAD}" x2="{rx:.1f}" '
            f'y2="{HEIGHT - PAD}" stroke="#31a354" stroke-dasharray="4 3" '
            f'data-time="{text(iso_ms(rebaseline.since_ms))}" data-by="{text(rebaseline.by)}" '
            f'data-why="{text(rebaseline.why)}"><title>{label}: {text(rebaseline.why)}</title>'
            "</line>"
        )
    for i, p in enumerate(points):
        failed = p.status == "FAILED"
        if p.run_id in state.accepted and p.run_id in why:
            record = why[p.run_id]
            parts.append(
                f'<circle class="accepted" cx="{x(i):.1f}" cy="{at(p):.1f}" r="9" '
                f'fill="none" stroke="#31a354" stroke-width="2" data-run="{text(p.run_id)}" '
                f'data-by="{text(record.by)}" data-why="{text(record.why)}">'
                f"<title>accepted as normal by {text(record.by)}: {text(record.why)}</title>"
                "</circle>"
            )
        when = text(iso_ms(p.event_ms))
        status = text(p.status)
        value = text(p.shown) if p.shown is not None else _value(p.value)
        cx, cy = x(i), at(p)
        parts.append(
            f'<circle class="point" cx="{cx:.1f}" cy="{cy:.1f}" r="{5 if failed else 3}" '
            f'fill="{"#d62728" if failed else "#3182bd"}" data-status="{status}" '
            f'data-value="{value}" data-time="{when}" data-run="{text(p.run_id)}">'
            f"<title>{when} {_label(p)} {status}</title></circle>"
        )
        if not _plotted(p):
            mark = "masked" if p.shown is not None else "nonfinite"
            parts.append(
                f'<text class="{mark}" x="{cx:.1f}" y="{cy - 8:.1f}" text-anchor="middle" '
                f'font-size="11" fill="#d62728" data-time="{when}">{_label(p)}</text>'
            )
        if failed:
            parts.append(
                f'<path class="failed-mark" d="M{cx - 8:.1f},{cy - 8:.1f} L{cx + 8:.1f},'
                f'{cy + 8:.1f} M{cx - 8:.1f},{cy + 8:.1f} L{cx + 8:.1f},{cy - 8:.1f}" '
                f'stroke="#d62728" stroke-width="2" data-time="{when}"/>'
            )
    if points:
        parts.append(
            f'<text x="{PAD}" y="{HEIGHT - PAD + 20}" font-size="11">'
            f"{text(iso_ms(points[0].event_ms))}</text>"
        )
        parts.append(
            f'<text x="{WIDTH - PAD}" y="{HEIGHT - PAD + 20}" text-anchor="end" font-size="11">'
            f"{text(iso_ms(points[-1].event_ms))}</text>"
        )
    parts.append("</svg>")
    return "\n".join(parts)


def page(title: str, points: Sequence[Point], feedback: Sequence[Feedback] = ()) -> str:
    listed = "".join(f"<li>{text(r.describe())}</li>" for r in feedback)
    notes = f'<ul class="feedback">{listed}</ul>\n' if feedback else ""
    return (
        '<!doctype html>\n<html><head><meta charset="utf-8">'
        f"<title>{text(title)}</title></head><body>\n"
        f"{svg(title, points, feedback)}\n{notes}</body></html>\n"
    )


def _value(value: float) -> str:
    """`data-value`: the float as Python reads it back, a non-finite one by its JSON name."""
    return repr(value) if math.isfinite(value) else NON_FINITE[repr(value)]


def _plotted(p: Point) -> bool:
    """Whether a point has a place on the scale: a finite value, not masked."""
    return p.shown is None and math.isfinite(p.value)


def _label(p: Point) -> str:
    if p.shown is not None:
        return text(p.shown)
    return f"{p.value:.6g}" if math.isfinite(p.value) else NON_FINITE[repr(p.value)]
