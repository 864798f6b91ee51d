"""Rules of every kind, results, OpenLineage events, and DataHub's own file check."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from lineage_quality.kinds import RuleKind
from lineage_quality.results import RuleResult, Status
from lineage_quality.rules import Operator, Rule, Threshold
from lineage_quality.values.refs import DatasetRef

NS, NAME = "file", "/data/warehouse/orders"
DATASET_URN = "urn:li:dataset:(urn:li:dataPlatform:file,/data/warehouse/orders,PROD)"
REF = DatasetRef("outputs", 0, NS, NAME)

ZERO = Threshold(Operator.MUST_BE, 0)

# One valid rule per kind: each kind declares its own (`Kind.sample`, kinds/).
KIND_SAMPLES: dict[str, dict[str, Any]] = {k.value: dict(k.sample) for k in RuleKind}


def rule(kind: str | RuleKind, rule_id: str | None = None, **overrides: Any) -> Rule:
    kind = RuleKind(kind) if isinstance(kind, str) else kind
    kwargs: dict[str, Any] = {"threshold": ZERO, **KIND_SAMPLES[kind.value], **overrides}
    return Rule(id=rule_id or f"orders.{kind.value}", kind=kind, **kwargs)


def result(
    r: Rule,
    status: Status = Status.PASSED,
    actual: float | None = 0,
    failing_rows: int | None = None,
    row_count: int | None = 10,
    **kwargs: Any,
) -> RuleResult:
    if failing_rows is None and r.kind.counts_rows and actual is not None:
        failing_rows = int(actual)
    return RuleResult(
        rule=r,
        status=status,
        actual=actual,
        failing_rows=failing_rows,
        row_count=row_count,
        **kwargs,
    )


def event(
    run_id: str = "01912a3c-0000-7000-8000-000000000001",
    event_time: str = "2025-01-01T12:00:00.000Z",
    namespace: str = NS,
    name: str = NAME,
    facets: dict[str, Any] | None = None,
) -> dict[str, Any]:
    dataset: dict[str, Any] = {"namespace": namespace, "name": name}
    if facets:
        dataset["facets"] = facets
    return {
        "eventType": "COMPLETE",
        "eventTime": event_time,
        "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.53.0/integration/spark",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": run_id},
        "job": {"namespace": "spark", "name": "orders_job"},
        "inputs": [],
        "outputs": [dataset],
    }


def datahub_cli() -> str:
    return str(Path(sys.executable).with_name("datahub"))


def check_metadata_file(path: Path) -> str:
    """Run `datahub check metadata-file` (DataHub's own validation) and require exit 0."""
    env = {**os.environ, "DATAHUB_TELEMETRY_ENABLED": "false"}
    proc = subprocess.run(
        [datahub_cli(), "check", "metadata-file", str(path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout
