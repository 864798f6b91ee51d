"""The MCP file sink writes what `datahub check metadata-file` accepts, across restarts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("datahub.emitter.mcp", reason="pip install 'lineage-quality[datahub]'")

from datahub.ingestion.sink.file import write_metadata_file
from samples import REF, check_metadata_file, event, result, rule

from lineage_quality.datahub.file import McpFileWriter
from lineage_quality.datahub.mcps import event_mcps, platform_mcp
from lineage_quality.errors import ConfigError
from lineage_quality.kinds import RuleKind
from lineage_quality.results import Status


def _every_kind_and_status() -> list:  # type: ignore[type-arg]
    results = []
    statuses = list(Status)
    for i, kind in enumerate(RuleKind):
        status = statuses[i % len(statuses)]
        failed = status in (Status.ERROR, Status.SKIPPED)
        results.append(
            result(
                rule(kind),
                status,
                actual=None if failed else 1.0,
                message="boom" if status is Status.ERROR else None,
                skip_reason="dependency failed" if status is Status.SKIPPED else None,
            )
        )
    return results


def test_every_kind_and_status_pass_datahubs_check(tmp_path: Path) -> None:
    path = tmp_path / "out" / "mcps.json"
    writer = McpFileWriter(path)
    mcps = event_mcps(event(), {REF: _every_kind_and_status()})
    writer.write([platform_mcp(), *mcps])
    out = check_metadata_file(path)
    assert f"{len(mcps) + 1} MCEs found - all valid" in out


def test_appends_across_writers_and_matches_datahubs_own_format(tmp_path: Path) -> None:
    path = tmp_path / "mcps.json"
    mcps = event_mcps(event(), {REF: [result(rule("nullValues"))]})
    McpFileWriter(path).write(mcps)
    McpFileWriter(path).write(mcps)  # a restarted producer keeps the records already there
    McpFileWriter(path).write([])
    records = json.loads(path.read_text())
    assert len(records) == 2 * len(mcps)
    check_metadata_file(path)
    # Same records as DataHub's own writer produces from the same MCPs.
    theirs = tmp_path / "theirs.json"
    write_metadata_file(theirs, [*mcps, *mcps])
    assert json.loads(theirs.read_text()) == records


def test_an_unreadable_file_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "mcps.json"
    path.write_text('{"not": "an array"}')
    with pytest.raises(ConfigError, match="JSON array"):
        McpFileWriter(path)
    path.write_text("[ broken")
    with pytest.raises(ConfigError, match="not a readable MCP file"):
        McpFileWriter(path)
