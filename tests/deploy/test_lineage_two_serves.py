"""Quality along lineage across two `serve` processes sharing one PostgreSQL history store, under
the real listener and spark-submit (issue 39): the first producer receives (and evaluates) raw's
applications, the second the downstream ones (clean from raw, agg from clean, countries from
raw's country) and binds nothing. The failing BLOCK null rule on raw, evaluated by the first,
marks exactly clean.customer_id and agg.customer_id in the second's forwarded facets, countries
not; a healthy write of raw, kept by the first, clears them on the second's next runs.
`gate --dataset` and `impact` read the shared store: 1 then 0 for raw, 2 for agg (never
evaluated: no contract)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lineage_quality.cli.main import main

from .serve_process import Serve, assertions_of, completes, serve_process

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
from lineage_marks import marked_columns  # beside the e2e tests (the path above)
from marquez_server import start_postgres

HERE = Path(__file__).resolve().parent
RAW_CONTRACTS = HERE.parent / "e2e" / "lineage_contracts"  # raw: a BLOCK null rule on customer_id
NO_CONTRACTS = HERE / "contracts" / "nothing"  # a contract binding no dataset of the pipeline


@pytest.fixture(scope="module")
def history_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with start_postgres(tmp_path_factory.mktemp("lineage-two-pg")) as pg:
        yield f"postgresql://{pg.user}:{pg.password}@{pg.host}:{pg.port}/{pg.database}"


def _marked(events: list[dict[str, Any]], target: Path) -> list[list[str | None]]:
    """For each run that wrote `target`, in order: the columns its upstreamQuality marks name."""
    raw = f"file:{target.parent / 'raw'}"
    return marked_columns(events, target, "raw_customer_id_not_null", upstreamDataset=raw)


def _gate(name: Path, url: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["gate", "--dataset", str(name), "--history", url])
    return code, capsys.readouterr().out


def _raw(upstream: Serve, step: str, base: Path, work: Path, judged: int) -> None:
    upstream.submit("lineage_hop_job.py", [step, str(base)], {}, work, "local[1]")
    upstream.wait_for(
        lambda ev: len([e for e in completes(ev, "") if assertions_of(e, "raw")]) > judged
    )


def _downstream(downstream: Serve, base: Path, work: Path, seen: int) -> list[dict[str, Any]]:
    downstream.submit("lineage_hop_job.py", ["downstream", str(base)], {}, work, "local[1]")

    def done(ev: list[dict[str, Any]]) -> bool:
        return all(len(_marked(ev, base / n)) > seen for n in ("agg", "countries"))

    return downstream.wait_for(done)


def test_a_failure_evaluated_by_one_serve_marks_the_other_ones_outputs(
    history_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = tmp_path / "lineage-data"
    shared = ("--history", history_url)
    with (
        serve_process(tmp_path / "upstream", RAW_CONTRACTS, {}, *shared) as upstream,
        serve_process(tmp_path / "downstream", NO_CONTRACTS, {}, *shared) as downstream,
    ):
        _raw(upstream, "raw-nulls", base, tmp_path, 0)
        code, line = _gate(base / "raw", history_url, capsys)
        assert code == 1 and "raw_customer_id_not_null" in line, line

        events = _downstream(downstream, base, tmp_path, 0)
        assert _marked(events, base / "clean") == [["customer_id"]]
        assert _marked(events, base / "agg") == [["customer_id"]]
        assert _marked(events, base / "countries") == [[]]  # only raw's healthy column
        assert main(["impact", "--dataset", str(base / "raw"), "--output", "json", *shared]) == 0
        doc = json.loads(capsys.readouterr().out)
        assert [(d["dataset"], d["columns"]) for d in doc["datasets"]] == [
            (f"file:{base / 'clean'}", ["customer_id"]),
            (f"file:{base / 'agg'}", ["customer_id"]),
        ]
        code, line = _gate(base / "agg", history_url, capsys)
        assert code == 2 and "not evaluated" in line, line  # kept, marked, never evaluated

        _raw(upstream, "raw-fixed", base, tmp_path, 1)
        code, line = _gate(base / "raw", history_url, capsys)
        assert code == 0 and "healthy" in line, line
        events = _downstream(downstream, base, tmp_path, 1)
        assert _marked(events, base / "clean") == [["customer_id"], []]
        assert _marked(events, base / "agg") == [["customer_id"], []]
        upstream_events = upstream.events()
    # each producer saw its own part only: the evaluation was the first one's
    assert not [e for e in completes(events, "") if assertions_of(e, "raw")]
    assert len([e for e in completes(upstream_events, "") if assertions_of(e, "raw")]) == 2
