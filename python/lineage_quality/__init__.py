"""lineage-quality: data-quality rules from data contracts, evaluated on the datasets of Spark
jobs and attached to their OpenLineage events."""

from lineage_quality.contracts import BoundRules, DatasetPattern, load_contracts
from lineage_quality.driver import attach, verify
from lineage_quality.errors import (
    ConfigError,
    ContractError,
    DatasetError,
    LineageQualityError,
    QualityGateFailed,
)
from lineage_quality.kinds import RuleKind
from lineage_quality.results import RuleResult, Status
from lineage_quality.rules import Operator, Rule, Threshold, Unit
from lineage_quality.version import __version__

__all__ = [
    "BoundRules",
    "ConfigError",
    "ContractError",
    "DatasetError",
    "DatasetPattern",
    "LineageQualityError",
    "Operator",
    "QualityGateFailed",
    "Rule",
    "RuleKind",
    "RuleResult",
    "Status",
    "Threshold",
    "Unit",
    "__version__",
    "attach",
    "load_contracts",
    "verify",
]
