"""Two `serve` producers sharing one PostgreSQL history store (issue 39), without Spark: each
with its own spool, workers and LineageKeeper over the same database (the Debian PostgreSQL of
the Marquez tests' fixture); the first binds and evaluates raw (the evaluator stand-in of
tests/unit/test_lineage_serve.py, its rule BLOCK), the second gets clean's and agg's events and
has no contract. A failing column rule on raw, evaluated by the first, marks exactly
clean.customer_id and agg.customer_id in the second's forwarded facets; `gate --dataset` over the
URL exits 1, then 0 after a healthy write of raw (kept by the first), and 2 for a dataset never
evaluated (and for agg: kept, with no contract); `impact` over the URL lists clean and agg with
customer_id; the next runs are not marked."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import psycopg
import pytest

from lineage_quality import rawjson
from lineage_quality.cli.main import main
from lineage_quality.engine import verdict
from lineage_quality.lineage import Upstream, open_lineage
from lineage_quality.lineage.keeper import LineageKeeper
from lineage_quality.producer import Producer, Spool
from lineage_quality.producer.settings import Settings

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))
from marquez_server import start_postgres  # beside the e2e tests (the path above)
from test_lineage_serve import AGG, CLEAN, NOT_NULL, RAW, Evaluator, Sink, _complete, _upstream

TABLES = (
    "lq_lineage_writes", "lq_lineage_edges", "lq_lineage_schema", "lq_lineage_totals",
    "lq_history",
)  # fmt: skip


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with start_postgres(tmp_path_factory.mktemp("lineage-serve-pg")) as pg:
        found = f"postgresql://{pg.user}:{pg.password}@{pg.host}:{pg.port}/{pg.database}"
        with psycopg.connect(found) as db:
            for table in TABLES:
                db.execute(f"DROP TABLE IF EXISTS {table}")
        yield found


class BlockingRaw(Evaluator):
    """raw's null rule with the action BLOCK."""

    def evaluate_each(self, event: Any, job_group: str, bound: Any) -> Iterator[Any]:
        yield RAW, [verdict(attrs.evolve(NOT_NULL, action="BLOCK"), self.nulls, 10)]


class NoContracts(Evaluator):
    def bound(self, event: Any) -> dict[Any, list[Any]]:
        return {}


def _producer(tmp_path: Path, name: str, url: str, evaluator: Evaluator) -> tuple[Producer, Sink]:
    sink = Sink()
    producer = Producer(
        evaluator,  # type: ignore[arg-type]
        sink,  # type: ignore[arg-type]
        Spool(tmp_path / f"{name}.spool.db"),
        Settings.of(port=0),
        lineage=LineageKeeper(open_lineage(url), Upstream.WARN),
    )
    return producer, sink


def _send(producer: Producer, sink: Sink, body: str) -> dict[str, Any]:
    producer._accept(body, rawjson.loads(body))
    assert producer.spool.wait_empty(timeout=30)
    return sink.sent[-1]


def test_two_producers_sharing_postgresql_mark_gate_and_show_impact(
    url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    evaluator = BlockingRaw()
    upstream, up_sink = _producer(tmp_path, "upstream", url, evaluator)
    downstream, down_sink = _producer(tmp_path, "downstream", url, NoContracts())
    upstream.start()
    downstream.start()

    def gate(dataset: str) -> int:
        code = main(["gate", "--dataset", dataset, "--history", url])
        capsys.readouterr()
        return code

    try:
        evaluator.nulls = 3
        _send(upstream, up_sink, _complete("01", 0, [], "/lake/raw"))
        assert gate("/lake/raw") == 1  # the BLOCK rule failed (kept by the first producer)
        clean = _send(
            downstream, down_sink, _complete("02", 1, ["/lake/raw"], "/lake/clean", CLEAN)
        )
        agg = _send(downstream, down_sink, _complete("03", 2, ["/lake/clean"], "/lake/agg", AGG))
        assert _upstream(clean) == [("customer_id", "file:/lake/raw", "customer_id_not_null")]
        assert _upstream(agg) == [("customer_id", "file:/lake/raw", "customer_id_not_null")]

        assert main(["impact", "--dataset", "/lake/raw", "--output", "json", "--history", url]) == 0
        doc = json.loads(capsys.readouterr().out)
        assert doc["datasets"] == [
            {"dataset": "file:/lake/clean", "wholeDataset": False, "columns": ["customer_id"]},
            {"dataset": "file:/lake/agg", "wholeDataset": False, "columns": ["customer_id"]},
        ]
        assert gate("/lake/never") == 2
        assert gate("/lake/agg") == 2  # no contract: its writes are kept, never evaluated

        evaluator.nulls = 0  # raw written again, healthy, kept by the first producer
        _send(upstream, up_sink, _complete("04", 10, [], "/lake/raw"))
        clean = _send(
            downstream, down_sink, _complete("05", 11, ["/lake/raw"], "/lake/clean", CLEAN)
        )
        agg = _send(downstream, down_sink, _complete("06", 12, ["/lake/clean"], "/lake/agg", AGG))
        assert _upstream(clean) == [] and _upstream(agg) == []
        assert gate("/lake/raw") == 0
    finally:
        upstream.stop()
        downstream.stop()
    for producer in (upstream, downstream):
        assert producer.lineage is not None and producer.lineage.failures == 0
