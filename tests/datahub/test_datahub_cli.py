"""`serve --datahub-*`: configuration errors at start-up; the core without acryl-datahub."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import lineage_quality.datahub
from lineage_quality.cli import build_parser, main
from lineage_quality.datahub.build import build_sink
from lineage_quality.datahub.config import DataHubConfig
from lineage_quality.errors import ConfigError

CONTRACTS = str(Path(__file__).parent / "contracts")
HINT = "pip install 'lineage-quality[datahub]'"


def test_public_api_is_pinned() -> None:
    assert sorted(lineage_quality.datahub.__all__) == [
        "DataHubConfig",
        "DataHubSink",
        "DatasetName",
        "NamingConfig",
        "build_sink",
        "dataset_name",
        "event_mcps",
        "require_sdk",
    ]


def test_serve_options() -> None:
    args = build_parser().parse_args(
        [
            "serve",
            "--contracts",
            CONTRACTS,
            "--datahub-gms",
            "http://gms:8080",
            "--datahub-file",
            "out.json",
            "--datahub-env",
            "dev",
            "--datahub-platform-instance",
            "lake",
        ]
    )
    assert (args.datahub_gms, args.datahub_file) == ("http://gms:8080", "out.json")
    assert (args.datahub_env, args.datahub_platform_instance) == ("dev", "lake")


def test_token_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATAHUB_GMS_TOKEN", "tok")
    config = DataHubConfig.from_options(gms_url="http://gms:8080", env="dev")
    assert (config.token, config.naming.env, config.enabled) == ("tok", "DEV", True)
    assert not DataHubConfig.from_options().enabled


def test_missing_sdk_is_a_config_error_naming_the_extra(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "datahub.emitter.mcp", None)  # as if not installed
    with pytest.raises(ConfigError, match=HINT.replace("[", r"\[").replace("]", r"\]")):
        build_sink(DataHubConfig(file=str(tmp_path / "x.json")))


def test_serve_fails_at_start_up(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spool = str(tmp_path / "spool.db")
    base = ["serve", "--contracts", CONTRACTS, "--spool", spool, "--port", "0"]
    assert main([*base, "--datahub-env", "DEV"]) == 2
    assert "need --datahub-gms or --datahub-file" in capsys.readouterr().err
    pytest.importorskip("datahub.emitter.mcp")
    assert main([*base, "--datahub-file", str(tmp_path / "x.json"), "--datahub-env", "MARS"]) == 2
    assert "not a DataHub FabricType" in capsys.readouterr().err
    # Without the SDK importable, serve must refuse to start (in a fresh interpreter: in this one
    # the SDK may already be imported, and a serve that started would wait for a signal).
    code = (
        "import sys\n"
        "sys.modules['datahub'] = None\n"
        "from lineage_quality.cli import main\n"
        f"sys.exit(main({[*base, '--datahub-file', str(tmp_path / 'x.json')]!r}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert out.returncode == 2, out.stderr
    assert HINT in out.stderr


def test_core_imports_without_the_sdk() -> None:
    code = (
        "import sys\n"
        "sys.modules['datahub'] = None\n"  # import datahub -> ImportError
        "import lineage_quality, lineage_quality.cli, lineage_quality.datahub\n"
        "from lineage_quality.datahub import DataHubConfig, dataset_name\n"
        "from lineage_quality.producer.service import Producer\n"
        "assert dataset_name('s3://b', 'k').platform == 's3'\n"
        "try:\n"
        "    lineage_quality.datahub.build_sink(DataHubConfig(gms_url='http://x'))\n"
        "except lineage_quality.ConfigError as exc:\n"
        "    print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert HINT in out.stdout
