"""In-driver `attach(..., upstream="block")` under the real listener and spark-submit (issue 39):
a job reading raw after raw's latest write failed its null rule fails at analysis, naming the
dataset, rule and run, and the output it would have overwritten is left byte-identical; the same
job ran while raw was healthy; `gate --dataset` agrees."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest
from pipeline import REPO_ROOT

from lineage_quality.cli import main
from lineage_quality.sparksubmit import spark_submit_path, submit_env

pytestmark = pytest.mark.e2e

HERE = Path(__file__).resolve().parent / "in_driver"


def _submit(step: str, work: Path) -> subprocess.CompletedProcess[str]:
    cmd = [
        spark_submit_path(),
        "--master", "local[1]",
        "--driver-memory", "1g",
        "--conf", "spark.ui.enabled=false",
        str(HERE / "upstream_block.py"),
        step, str(HERE / "upstream_raw.yaml"), str(work), str(work / "events.jsonl"),
        str(work / f"spool-{step}.db"), str(work / "history.db"),
    ]  # fmt: skip
    return subprocess.run(
        cmd, cwd=REPO_ROOT, env=submit_env(), capture_output=True, text=True, timeout=600
    )


def _files(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _last_write(events: Path, dataset: Path) -> str:
    """The run id of the last COMPLETE that wrote `dataset`."""
    runs = [
        e["run"]["runId"]
        for e in map(json.loads, events.read_text().splitlines())
        if e.get("eventType") == "COMPLETE"
        and any(o.get("name") == str(dataset) for o in e.get("outputs") or [])
    ]
    assert runs, f"no COMPLETE wrote {dataset}"
    return str(runs[-1])


def _gate(dataset: Path, history: Path) -> int:
    try:
        return main(["gate", "--dataset", str(dataset), "--history", str(history)])
    except SystemExit as exc:
        return int(exc.code or 0)


def test_a_read_of_an_unhealthy_dataset_fails_before_it_writes(tmp_path: Path) -> None:
    raw = tmp_path / "upstream-data" / "raw"
    clean = tmp_path / "upstream-data" / "clean"
    history = tmp_path / "history.db"

    healthy = _submit("raw-healthy", tmp_path)
    assert healthy.returncode == 0, healthy.stdout[-3000:] + healthy.stderr[-6000:]
    assert "step raw-healthy done" in healthy.stdout
    assert _gate(raw, history) == 0
    before = _files(clean)
    assert any(name.endswith(".parquet") for name in before), before

    nulls = _submit("raw-nulls", tmp_path)
    assert nulls.returncode == 0, nulls.stdout[-3000:] + nulls.stderr[-6000:]
    assert _gate(raw, history) == 0  # its rule is not BLOCK: the gate names it, lets it pass

    refused = _submit("clean", tmp_path)
    out = refused.stdout + refused.stderr
    assert refused.returncode != 0, out[-6000:]
    assert "step clean done" not in refused.stdout
    assert "this query reads an unhealthy dataset" in out, out[-6000:]
    assert f"file:{raw}" in out and "raw_customer_id_not_null" in out, out[-6000:]
    assert f"write of run {_last_write(tmp_path / 'events.jsonl', raw)}" in out
    assert _files(clean) == before  # nothing written, nothing deleted
