"""Quality along lineage under the real listener (issue 39): a 3-hop pipeline raw -> clean -> agg
and a branch raw -> countries in one spark-submit application (jobs/lineage_job.py), raw bound to
a BLOCK null rule on customer_id. Raw's first write has null ids: clean and agg (no contract) get
an `upstreamQuality` assertion on customer_id only, and countries (only raw's country) none; the
second, healthy write of raw clears the marks on the next runs. `gate --dataset` on raw exits 1
after the first write, 0 after the second, and 2 for a dataset never evaluated; `impact` on raw's
failing write lists clean and agg with customer_id. The forwarded events, replayed to a real
Marquez in the order they were forwarded, make agg UNHEALTHY in Marquez's dataset list (the rule
of Marquez 0.50's web UI: an assertion with `success` false in the `dataQualityAssertions` facet
of the dataset's current version, which `GET /api/v1/namespaces/{ns}/datasets` returns), until
agg's next healthy write."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from lineage_marks import marked_columns
from marquez_server import MarquezHandle
from openlineage.client.transport.http import HttpConfig, HttpTransport
from pipeline import HERE, read_jsonl, run_with_producer

from lineage_quality.cli import main
from lineage_quality.lineage import Upstream, decide, open_lineage
from lineage_quality.lineage.keeper import LineageKeeper
from lineage_quality.producer.forward import RawEvent

pytestmark = pytest.mark.e2e

STEPS = ["raw", "clean", "agg", "countries", "raw", "clean", "agg"]


@pytest.fixture(scope="module")
def pipeline(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    workdir = tmp_path_factory.mktemp("lineage")
    base = workdir / "lineage-data"
    go = workdir / "go"
    go.mkdir()
    db = workdir / "history.db"
    keeper = LineageKeeper(open_lineage(db), Upstream.WARN)
    done = threading.Event()
    gates: dict[int, int] = {}
    pacer = threading.Thread(
        target=_next_step_when_forwarded,
        args=(workdir / "events.jsonl", base, go, db, gates, done),
    )
    pacer.start()
    try:
        events, _ = run_with_producer(
            spark,
            HERE / "lineage_contracts",
            "lineage_job.py",
            [str(base), str(go)],
            workdir,
            {"spark.openlineage.namespace": "e2e-lineage"},
            lineage=keeper,
        )
    finally:
        done.set()
        pacer.join()
        keeper.close()
    assert keeper.failures == 0
    return {"events": events, "base": base, "db": db, "gates": gates}


def _runs(sink: Path, target: Path) -> list[str]:
    """The runs whose COMPLETE wrote `target` and was forwarded, in order."""
    if not sink.exists():
        return []
    events = read_jsonl(sink)
    return list(
        dict.fromkeys(
            e["run"]["runId"]
            for e in sorted(events, key=lambda e: e["eventTime"])
            if e["eventType"] == "COMPLETE"
            and any(o["name"] == str(target) for o in e.get("outputs") or [])
        )
    )


def _next_step_when_forwarded(
    sink: Path, base: Path, go: Path, db: Path, gates: dict[int, int], done: threading.Event
) -> None:
    """Let the job go on once step N's COMPLETE was forwarded (its lineage kept, its verdicts
    judged); after each write of raw, note what `gate --dataset` decides on it."""
    step = 0
    while not done.is_set() and step < len(STEPS):
        name = STEPS[step]
        if len(_runs(sink, base / name)) >= STEPS[: step + 1].count(name):
            if name == "raw":
                store = open_lineage(db, read_only=True)
                gates[step] = decide(name, store.latest(f"file:{base / name}")).code
                store.close()
            (go / f"step-{step}").touch()
            step += 1
            continue
        time.sleep(0.1)


def _marked(events: list[dict[str, Any]], target: Path) -> list[list[str | None]]:
    """For each run that wrote `target`, in order: the columns its upstreamQuality marks name."""
    return marked_columns(events, target, "raw_customer_id_not_null", severity="warn")


def test_the_derived_columns_downstream_are_marked_then_cleared(
    pipeline: dict[str, Any],
) -> None:
    events, base = pipeline["events"], pipeline["base"]
    assert _marked(events, base / "clean") == [["customer_id"], []]
    assert _marked(events, base / "agg") == [["customer_id"], []]
    assert _marked(events, base / "countries") == [[]]  # reads only healthy columns of raw


def test_gate_dataset_blocks_then_passes_and_cannot_tell_for_the_unknown(
    pipeline: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    assert pipeline["gates"] == {0: 1, 4: 0}  # the BLOCK rule failed, then passed
    history = ["--history", str(pipeline["db"])]
    assert main(["gate", "--dataset", str(pipeline["base"] / "raw"), *history]) == 0
    assert "healthy" in capsys.readouterr().out
    assert main(["gate", "--dataset", str(pipeline["base"] / "nowhere"), *history]) == 2
    assert "never evaluated" in capsys.readouterr().out


def test_impact_lists_the_two_downstream_datasets_and_their_columns(
    pipeline: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    base = pipeline["base"]
    history = ["--history", str(pipeline["db"])]
    assert main(["impact", "--dataset", str(base / "raw"), "--output", "json", *history]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["datasets"] == [
        {"dataset": f"file:{base / 'clean'}", "wholeDataset": False, "columns": ["customer_id"]},
        {"dataset": f"file:{base / 'agg'}", "wholeDataset": False, "columns": ["customer_id"]},
    ]
    assert f"file:{base / 'countries'}" in doc["readers"]  # read raw, not affected


def _health(marquez: MarquezHandle, name: Path) -> str:
    """agg's state in Marquez's dataset list, by the rule of its web UI (Datasets.tsx)."""
    page = marquez.get_json("/api/v1/namespaces/file/datasets?limit=100")
    found = [d for d in page["datasets"] if d["name"] == str(name)]
    assert len(found) == 1, [d["name"] for d in page["datasets"]]
    assertions = ((found[0].get("facets") or {}).get("dataQualityAssertions") or {}).get(
        "assertions"
    )
    if not assertions:
        return "N/A"
    return "UNHEALTHY" if any(not a["success"] for a in assertions) else "HEALTHY"


@pytest.mark.marquez
def test_marquez_shows_agg_unhealthy_then_not(
    pipeline: dict[str, Any], marquez: MarquezHandle
) -> None:
    """The forwarded (enriched) events replayed to Marquez in order: after agg's first write
    agg is UNHEALTHY through Marquez's API with our upstreamQuality assertion; after its second
    write (raw fixed) it no longer is."""
    base = pipeline["base"]
    agg = base / "agg"
    events = read_jsonl(Path(pipeline["db"]).parent / "events.jsonl")
    transport = HttpTransport(HttpConfig.from_dict({"type": "http", "url": marquez.url}))
    agg_runs = _runs(Path(pipeline["db"]).parent / "events.jsonl", agg)
    assert len(agg_runs) == 2
    first = max(
        i
        for i, e in enumerate(events)
        if e["run"]["runId"] == agg_runs[0] and e["eventType"] == "COMPLETE"
    )
    for e in events[: first + 1]:
        transport.emit(RawEvent(json.dumps(e)))
    assert _health(marquez, agg) == "UNHEALTHY"
    page = marquez.get_json("/api/v1/namespaces/file/datasets?limit=100")
    (found,) = [d for d in page["datasets"] if d["name"] == str(agg)]
    failing = [
        a for a in found["facets"]["dataQualityAssertions"]["assertions"] if not a["success"]
    ]
    # one per failing write of raw the mark names (the facet as forwarded), all on customer_id
    assert failing and {(a["assertion"], a.get("column")) for a in failing} == {
        ("upstreamQuality", "customer_id")
    }
    assert {a["params"]["upstreamRule"] for a in failing} == {"raw_customer_id_not_null"}
    for e in events[first + 1 :]:
        transport.emit(RawEvent(json.dumps(e)))
    assert _health(marquez, agg) != "UNHEALTHY"
    assert _health(marquez, base / "countries") == "N/A"  # no contract, no mark
