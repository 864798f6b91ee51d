"""A spy on the engine's fused scan: which columns each scan's metrics read."""

from __future__ import annotations

from typing import Any

import pytest

from lineage_quality.engine import run as engine_run


def scanned_columns(monkeypatch: pytest.MonkeyPatch) -> list[set[str]]:
    """Records, per fused scan, the columns of its metrics (the list fills as scans run)."""
    seen: list[set[str]] = []
    scan = engine_run._scanned

    def spy(df: Any, metrics: Any) -> Any:
        seen.append({m.column for m in metrics if m.column is not None})
        return scan(df, metrics)

    monkeypatch.setattr(engine_run, "_scanned", spy)
    return seen
