"""REST emission against a local stand-in GMS: the requests are what the SDK's
DatahubRestEmitter sends (OpenAPI v3 on new servers, Rest.li batch on old ones) and every body
decodes with DataHub's own classes. A refusing or absent GMS never raises into the producer."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import pytest

pytest.importorskip("datahub.emitter.mcp", reason="pip install 'lineage-quality[datahub]'")

from fake_gms import decode, fake_gms
from samples import DATASET_URN, REF, event, result, rule

from lineage_quality.datahub.config import DataHubConfig
from lineage_quality.datahub.mcps import event_mcps
from lineage_quality.datahub.sink import DataHubSink
from lineage_quality.results import Status

RESULTS = {
    REF: [
        result(rule("nullValues"), Status.PASSED),
        result(rule("rowCount"), Status.FAILED, actual=0, row_count=0),
        result(rule("invalidValues"), Status.ERROR, actual=None, message="bad pattern"),
    ]
}


def _sink(url: str, monkeypatch: pytest.MonkeyPatch, token: str | None = "secret") -> DataHubSink:
    if token is None:
        monkeypatch.delenv("DATAHUB_GMS_TOKEN", raising=False)
    else:
        monkeypatch.setenv("DATAHUB_GMS_TOKEN", token)
    return DataHubSink.from_config(DataHubConfig.from_options(gms_url=url))


@pytest.mark.parametrize(
    ("version", "path_prefix"),
    [("v1.4.0.3", "/openapi/v3/entity/"), ("v0.14.1", "/aspects?action=ingestProposalBatch")],
    ids=["openapi", "restli"],
)
def test_rest_requests_decode_with_datahub_classes(
    version: str, path_prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with fake_gms(version) as gms:
        sink = _sink(gms.url, monkeypatch)
        sink.emit(event(), RESULTS)
        sink.close()
        assert (sink.emitted, sink.failed) == (1, 0)
        gets = [r for r in gms.requests if r.method == "GET"]
        assert [g.path for g in gets] == ["/config"]  # how the SDK chooses its endpoint
        posts = gms.posts()
        assert posts and all(p.path.startswith(path_prefix) for p in posts)
        for p in posts:
            assert p.headers["Authorization"] == "Bearer secret"
            assert p.headers["Content-Type"] == "application/json"
            assert "async=false" in p.path or p.json().get("async") == "false"
        received = [m for p in posts for m in decode(p)]

    expected = event_mcps(event(), RESULTS)
    key = lambda m: (m.entityUrn, m.aspectName)  # noqa: E731
    got = {key(m): m for m in received}
    assert got.pop(("urn:li:dataPlatform:lineage-quality", "dataPlatformInfo"))
    assert sorted(got) == sorted(key(m) for m in expected)
    for m in expected:
        assert got[key(m)].aspect == m.aspect
    runs = [m.aspect for m in received if m.aspectName == "assertionRunEvent"]
    assert {r.asserteeUrn for r in runs} == {DATASET_URN}  # type: ignore[union-attr]
    assert sorted(r.result.type for r in runs) == ["ERROR", "FAILURE", "SUCCESS"]  # type: ignore[union-attr]


def test_no_token_no_authorization_header(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("DATAHUB_SYSTEM_CLIENT_ID", "DATAHUB_SYSTEM_CLIENT_SECRET"):
        monkeypatch.delenv(var, raising=False)
    with fake_gms() as gms:
        sink = _sink(gms.url, monkeypatch, token=None)
        sink.emit(event(), RESULTS)
        sink.close()
        assert gms.posts() and all("Authorization" not in p.headers for p in gms.posts())


def test_a_refusing_gms_is_logged_not_raised(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    with fake_gms(ingest_status=400) as gms:
        sink = _sink(gms.url, monkeypatch)
        sink.emit(event(), RESULTS)  # never raises
        sink.emit(event(run_id="run-2"), RESULTS)
        sink.close()
        assert (sink.emitted, sink.failed) == (0, 2)
        assert len(gms.posts()) >= 2
    assert "did not take" in caplog.text


def test_an_absent_gms_does_not_block(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    file = tmp_path / "mcps.json"
    config = DataHubConfig(gms_url=f"http://127.0.0.1:{port}", file=str(file), retry_max_times=1)
    sink = DataHubSink.from_config(config)
    started = time.monotonic()
    for i in range(5):
        sink.emit(event(run_id=f"run-{i}"), RESULTS)
    assert time.monotonic() - started < 1.0  # emit only queues
    assert sink.flush(timeout=60)
    # One attempt (with the SDK's own retries), then the cool-down refuses the rest at once.
    assert time.monotonic() - started < 30
    sink.close()
    assert (sink.failed, sink.emitted) == (5, 0)
    assert "failed recently" in caplog.text
    runs = [r for r in json.loads(file.read_text()) if r["aspectName"] == "assertionRunEvent"]
    assert len(runs) == 5 * 3  # the file writer still got every batch
