"""The minimum history of a band (issue 49, item 7): a stddev rule is SKIPPED until its baseline
holds 7 runs, a seasonal one until 3 runs of the same weekday and hour, whatever a smaller
`minRuns` says (a band from 2-3 runs is too tight: normal values fail it). The reason says how
many runs are needed and how many are kept; never a pass. Settable per rule (`minHistory`, in
the JSON rules format and ODCS) and by serve's / check's `--history-min-stddev` and
`--history-min-seasonal` (Settings; attach's `history_min_*`)."""

from __future__ import annotations

import datetime
import json
import time
from pathlib import Path
from typing import Any

import pytest

from lineage_quality.cli.main import build_parser
from lineage_quality.contracts.schema_json import parse_schema_json
from lineage_quality.errors import ConfigError, ContractError
from lineage_quality.history import Point, history_verdict, open_history
from lineage_quality.kinds import RuleKind
from lineage_quality.producer.settings import Settings
from lineage_quality.results import RuleResult, Status
from lineage_quality.rules import Operator, Rule, Threshold
from lineage_quality.rules.history import HistoryMinimums, parse_history

DAY = 86_400_000
WEEK = 7 * DAY
T0 = 1_800_000_000_000
NOISE = [10.0, 10.0, 11.0, 10.0, 10.0, 11.0, 10.0, 10.0, 11.0]


def _rule(history: dict[str, Any]) -> Rule:
    return Rule(
        id="r", kind=RuleKind.NULL_VALUES, columns=("email",),
        threshold=Threshold(Operator.GREATER_OR_EQUAL, 0), history=parse_history(history),
    )  # fmt: skip


def _judge(rule: Rule, values: list[float], now: float, step: int = DAY, **kw: Any) -> RuleResult:
    past = [Point(f"d{i}", T0 + i * step, v, "PASSED") for i, v in enumerate(values)]
    measured = RuleResult(rule=rule, status=Status.PASSED, actual=now)
    return history_verdict(measured, past, T0 + len(values) * step, **kw)


def test_a_stddev_rule_waits_for_its_minimum_history_whatever_min_runs_says() -> None:
    rule = _rule({"compare": "stddev", "runs": 7, "minRuns": 2})
    # before: 11 after two 10s failed (sd 0); now SKIPPED, with how many are needed and kept
    early = _judge(rule, NOISE[:2], 11.0)
    assert early.status is Status.SKIPPED and not early.success
    assert early.skip_reason == "HISTORY_TOO_SHORT"
    assert early.message == (
        "needs 7 runs before it can fail, has 2 kept (the minimum history of a stddev rule: "
        "its minHistory, or --history-min-stddev)"
    )
    account = dict(early.baseline or ())
    assert (account["runs"], account["needed"]) == (2, 7)
    assert _judge(rule, NOISE[:6], 11.0).status is Status.SKIPPED
    judged = _judge(rule, NOISE[:7], 11.0)
    assert judged.status is Status.PASSED and dict(judged.baseline or ())["n"] == 7
    assert _judge(rule, NOISE[:7], 30.0).status is Status.FAILED  # an anomaly still fails
    # the setting lowers (or raises) the default; a rule's own minHistory wins over it
    assert _judge(rule, NOISE[:2], 11.0, minimums=HistoryMinimums(stddev=2)).status is (
        Status.FAILED
    )
    assert _judge(rule, NOISE[:7], 11.0, minimums=HistoryMinimums(stddev=8)).status is (
        Status.SKIPPED
    )
    own = _rule({"compare": "stddev", "runs": 7, "minRuns": 2, "minHistory": 3})
    assert _judge(own, NOISE[:3], 11.0, minimums=HistoryMinimums(stddev=8)).status is (
        Status.PASSED
    )
    assert own.history is not None and own.history.params()["minHistory"] == 3
    # a minRuns above the minimum still holds, with its own words
    wide = _rule({"compare": "stddev", "runs": 10})
    assert _judge(wide, NOISE, 10.0).message == "needs 10 runs, has 9"


def test_a_window_shorter_than_the_minimum_is_judged_once_the_minimum_is_kept() -> None:
    rule = _rule({"compare": "stddev", "runs": 3})
    assert _judge(rule, NOISE[:6], 10.0).status is Status.SKIPPED
    judged = _judge(rule, NOISE[:7], 10.0)
    assert judged.status is Status.PASSED and dict(judged.baseline or ())["n"] == 3


def test_a_seasonal_rule_waits_for_three_runs_of_its_weekday_and_hour() -> None:
    rule = _rule({"compare": "seasonal", "runs": 4, "minRuns": 2})
    two = _judge(rule, [10.0, 10.0], 11.0, step=WEEK)
    assert two.status is Status.SKIPPED and two.message == (
        "needs 3 runs of the same weekday and hour before it can fail, has 2 kept (the minimum "
        "history of a seasonal rule: its minHistory, or --history-min-seasonal)"
    )
    assert _judge(rule, [10.0, 10.0, 11.0], 11.0, step=WEEK).status is Status.PASSED
    own = _rule({"compare": "seasonal", "runs": 4, "minRuns": 2, "minHistory": 2})
    assert _judge(own, [10.0, 10.0], 11.0, step=WEEK).status is Status.FAILED
    # a window of 2 weeks holds at most 2 runs of a weekday: its minimum is at most that
    short = _rule({"compare": "seasonal", "runs": 2})
    assert _judge(short, [10.0, 11.0], 10.5, step=WEEK).status is Status.PASSED


