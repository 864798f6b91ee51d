"""Evaluation: plan (pure), verdicts (pure), run (Spark)."""

from lineage_quality.engine.plan import Plan, build_plan
from lineage_quality.engine.verdicts import verdict

__all__ = ["Plan", "build_plan", "verdict"]
