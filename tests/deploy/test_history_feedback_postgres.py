"""`history accept` (and its undo) and `history rebaseline` on a PostgreSQL store, as on SQLite
(issue 42; tests/unit/test_history_feedback.py): the records are kept with who, when and why, the
next evaluation's baseline reads them, and the viewer shows them. One PostgreSQL (the Debian
package, the Marquez tests' fixture)."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from lineage_quality.cli import main
from lineage_quality.history import open_history
from lineage_quality.history.judge import judge_and_record
from lineage_quality.kinds import RuleKind
from lineage_quality.results import RuleResult, Status
from lineage_quality.rules import Operator, Rule, Threshold
from lineage_quality.rules.history import parse_history

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
from marquez_server import start_postgres  # beside the e2e tests (the path above)

DAY = 86_400_000
RECENT = (int(time.time() * 1000) // DAY - 10) * DAY
DS, RULE = "file:/lake/orders", "orders.rows"
RULE_OBJ = Rule(
    id=RULE,
    kind=RuleKind.ROW_COUNT,
    threshold=Threshold(Operator.GREATER_THAN, 0),
    history=parse_history({"compare": "stddev", "runs": 5, "minRuns": 5, "minHistory": 5}),
)


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with start_postgres(tmp_path_factory.mktemp("history-feedback-pg")) as pg:
        yield f"postgresql://{pg.user}:{pg.password}@{pg.host}:{pg.port}/{pg.database}"


def _day(url: str, day: int, rows: int) -> RuleResult:
    store = open_history(url)
    try:
        measured = RuleResult(rule=RULE_OBJ, status=Status.PASSED, actual=rows, row_count=rows)
        (judged,) = judge_and_record(store, DS, f"run-{day}", RECENT + day * DAY, [measured])
    finally:
        store.close()
    return judged


def _cli(url: str, command: str, *more: str) -> int:
    return main(["history", command, "--history", url, "--dataset", DS, "--rule", RULE, *more])


def test_accept_undo_and_rebaseline_on_postgresql(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    for day, rows in enumerate([100, 102, 98, 101, 99]):
        _day(url, day, rows)
    assert _day(url, 5, 160).status is Status.FAILED
    assert _cli(url, "accept", "--run", "run-5", "--why", "new region", "--by", "ana") == 0
    assert _day(url, 6, 158).status is Status.PASSED
    assert _cli(url, "accept", "--run", "run-5", "--undo", "--why", "no", "--by", "bo") == 0
    assert _cli(url, "accept", "--run", "run-5", "--undo", "--why", "no") == 2
    since = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime((RECENT + 5 * DAY) / 1000))
    assert _cli(url, "rebaseline", "--since", since, "--why", "migrated", "--by", "cy") == 0
    skipped = _day(url, 7, 159)
    assert skipped.status is Status.SKIPPED and skipped.message == "needs 5 runs, has 1"
    capsys.readouterr()
    assert main(["history", "--history", url, "--dataset", DS, "--rule", RULE]) == 0
    out = capsys.readouterr().out
    assert "ana: accepted run run-5 as normal: new region" in out
    assert "bo: took back the accept of run run-5: no" in out
    assert "cy: started the baseline over from" in out
    assert "\tbefore the rebaseline\n" in out
    viewer = open_history(url, read_only=True)
    assert [r.action.value for r in viewer.feedback(DS, RULE)] == ["accept", "undo", "rebaseline"]
    viewer.close()
