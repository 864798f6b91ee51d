"""The lineage tables on PostgreSQL behave as on SQLite (issue 39): the scenarios of
tests/unit/test_lineage_store.py, each on an empty database (its tables dropped first), on one
PostgreSQL (the Debian package, the Marquez tests' fixture); and two stores (two `serve`
processes) sharing it see each other's writes: the upstream kept by one, read by the other."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest

from lineage_quality.lineage import Read, Upstream, decide, observe, open_lineage

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))
import test_lineage_store as scenarios  # the scenarios, not their SQLite tests
from marquez_server import start_postgres  # beside the e2e tests (the path above)

TABLES = (
    "lq_lineage_writes", "lq_lineage_edges", "lq_lineage_schema", "lq_history",
    "lq_history_feedback",
)  # fmt: skip


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with start_postgres(tmp_path_factory.mktemp("lineage-store-pg")) as pg:
        yield f"postgresql://{pg.user}:{pg.password}@{pg.host}:{pg.port}/{pg.database}"


def _empty(url: str) -> str:
    with psycopg.connect(url) as db:
        for table in TABLES:
            db.execute(f"DROP TABLE IF EXISTS {table}")
    return url


@pytest.mark.parametrize(
    "scenario", scenarios.SCENARIOS, ids=lambda s: s.__name__[len("scenario_") :]
)
def test_on_postgresql(scenario: Callable[[str], None], url: str) -> None:
    scenario(_empty(url))


def test_two_producers_share_the_health_of_datasets(url: str) -> None:
    _empty(url)
    upstream_side, downstream_side = open_lineage(url), open_lineage(url)
    now = int(time.time() * 1000)
    raw = scenarios._event("raw-1", now - 60_000, [], "/raw")
    scenarios._keep(upstream_side, raw, failing=3)  # evaluated by the first
    clean = scenarios._event("clean-1", now - 1000, ["/raw"], "/clean", scenarios.CLEAN_COLUMNS)
    observed = observe(clean, {}, downstream_side.written, Upstream.BLOCK)
    downstream_side.record(observed)  # the second reads the first's verdict
    assert [m.column for m in observed.marks["file:/clean"]] == ["customer_id"]
    assert decide("/clean", upstream_side.latest("file:/clean")).code == 1
    assert downstream_side.written(Read("file:/raw"), now) is not None
    upstream_side.close()
    downstream_side.close()
