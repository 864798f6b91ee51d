"""Fixtures for the end-to-end tests: a real Marquez API server."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from marquez_server import (
    MARQUEZ_ARTIFACT,
    MarquezHandle,
    compose_marquez,
    docker_compose_usable,
    resolve_marquez_jar,
    start_marquez,
    start_postgres,
)

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def marquez(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MarquezHandle]:
    """One Marquez for the whole session: docker compose if a Docker engine answers, else
    local PostgreSQL + the marquez-api jar. Skips when the jar cannot be fetched."""
    if docker_compose_usable():
        with compose_marquez(REPO_ROOT) as handle:
            yield handle
        return
    jar, reason = resolve_marquez_jar(REPO_ROOT)
    if jar is None:
        message = (
            f"no Marquez to test against: {MARQUEZ_ARTIFACT} is not resolvable from the "
            f"configured Maven repositories: {reason}"
        )
        # A missing Marquez fails the run: a skipped e2e test is not a passed one. Developers
        # without the jar can opt out explicitly.
        if os.environ.get("LINEAGE_QUALITY_ALLOW_NO_MARQUEZ") == "1":
            pytest.skip(message)
        pytest.fail(message + " (set LINEAGE_QUALITY_ALLOW_NO_MARQUEZ=1 to skip instead)")
    workdir = tmp_path_factory.mktemp("marquez")
    with start_postgres(workdir) as pg, start_marquez(jar, pg, workdir) as handle:
        yield handle
