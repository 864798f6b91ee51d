"""The real listener -> the producer -> a real Marquez; read back through Marquez's REST API."""

from __future__ import annotations

import urllib.parse
from typing import Any

import pytest
from marquez_server import MarquezHandle
from openlineage.client.transport.http import HttpConfig, HttpTransport
from pipeline import producer_for, submit_job

pytestmark = [pytest.mark.e2e, pytest.mark.marquez]


def _dataset(marquez: MarquezHandle, namespace: str, name: str) -> Any:
    ns = urllib.parse.quote(namespace, safe="")
    nm = urllib.parse.quote(name, safe="")
    return marquez.get_json(f"/api/v1/namespaces/{ns}/datasets/{nm}")


def test_marquez_stores_assertions_of_input_and_output(
    marquez: MarquezHandle, spark: Any, tmp_path: Any
) -> None:
    transport = HttpTransport(HttpConfig.from_dict({"type": "http", "url": marquez.url}))
    with producer_for(spark, transport, tmp_path) as producer:
        raw, clean = submit_job(producer, tmp_path, "e2e-marquez")

    out = _dataset(marquez, "file", str(clean))
    clean_assertions = {a["name"]: a for a in out["facets"]["dataQualityAssertions"]["assertions"]}
    assert clean_assertions["clean_id_unique"]["success"] is False
    assert clean_assertions["clean_id_not_null"]["success"] is True

    inp = _dataset(marquez, "file", str(raw))
    raw_assertions = {a["name"]: a for a in inp["facets"]["dataQualityAssertions"]["assertions"]}
    assert raw_assertions["raw_id_not_null"]["success"] is False
    assert raw_assertions["raw_row_count"]["success"] is True
