"""The rule model: what a contract asks of a dataset."""

from lineage_quality.rules.actions import ACTIONS, Action, effective_action, parse_action
from lineage_quality.rules.model import STATISTICS, Rule, RuleKind, Unit
from lineage_quality.rules.threshold import Operator, Threshold

__all__ = [
    "ACTIONS",
    "STATISTICS",
    "Action",
    "Operator",
    "Rule",
    "RuleKind",
    "Threshold",
    "Unit",
    "effective_action",
    "parse_action",
]
