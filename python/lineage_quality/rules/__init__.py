"""The rule model: what a contract asks of a dataset."""

from lineage_quality.rules.model import STATISTICS, Rule, RuleKind, Unit
from lineage_quality.rules.threshold import Operator, Threshold

__all__ = ["STATISTICS", "Operator", "Rule", "RuleKind", "Threshold", "Unit"]
