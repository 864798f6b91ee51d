"""Secrets never sit in the evaluator's environment (issue 9.1): `serve` reads its keys and tokens,
then removes them from its environment before the evaluator's JVM starts, so a contract's SQL can
never read them back with System.getenv -- nor from `/proc/<serve's pid>/environ`, the copy of
serve's initial environment every process of the same user can read (issue 49.5). And `serve`
refuses to listen off loopback without a key (issue 9.11)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from faultkit import (
    REPO_ROOT,
    RecordingSink,
    Sender,
    ServeProcess,
    java_descendants,
    make_event,
    openlineage_yml,
)

SECRETS = {
    "LINEAGE_QUALITY_API_KEY": "receiver-key-0123456789",
    "DATAHUB_GMS_TOKEN": "datahub-token-0123456789",
    "OPENLINEAGE__TRANSPORT__AUTH__API_KEY": "sink-key-0123456789",
    "PGPASSWORD": "history-password-0123456789",  # libpq's, for a PostgreSQL history
    "DATAHUB_GMS_URL": "http://lq:url-password-0123456789@127.0.0.1:9",  # a password in a URL
}

CONTRACT = """\
apiVersion: v3.1.0
kind: DataContract
id: secrets
version: 1.0.0
status: active
schema:
  - name: data
    customProperties:
      - {{property: openlineage.namespace, value: file}}
      - {{property: openlineage.name, value: "{path}"}}
    quality:
      - metric: rowCount
        mustBeGreaterThan: 0
"""


def test_the_evaluator_jvm_inherits_no_secret(tmp_path: Path) -> None:
    data = tmp_path / "data.csv"
    data.write_text("a\n1\n")
    contracts = tmp_path / "contracts"
    contracts.mkdir()
    (contracts / "c.yaml").write_text(CONTRACT.format(path=data))
    sink = RecordingSink()
    args = [
        "--contracts", str(contracts), "--port", "0", "--spool", str(tmp_path / "spool.db"),
        "--openlineage-config", str(openlineage_yml(tmp_path / "ol.yml", sink)),
    ]  # fmt: skip
    serve = ServeProcess(args, tmp_path / "serve.log", {**SECRETS, "LQ_TEST_MARKER": "visible"})
    try:
        event = make_event(0, 0, "COMPLETE", inputs=[{"namespace": "file", "name": str(data)}])
        assert Sender(serve.url, SECRETS["LINEAGE_QUALITY_API_KEY"]).post(event) == 201
        assert sink.wait_for(lambda s: len(s.events) == 1, timeout=120)
        facets = sink.events[0]["inputs"][0]["inputFacets"]
        assert facets["dataQualityAssertions"]["assertions"][0]["success"] is True
        jvms = java_descendants(serve.proc.pid)
        assert jvms, "the evaluator's JVM was not started"
        environ = Path(f"/proc/{jvms[0]}/environ").read_bytes().decode(errors="replace")
        assert "LQ_TEST_MARKER=visible" in environ  # the check can see the JVM's environment
        for name, value in SECRETS.items():
            assert name not in environ and value not in environ
        # nor where the JVM, a process of the same user, can read serve's own environment as it
        # started (issue 49.5: unsetenv leaves /proc/PID/environ as it was)
        own = Path(f"/proc/{serve.proc.pid}/environ").read_bytes().decode(errors="replace")
        assert "LQ_TEST_MARKER=visible" in own
        for name, value in SECRETS.items():
            assert name not in own and value not in own, name
    finally:
        serve.stop()


def test_serve_refuses_a_public_address_without_a_key(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "lineage_quality.cli", "serve", "--host", "0.0.0.0", "--port", "0"]
    result = subprocess.run(
        [*cmd, "--contracts", str(tmp_path)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert result.returncode == 2, result.stderr
    assert "refusing to listen on 0.0.0.0 without an API key" in result.stderr
