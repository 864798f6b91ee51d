"""On S3 (s3proxy, path-style, with hadoop-aws matching PySpark's Hadoop), under the real listener
(issue 25): a job writes `s3a://lake/orders` (overwrite, then append), `serve` evaluates them.

The listener names an `s3a://` write `s3://lake` + `orders`; the contract names the bucket the way
the job wrote it, `s3a://lake`, and still binds (before, it silently matched nothing). The files a
run left are listed through Hadoop's S3A (JVM helper FileListing), and the secret key never
reaches serve's log."""

from __future__ import annotations

from pathlib import Path

import pytest

from .s3server import S3Server
from .serve_process import assertions_of, completes, serve_process

CONTRACTS = Path(__file__).resolve().parent / "contracts" / "s3"
# hadoop-aws (jvm-config/test-pom.xml) matches the Hadoop that PySpark 3.5 ships.
pytestmark = pytest.mark.spark35_only


def test_a_job_on_s3_is_evaluated_by_serve(s3_server: S3Server, tmp_path: Path) -> None:
    s3_server.create_bucket("lake")
    conf = s3_server.spark_conf(ship_jars=False)
    with serve_process(tmp_path / "serve", CONTRACTS, conf) as serve:
        for mode, rows in (("overwrite", 3), ("append", 2)):
            serve.submit("files_job.py", ["s3a://lake/orders", mode, str(rows)], conf, tmp_path,
                         "local[1]")  # fmt: skip
            serve.wait_for(
                lambda ev, mode=mode: any(
                    assertions_of(e, "orders") for e in completes(ev, "") if _mode(e) == mode
                )
            )
        events = serve.events()
        log = serve.log()
    judged = [e for e in completes(events, "") if assertions_of(e, "orders")]
    assert len(judged) == 2
    for event in judged:
        (out,) = event["outputs"]
        assert (out["namespace"], out["name"]) == ("s3://lake", "orders")  # the listener's naming
    values = [
        {name: (a["params"]["status"], a.get("actual")) for name, a in found.items()}
        for found in (assertions_of(e, "orders") for e in judged)
    ]
    assert values[0]["orders_rows"] == ("PASSED", "3")
    assert values[1]["orders_rows"] == ("PASSED", "5")  # the append: the dataset as of its end
    for found in values:
        assert found["orders_code_pattern"] == ("PASSED", "0")
        assert found["orders_code_not_null"] == ("PASSED", "0")
    # the append judged on its own file, merged with the kept states of the overwrite's
    # (docs/evaluation.md, "Appends"): on S3 as on local files
    scope = assertions_of(judged[1], "orders")["orders_rows"]["params"]["scope"]
    assert scope.startswith("the table: 1 kept state(s) of its 1 older file(s)"), scope
    assert scope.endswith("merged with the run's 1 file(s)"), scope
    assert s3_server.secret_key not in log


def _mode(event: dict[str, object]) -> str:
    outputs = event.get("outputs") or []
    facets = outputs[0].get("facets", {}) if outputs else {}  # type: ignore[union-attr]
    state = facets.get("lifecycleStateChange", {}).get("lifecycleStateChange")
    return "overwrite" if state == "OVERWRITE" else "append"
