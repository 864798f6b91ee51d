from pathlib import Path

import pytest

from lineage_quality.errors import ConfigError
from lineage_quality.producer.forward import Forwarder


def _no_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("OPENLINEAGE_CONFIG", "OPENLINEAGE_URL", "OPENLINEAGE_DISABLED"):
        monkeypatch.delenv(name, raising=False)
    import os

    for name in list(os.environ):
        if name.startswith("OPENLINEAGE__"):
            monkeypatch.delenv(name)


def test_no_transport_configured_is_refused_not_printed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _no_config(monkeypatch, tmp_path)
    with pytest.raises(ConfigError, match="no OpenLineage transport configured"):
        Forwarder()


def test_the_usual_openlineage_configuration_is_used(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _no_config(monkeypatch, tmp_path)
    monkeypatch.setenv("OPENLINEAGE__TRANSPORT__TYPE", "file")
    monkeypatch.setenv("OPENLINEAGE__TRANSPORT__LOG_FILE_PATH", str(tmp_path / "events.jsonl"))
    monkeypatch.setenv("OPENLINEAGE__TRANSPORT__APPEND", "true")
    forwarder = Forwarder()
    forwarder.send(
        '{"eventType": "START", "run": {"runId": "r"}, "job": {"namespace": "n", "name": "j"}}'
    )
    assert '"runId": "r"' in (tmp_path / "events.jsonl").read_text()
    (tmp_path / "openlineage.yml").write_text("transport:\n  type: console\n")
    monkeypatch.delenv("OPENLINEAGE__TRANSPORT__TYPE")
    assert type(Forwarder().transport).__name__ == "ConsoleTransport"  # asked for explicitly