@pytest.mark.parametrize(
    ("history", "message"),
    [
        ({"compare": "relativeChange", "minHistory": 7}, "minHistory applies to stddev"),
        ({"compare": "stddev", "minHistory": 1}, "minHistory of at least 2"),
        ({"compare": "stddev", "minHistory": "7"}, "minHistory must be a whole number"),
        (
            {"compare": "seasonal", "runs": 4, "minHistory": 5},
            r"minHistory \(5\) is more than runs \(4\)",
        ),
    ],
)
def test_a_bad_min_history_is_refused(history: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_history(history)


def test_both_contract_formats_declare_it() -> None:
    text = json.dumps(
        {"rules": [{"field": "email", "type": "string"}],
         "history": [{"metric": "nullValues", "field": "email", "compare": "stddev",
                      "minHistory": 4}]}
    )  # fmt: skip
    (rule,) = [r for r in parse_schema_json(text, "c.json").rules if r.history is not None]
    assert rule.history is not None and rule.history.min_history == 4
    bad = text.replace('"minHistory": 4', '"minHistory": 0')
    with pytest.raises(ContractError, match=r"c.json: history\[0\]: .*minHistory"):
        parse_schema_json(bad, "c.json")
    from lineage_quality.contracts.odcs import parse_odcs

    odcs = """apiVersion: v3.0.2
kind: DataContract
id: c
version: 1.0.0
status: active
schema:
  - name: orders
    properties:
      - name: email
        quality:
          - metric: nullValues
            customProperties:
              - property: lineageQuality.history
                value: {compare: stddev, runs: 14, minRuns: 3, minHistory: 5}
"""
    (bound,) = parse_odcs(odcs, "c.yaml")
    (rule,) = [r for r in bound.rules if r.history is not None]
    assert rule.history is not None and rule.history.min_history == 5


def test_serve_check_and_attach_take_the_setting(tmp_path: Path) -> None:
    from lineage_quality.cli.history import minimums_of
    from lineage_quality.cli.serve import _settings

    parser = build_parser()
    serve = parser.parse_args(["serve", "--contracts", "c", "--history-min-stddev", "10"])
    assert _settings(serve, None, 0).history.minimums == HistoryMinimums(10, 3)
    defaults = parser.parse_args(["serve", "--contracts", "c"])
    assert _settings(defaults, None, 0).history.minimums == HistoryMinimums(7, 3)
    check = parser.parse_args(
        ["check", "--contract", "c", "--dataset", "d", "--history-min-seasonal", "2"]
    )
    assert minimums_of(check) == HistoryMinimums(7, 2)
    one = parser.parse_args(["check", "--contract", "c", "--dataset", "d",
                             "--history-min-stddev", "1"])  # fmt: skip
    with pytest.raises(ConfigError, match="from 2 to 1000"):
        minimums_of(one)
    with pytest.raises(ConfigError, match="history_min_stddev must be a whole number"):
        _settings(parser.parse_args(["serve", "--contracts", "c", "--history-min-stddev", "1"]),
                  None, 0)  # fmt: skip
    assert Settings.of(history_min_seasonal=4).history.minimums == HistoryMinimums(7, 4)


def test_the_evaluator_judges_with_the_setting(tmp_path: Path) -> None:
    """serve's --history-min-stddev reaches the verdicts of an evaluation."""
    from lineage_quality.evaluation.evaluator import Evaluator
    from lineage_quality.values.refs import DatasetRef

    store = open_history(tmp_path / "h.db")
    rule = _rule({"compare": "stddev", "runs": 7, "minRuns": 2})
    evaluator = Evaluator([], history=store, history_minimums=HistoryMinimums(stddev=2))
    now = int(time.time() * 1000) // DAY * DAY - 10 * DAY
    statuses = []
    for day, value in enumerate([10.0, 10.0, 11.0]):
        at = datetime.datetime.fromtimestamp((now + day * DAY) / 1000, datetime.UTC)
        event = {"run": {"runId": f"run-{day}"}, "eventTime": at.isoformat(),
                 "outputs": [{"namespace": "file", "name": "/o"}]}  # fmt: skip
        (result,) = evaluator._against_history(
            event, DatasetRef("outputs", 0, "file", "/o"),
            [RuleResult(rule=rule, status=Status.PASSED, actual=value)],
        )  # fmt: skip
        statuses.append(result.status)
    store.close()
    assert statuses == [Status.SKIPPED, Status.SKIPPED, Status.FAILED]
