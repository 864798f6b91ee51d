"""The rule model: what a contract asks of a dataset. The kinds a rule can measure are in
`lineage_quality.kinds` (RuleKind)."""

from lineage_quality.rules.actions import ACTIONS, Action, effective_action, parse_action
from lineage_quality.rules.model import STATISTICS, Kind, KindOptions, Rule, Unit
from lineage_quality.rules.threshold import Operator, Threshold

__all__ = [
    "ACTIONS",
    "STATISTICS",
    "Action",
    "Kind",
    "KindOptions",
    "Operator",
    "Rule",
    "Threshold",
    "Unit",
    "effective_action",
    "parse_action",
]
