"""Quality over time under the real listener (issue 28): a daily pipeline run nine times over
changing data builds the history; day 8's drop in volume (60 rows against ~100) FAILs both history
rules, on that run only; the runs before have too little history (SKIPPED, never a pass) or pass
(the stddev rule can fail from its 8th run: its minimum history is 7 runs);
and `lineage-quality history` shows the series and charts it, the failed point marked. Two rows
a day fail a pattern and an accepted-values rule (issue 54): their samples are in the store and,
the contract asking for it, in the facet; the email column is `restricted`: masked, its raw
value in no event, store or log."""

from __future__ import annotations

import logging
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from pipeline import HERE, run_with_producer

from lineage_quality.history import open_history
from lineage_quality.samples import HASH_PREFIX, Sampling

pytestmark = pytest.mark.e2e

DAYS = [100, 102, 98, 101, 99, 103, 100, 60, 101]
ANOMALY = 7  # day 8


@pytest.fixture(scope="module")
def daily(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    workdir = tmp_path_factory.mktemp("history")
    target = workdir / "history" / "daily_orders"
    go = workdir / "go"
    go.mkdir()
    store = open_history(workdir / "history.db")
    done = threading.Event()
    pacer = threading.Thread(
        target=_next_day_when_judged, args=(workdir / "events.jsonl", target, go, done)
    )
    pacer.start()
    # every record of the producer, to show that no raw restricted value reaches a log
    logged = logging.FileHandler(workdir / "producer.log")
    ours = logging.getLogger("lineage_quality")
    level = ours.level
    ours.setLevel(logging.DEBUG)
    ours.addHandler(logged)
    try:
        events, _ = run_with_producer(
            spark,
            HERE / "history_contracts",
            "history_job.py",
            [str(target), ",".join(map(str, DAYS)), str(go)],
            workdir,
            {"spark.openlineage.namespace": "e2e-history"},
            history=store,
            sampling=Sampling(),
        )
    finally:
        done.set()
        pacer.join()
        store.close()
        ours.removeHandler(logged)
        ours.setLevel(level)
        logged.close()
    completes = sorted(
        (
            e
            for e in events
            if e["eventType"] == "COMPLETE"
            and any(o["name"] == str(target) for o in e["outputs"])
            and "dataQualityAssertions" in e["outputs"][0].get("facets", {})
        ),
        key=lambda e: e["eventTime"],
    )
    return {
        "events": completes, "db": workdir / "history.db", "target": target, "workdir": workdir,
    }  # fmt: skip


def _next_day_when_judged(sink: Path, target: Path, go: Path, done: threading.Event) -> None:
    """Let the job start day N+1 once day N's COMPLETE was forwarded with its verdicts."""
    judged = 0
    while not done.is_set() and judged < len(DAYS):
        lines = sink.read_text().splitlines() if sink.exists() else []
        count = sum(
            1
            for line in lines
            if '"COMPLETE"' in line and "dataQualityAssertions" in line and str(target) in line
        )
        while judged < count:
            (go / f"day-{judged}").touch()
            judged += 1
        time.sleep(0.1)


def _assertions(event: dict[str, Any]) -> dict[str, dict[str, Any]]:
    facet = event["outputs"][0]["facets"]["dataQualityAssertions"]
    return {a["name"]: a for a in facet["assertions"]}


def test_only_the_run_with_the_drop_fails_its_history_rules(daily: dict[str, Any]) -> None:
    days = [_assertions(e) for e in daily["events"]]
    assert [d["orders_rows"]["actual"] for d in days] == [str(n) for n in DAYS]
    change = [d["orders_volume_vs_yesterday"]["params"]["status"] for d in days]
    usual = [d["orders_volume_usual"]["params"]["status"] for d in days]
    # day 1 has no previous run; the stddev rule (a window of 5) can fail once its minimum
    # history is kept: 7 runs, days 1-7 (issue 49: a band from 2-3 runs raised false alarms)
    assert change == ["SKIPPED"] + ["PASSED"] * 6 + ["FAILED", "PASSED"]
    assert usual == ["SKIPPED"] * 7 + ["FAILED", "PASSED"]
    first = days[0]["orders_volume_vs_yesterday"]
    assert first["success"] is False
    assert first["params"]["message"] == "needs 1 earlier run(s), has 0"
    assert days[2]["orders_volume_usual"]["params"]["message"] == (
        "needs 7 runs before it can fail, has 2 kept (the minimum history of a stddev rule: its "
        "minHistory, or --history-min-stddev)"
    )

    drop = days[ANOMALY]
    ratio = drop["orders_volume_vs_yesterday"]
    assert ratio["actual"] == "0.6"  # 60 / 100, the day before
    assert ratio["params"]["baseline"]["previous"] == 100.0
    assert ratio["params"]["value"] == 60
    band = drop["orders_volume_usual"]["params"]["baseline"]
    assert band["n"] == 5 and band["mean"] == pytest.approx(sum(DAYS[2:7]) / 5)
    assert band["lower"] > 60
    # the day after compares with the last accepted day, not with the anomaly
    after = days[ANOMALY + 1]["orders_volume_vs_yesterday"]
    assert after["params"]["baseline"]["previous"] == 100.0


def test_the_history_view_shows_and_charts_the_series(
    daily: dict[str, Any], tmp_path: Path
) -> None:
    dataset = f"file:{daily['target']}"
    rule = "e2e-history.daily_orders.rowCount.2"  # orders_volume_usual (the third entry)
    chart = tmp_path / "usual.html"
    done = subprocess.run(
        [
            sys.executable, "-m", "lineage_quality.cli", "history", "--history", str(daily["db"]),
            "--dataset", dataset, "--rule", rule, "--plot", str(chart),
        ],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = [line.split("\t") for line in done.stdout.splitlines()[1:] if "\t" in line]
    assert [float(r[2]) for r in rows] == DAYS  # the first days too: SKIPPED, but measured
    statuses = [r[3] for r in rows]
    assert statuses.count("FAILED") == 1
    assert f"wrote {chart}: {len(rows)} point(s), 1 failed" in done.stdout
    html = chart.read_text()
    point = r'<circle class="point"[^>]*data-status="(\w+)" data-value="([^"]+)"'
    assert [(s, float(v)) for s, v in re.findall(point, html)] == [
        (s, float(r[2])) for s, r in zip(statuses, rows, strict=True)
    ]
    (mark,) = re.findall(r'class="failed-mark"[^>]*data-time="([^"]+)"', html)
    assert mark == daily["events"][ANOMALY]["eventTime"][:19] + "Z"
    assert "data-band-points" in html  # the mean ± 3 sd band of the judged runs


def test_failing_rows_are_sampled_into_the_store_and_the_facet_masked(
    daily: dict[str, Any],
) -> None:
    events = daily["events"]
    first = _assertions(events[0])
    code = first["orders_code_valid"]
    assert code["params"]["status"] == "FAILED" and code["failures"] == 2
    # the contract says lineageQuality.samples.facets: true; the key is the primary key
    assert code["params"]["samples"]["rows"] == [
        {"id": "0", "code": "BAD-0"}, {"id": "50", "code": "BAD-50"}
    ]  # fmt: skip
    email = first["orders_email_valid"]["params"]["samples"]
    assert email["masked"] == ["email"]
    assert all(r["email"].startswith(HASH_PREFIX) for r in email["rows"])
    store = open_history(daily["db"], read_only=True)
    try:
        for event in events:
            run = event["run"]["runId"]
            kept = store.samples_of_run(f"file:{daily['target']}", run)
            rules = {a["properties"]["ruleId"]: a for a in _assertions(event).values()}
            assert set(kept) == {r for r, a in rules.items() if "samples" in a["params"]}
            assert len(kept) == 2
    finally:
        store.close()
    raw = "user0@bad.example"
    workdir = daily["workdir"]
    places = [*workdir.glob("history.db*"), workdir / "events.jsonl", workdir / "producer.log"]
    assert (workdir / "producer.log").stat().st_size > 0  # the producer did log
    for place in places:
        assert raw.encode() not in place.read_bytes(), place
