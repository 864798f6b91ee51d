"""Shared fixtures. One SparkSession for the whole test session (it is slow to start)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    from lineage_quality.evaluation.session import evaluator_session

    session = evaluator_session("local[2]")
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
