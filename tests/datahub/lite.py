"""DataHub's own local store (`datahub lite`, the sqlite engine of acryl-datahub) in a scratch
HOME: import an MCP file with DataHub's code, read entities back with `datahub lite get`."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from samples import datahub_cli


class Lite:
    def __init__(self, home: Path) -> None:
        home.mkdir(parents=True, exist_ok=True)
        (home / ".datahubenv").write_text(
            "gms:\n  server: http://localhost:8080\n"
            f"lite:\n  type: sqlite\n  config:\n    file: {home / 'lite.db'}\n"
        )
        self.env = {**os.environ, "HOME": str(home), "DATAHUB_TELEMETRY_ENABLED": "false"}

    def _run(self, *args: str) -> str:
        proc = subprocess.run(
            [datahub_cli(), "lite", *args],
            capture_output=True,
            text=True,
            env=self.env,
            timeout=300,
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return proc.stdout

    def import_file(self, path: Path) -> None:
        self._run("import", "--file", str(path))

    def get(self, urn: str) -> dict[str, Any]:
        """`datahub lite get --urn URN`: the entity as the CLI prints it."""
        out: dict[str, Any] = json.loads(self._run("get", "--urn", urn))
        return out

    def get_many(self, urns: list[str]) -> dict[str, dict[str, Any]]:
        """The same as `get` for many URNs in one process (what `lite get` calls: one CLI start
        per URN would take minutes)."""
        script = (
            "import json, sys\n"
            "from datahub.cli.lite_cli import _get_datahub_lite\n"
            "lite = _get_datahub_lite(read_only=True)\n"
            "def get(u):\n"
            "    return lite.get(id=u, aspects=[], as_of=None, details=False)\n"
            "print(json.dumps({u: get(u) for u in json.load(sys.stdin)}))\n"
        )
        proc = subprocess.run(
            [str(Path(datahub_cli()).with_name("python")), "-c", script],
            input=json.dumps(urns),
            capture_output=True,
            text=True,
            env=self.env,
            timeout=300,
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        out: dict[str, dict[str, Any]] = json.loads(proc.stdout)
        return out


def assert_round_trip(path: Path, home: Path) -> int:
    """Import the MCP file at `path` with `datahub lite import`, read every entity back, and
    require each versioned aspect equal to the last one the file holds for it (timeseries run
    events are not kept by lite). Returns how many aspects were compared."""
    from datahub.emitter.mcp import MetadataChangeProposalWrapper
    from datahub.emitter.serialization_helper import post_json_transform

    lite = Lite(home)
    lite.import_file(path)
    latest: dict[tuple[str, str], Any] = {}
    for record in json.loads(path.read_text()):
        mcp = MetadataChangeProposalWrapper.from_obj(record)
        assert isinstance(mcp, MetadataChangeProposalWrapper) and mcp.aspectName is not None
        if mcp.aspectName != "assertionRunEvent":
            latest[(mcp.entityUrn, mcp.aspectName)] = mcp.aspect
    stored = lite.get_many(sorted({urn for urn, _ in latest}))
    for (urn, name), aspect in latest.items():
        assert name in stored[urn], (urn, name)
        assert type(aspect).from_obj(post_json_transform(stored[urn][name])) == aspect, (urn, name)
    contract = next((u for u, n in latest if n == "dataContractProperties"), None)
    if contract is not None:
        assert lite.get(contract) == stored[contract]  # the CLI's `datahub lite get`, once
    return len(latest)
