"""The history chart is inert whatever the store holds (issue 44, case 8): anyone who can write the
shared store (an in-driver job on PostgreSQL, any event's run id) reaches the chart, so every
field is escaped for HTML and SVG, control characters are escaped as visible text (the SVG stays
well-formed XML), and a value that is not a finite number is drawn as a mark, not at cy="nan"."""

from __future__ import annotations

import math
import sqlite3
import time
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest

from lineage_quality.cli import main
from lineage_quality.history import Point, open_history
from lineage_quality.history.chart import page, svg

SVG = "{http://www.w3.org/2000/svg}"
DAY = 86_400_000
RECENT = (int(time.time() * 1000) // DAY - 10) * DAY
SCRIPT = '"><script>alert(1)</script>'
RUN = "run\x1b[2J\x00\x07\u2028\ufffe<&>'"


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)


def _tags(html: str) -> list[str]:
    parser = _Tags()
    parser.feed(html)
    return parser.tags


def _hostile_store(path: Path) -> None:
    """Rows as another producer sharing the store could write them."""
    open_history(path).close()
    with sqlite3.connect(path) as db:
        for i, (run, status) in enumerate(
            [("r0", "PASSED"), (RUN, SCRIPT), ("r2", "FAILED"), ("r3", "PASSED")]
        ):
            db.execute(
                "INSERT INTO lq_history (dataset, rule_id, run_id, metric, value, status, "
                "event_ms, recorded_ms) VALUES ('file:/a', 'orders.rows', ?, 'rowCount', ?, ?, "
                "?, 0)",
                (run, 100.0 + i, status, RECENT + i * DAY),
            )


@pytest.mark.parametrize("suffix", [".svg", ".html"])
def test_a_script_or_control_characters_from_the_store_stay_inert(
    tmp_path: Path, suffix: str, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "h.db"
    _hostile_store(db)
    chart = tmp_path / f"chart{suffix}"
    args = ["history", "--history", str(db), "--dataset", "file:/a", "--rule", "orders.rows"]
    assert main([*args, "--plot", str(chart)]) == 0
    written = chart.read_text(encoding="utf-8")
    assert "script" not in _tags(written) and "<script" not in written
    body = written if suffix == ".svg" else written[written.index("<svg") : written.index("</svg>")]
    root = ET.fromstring(body + ("" if suffix == ".svg" else "</svg>"))  # well-formed XML
    circles = root.findall(f"{SVG}circle")
    assert [c.get("data-status") for c in circles] == ["PASSED", SCRIPT, "FAILED", "PASSED"]
    assert circles[1].get("data-run") == "run\\x1b[2J\\x00\\x07\\u2028\\ufffe<&>'"
    assert "\x1b" not in capsys.readouterr().out  # the terminal table as before: inert


def test_the_title_is_escaped_in_the_page_and_the_svg() -> None:
    points = [Point("r", RECENT, 1.0, "PASSED")]
    title = "</title><script>alert(1)</script>\x1b"
    assert "script" not in _tags(page(title, points))
    root = ET.fromstring(svg(title, points))
    assert root.findtext(f"{SVG}title") == "</title><script>alert(1)</script>\\x1b"


def test_non_finite_points_are_marks_and_the_others_keep_their_scale() -> None:
    values = [100.0, math.nan, 110.0, math.inf, -math.inf, 105.0]
    points = [Point(f"r{i}", RECENT + i * DAY, v, "PASSED") for i, v in enumerate(values)]
    chart = svg("rows", points)
    assert "nan" not in chart and "inf" not in chart  # Python's spellings: never a coordinate
    root = ET.fromstring(chart)
    circles = root.findall(f"{SVG}circle")
    assert [c.get("data-value") for c in circles] == [
        "100.0", "NaN", "110.0", "Infinity", "-Infinity", "105.0"
    ]  # fmt: skip
    ys = [float(c.get("cy") or "nan") for c in circles]
    assert all(math.isfinite(y) for y in ys)
    assert ys[2] < ys[5] < ys[0]  # the finite points keep their own scale (110 highest)
    marks = [t.text for t in root.findall(f"{SVG}text") if t.get("class") == "nonfinite"]
    assert marks == ["NaN", "Infinity", "-Infinity"]
    assert root.get("data-nonfinite") == "3"
    (line,) = root.findall(f"{SVG}polyline")
    assert len((line.get("points") or "").split()) == 3  # joins the finite points only
