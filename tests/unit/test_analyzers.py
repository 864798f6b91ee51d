"""Every metric kind of the plan has its analyzer (engine/analyzers/): the runner never looks at a
metric's kind, so a kind without one could not be measured."""

from __future__ import annotations

from lineage_quality.engine.analyzers import ANALYZERS
from lineage_quality.engine.plan import Measure


def test_every_metric_kind_has_an_analyzer() -> None:
    assert set(ANALYZERS) == set(Measure)
