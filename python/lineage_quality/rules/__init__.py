"""The rule model: what a contract asks of a dataset."""

from lineage_quality.rules.model import Rule, RuleKind, Unit
from lineage_quality.rules.threshold import Operator, Threshold

__all__ = ["Operator", "Rule", "RuleKind", "Threshold", "Unit"]
