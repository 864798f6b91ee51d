"""One history shared by two `serve` processes through PostgreSQL (issue 28): the days judged by
the first build the baseline the second judges the anomaly with. PostgreSQL is the Debian
package, started by the same fixture code as the Marquez tests' database."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .serve_process import Serve, assertions_of, completes, serve_process

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
from marquez_server import start_postgres  # beside the e2e tests (the path above)

HERE = Path(__file__).resolve().parent
CONTRACTS = HERE.parent / "e2e" / "history_contracts"
FIRST = [100, 102, 98, 101, 99, 103]
SECOND = [60]


@pytest.fixture(scope="module")
def history_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with start_postgres(tmp_path_factory.mktemp("history-pg")) as pg:
        yield f"postgresql://{pg.user}:{pg.password}@{pg.host}:{pg.port}/{pg.database}"


MINIMUM = ("--history-min-stddev", "5")


def _run_days(serve: Serve, target: Path, days: list[int], workdir: Path) -> list[dict[str, Any]]:
    """Each day as its own application (as a scheduler runs a daily job), judged before the next."""
    judged: list[dict[str, Any]] = []
    for rows in days:
        serve.submit("files_job.py", [str(target), "overwrite", str(rows)], {}, workdir, "local[1]")
        seen = len(judged)
        events = serve.wait_for(
            lambda ev, seen=seen: (
                len([e for e in completes(ev, "") if assertions_of(e, "daily_orders")]) > seen
            )
        )
        judged = [e for e in completes(events, "") if assertions_of(e, "daily_orders")]
    return judged


def test_two_serve_processes_share_one_history(history_url: str, tmp_path: Path) -> None:
    target = tmp_path / "history" / "daily_orders"
    # a stddev band from 5 runs, as the contract's window (below the default minimum of 7)
    with serve_process(
        tmp_path / "serve-a", CONTRACTS, {}, "--history", history_url, "--spark-master", "local[1]",
        *MINIMUM,
    ) as first:
        judged = _run_days(first, target, FIRST, tmp_path)
        log_a = first.log()
    usual = [assertions_of(e, "daily_orders")["orders_volume_usual"] for e in judged]
    assert [a["params"]["status"] for a in usual] == ["SKIPPED"] * 5 + ["PASSED"]
    with serve_process(
        tmp_path / "serve-b", CONTRACTS, {}, "--history", history_url, "--spark-master", "local[1]",
        *MINIMUM,
    ) as second:
        (drop,) = _run_days(second, target, SECOND, tmp_path)
        log_b = second.log()
    found = assertions_of(drop, "daily_orders")
    # judged by the second process on the first one's five passing days
    assert found["orders_volume_usual"]["params"]["status"] == "FAILED"
    assert found["orders_volume_usual"]["params"]["baseline"]["n"] == 5
    assert found["orders_volume_vs_yesterday"]["params"]["baseline"]["previous"] == 103.0
    assert found["orders_volume_vs_yesterday"]["actual"] == f"{60 / 103:.6g}"
    for log in (log_a, log_b):
        assert ":marquez@" not in log  # the URL's password is never logged
