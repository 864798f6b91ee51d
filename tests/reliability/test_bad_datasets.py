"""Datasets that cannot be evaluated: a path that does not exist, a corrupt file, a missing
column, a folder the producer may not read. Their rules become ERROR results (never a pass), the
event still goes on, and the producer keeps serving.

We run as root in CI, where `chmod 000` stops nothing; the permission test runs `lineage-quality
serve` without the capabilities that let root read anything (CAP_DAC_OVERRIDE and
CAP_DAC_READ_SEARCH, dropped with `setpriv`), which is what an ordinary user gets.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from faultkit import (
    CONTRACT,
    RecordingSink,
    Sender,
    ServeProcess,
    http_transport,
    make_event,
    record_fault,
)

from lineage_quality.contracts import load_contracts
from lineage_quality.producer import Evaluator, Forwarder, Producer, Spool
from lineage_quality.producer.settings import Settings

pytestmark = pytest.mark.spark


def contracts_for(folder: Path, datasets: dict[str, Path]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for key, path in datasets.items():
        (folder / f"{key}.yaml").write_text(CONTRACT.format(key=key, path=path))
    return folder


def results(event: dict[str, Any]) -> dict[str, tuple[bool, str, str]]:
    """rule -> (success, status, error) for the `*_id_not_null` rules of the event."""
    out = {}
    for role, key in (("inputs", "inputFacets"), ("outputs", "facets")):
        for ds in event.get(role) or []:
            for a in (ds.get(key) or {}).get("dataQualityAssertions", {}).get("assertions", []):
                if a["name"].endswith("_id_not_null"):
                    params = a.get("params") or {}
                    status = params.get("status", "PASSED" if a["success"] else "FAILED")
                    out[a["name"]] = (a["success"], status, params.get("error") or "")
    return out


def complete_event(inputs: list[Path], outputs: list[Path], seq: int = 1) -> dict[str, Any]:
    return make_event(
        1,
        seq,
        "COMPLETE",
        inputs=[{"namespace": "file", "name": str(p)} for p in inputs],
        outputs=[{"namespace": "file", "name": str(p)} for p in outputs],
    )


def test_unreadable_datasets_become_error_results_and_the_event_goes_on(
    tmp_path: Path, spark: Any, sink: RecordingSink
) -> None:
    data = tmp_path / "data"
    good, missing, corrupt, no_column = (data / n for n in ("good", "missing", "corrupt", "nocol"))
    spark.createDataFrame([(1,), (2,)], "id INT").write.parquet(str(good))
    spark.createDataFrame([(1,), (2,)], "other INT").write.parquet(str(no_column))
    corrupt.mkdir(parents=True)
    (corrupt / "part-00000.parquet").write_bytes(b"PAR1 this is not a parquet file PAR1")
    paths = {"good": good, "missing": missing, "corrupt": corrupt, "nocol": no_column}
    bindings = load_contracts([contracts_for(tmp_path / "contracts", paths)])
    producer = Producer(
        Evaluator(bindings, spark=spark),
        Forwarder(http_transport(sink)),
        Spool(tmp_path / "spool.db"),
        Settings.of(port=0),
    )
    producer.start()
    sender = Sender(producer.url)
    try:
        assert sender.post(complete_event([good, missing, corrupt], [no_column])) == 201
        assert sender.post(make_event(1, 2, "OTHER")) == 201  # still serving, in order
        assert sink.wait_for(lambda s: len(s.events) == 2, timeout=120)
    finally:
        sender.close()
        producer.stop()
    got = results(sink.events[0])
    assert got["good_id_not_null"] == (True, "PASSED", "")
    for rule, words in {
        "missing_id_not_null": "does not exist",
        "corrupt_id_not_null": "corrupt",
        "nocol_id_not_null": "id",
    }.items():
        success, status, error = got[rule]
        assert (success, status) == (False, "ERROR"), rule
        assert words in error.lower() or words in error, (rule, error)
    record_fault(
        "missing path, corrupt file, missing column",
        sent=2,
        accepted=2,
        forwarded=len(sink.received()),
        error_rules=sum(1 for s, st, _ in got.values() if st == "ERROR"),
    )


def test_permission_denied_is_an_error_result(tmp_path: Path, spark: Any) -> None:
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("root without setpriv: cannot take away root's right to read anything")
        drop = "-dac_override,-dac_read_search"
        prefix = ["setpriv", f"--bounding-set={drop}", f"--inh-caps={drop}"]
    else:
        prefix = []
    locked = tmp_path / "data" / "locked"
    spark.createDataFrame([(1,), (2,)], "id INT").write.parquet(str(locked))
    locked.chmod(0)
    sink = RecordingSink()
    contracts = contracts_for(tmp_path / "contracts", {"locked": locked})
    args = [
        "--contracts", str(contracts),
        "--port", "0",
        "--spool", str(tmp_path / "spool.db"),
        "--spark-master", "local[1]",
        "--evaluation-timeout", "0",
    ]  # fmt: skip
    env = {"OPENLINEAGE__TRANSPORT__TYPE": "http", "OPENLINEAGE__TRANSPORT__URL": sink.url}
    serve = ServeProcess(args, tmp_path / "serve.log", env, prefix=prefix)
    sender = Sender(serve.url)
    try:
        assert sender.post(complete_event([locked], [])) == 201
        assert sink.wait_for(lambda s: len(s.events) == 1, timeout=240), serve.log_path.read_text()[
            -3000:
        ]
    finally:
        sender.close()
        serve.stop()
        sink.close()
        locked.chmod(0o755)
    success, status, error = results(sink.events[0])["locked_id_not_null"]
    assert (success, status) == (False, "ERROR")
    assert "permission denied" in error.lower() or "accessdenied" in error.lower(), error
    record_fault("permission denied", sent=1, accepted=1, forwarded=len(sink.received()))
