"""Actions: declared, defaulted from severity, read from each contract format, carried in params."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from lineage_quality.contracts import load_file
from lineage_quality.errors import ContractError
from lineage_quality.facets.assertions import assertion
from lineage_quality.kinds import RuleKind
from lineage_quality.results import RuleResult, Status
from lineage_quality.rules import Action, Operator, Rule, Threshold, effective_action


@pytest.mark.parametrize(
    ("action", "severity", "expected"),
    [
        (None, "error", Action.BLOCK),
        (None, "ERROR", Action.BLOCK),
        (None, "warn", Action.ALERT),
        (None, "warning", Action.ALERT),
        (None, "info", Action.LOG),
        (None, "MEDIUM", Action.ALERT),
        (None, "CRITICAL", Action.BLOCK),
        (None, None, Action.ALERT),
        (None, "something-else", Action.ALERT),
        ("log", "error", Action.LOG),
        ("QUARANTINE", "warn", Action.QUARANTINE),
    ],
)
def test_effective_action(action: str | None, severity: str | None, expected: Action) -> None:
    assert effective_action(action, severity) is expected


def test_unknown_action_is_refused() -> None:
    with pytest.raises(ValueError, match="action must be one of LOG, ALERT, BLOCK"):
        effective_action("EXPLODE", None)
    with pytest.raises(ValueError, match="action must be one of"):
        Rule(
            id="r",
            kind=RuleKind.ROW_COUNT,
            threshold=Threshold(Operator.GREATER_THAN, 0),
            action="EXPLODE",
        )


def _odcs(tmp_path: Path, quality: str) -> Path:
    path = tmp_path / "c.yaml"
    path.write_text(
        textwrap.dedent(
            """\
            apiVersion: v3.0.2
            kind: DataContract
            id: c
            name: c
            version: 1.0.0
            status: active
            schema:
              - name: orders
                customProperties:
                  - property: openlineage.name
                    value: /data/orders
                properties:
                  - name: id
                    quality:
            """
        )
        + textwrap.indent(textwrap.dedent(quality), " " * 10)
    )
    return path


def _rules(path: Path) -> list[Rule]:
    return [r for b in load_file(path) for r in b.rules]


def test_odcs_severity_error_blocks_unless_the_entry_says_otherwise(tmp_path: Path) -> None:
    all_rules = _rules(
        _odcs(
            tmp_path,
            """\
            - metric: nullValues
              mustBe: 0
              severity: error
            - metric: nullValues
              mustBe: 1
              severity: error
              customProperties:
                - property: action
                  value: alert
            - metric: nullValues
              mustBe: 2
              severity: info
            """,
        )
    )
    rules = [r for r in all_rules if r.kind is RuleKind.NULL_VALUES]
    assert [r.effective_action for r in rules] == [Action.BLOCK, Action.ALERT, Action.LOG]
    result = RuleResult(rule=rules[0], status=Status.FAILED, actual=3)
    assert assertion(result).params["action"] == "BLOCK"


def test_odcs_bad_action_names_the_entry(tmp_path: Path) -> None:
    path = _odcs(
        tmp_path,
        """\
        - metric: nullValues
          mustBe: 0
          customProperties:
            - property: action
              value: EXPLODE
        """,
    )
    with pytest.raises(ContractError) as info:
        load_file(path)
    text = str(info.value)
    assert "c.yaml" in text and "customProperties[0]" in text and "EXPLODE" in text


def test_schema_rules_json_action_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "rules.json"
    path.write_text(
        '{"dataset": {"namespace": "file", "name": "/data/orders"}, '
        '"rules": [{"field": "id", "required": true, "severity": "HIGH", "action": "BLOCK"}]}'
    )
    rules = [r for b in load_file(path) for r in b.rules]
    assert rules and all(r.effective_action is Action.BLOCK for r in rules)
