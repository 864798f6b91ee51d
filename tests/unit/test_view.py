"""The quality view (issue 53) over a real SQLite store filled through the producer's own paths
(tests/view_store.py), served by the receiver as `lineage-quality view` serves it: the pages and
the JSON API show the datasets, their failing rules, history and lineage; every name from an
event stays inert on every page; `gate --dataset NAME --url URL` answers as the store does."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lineage_quality.cli.main import main
from lineage_quality.producer.receiver import Receiver
from lineage_quality.producer.settings import Settings
from lineage_quality.view.data import Links
from lineage_quality.view.open import open_stores
from lineage_quality.view.routes import CSP, view_routes
from view_store import AGG, CLEAN, EMPTY, HOSTILE, OK, ORDERS, fill

# every tag a page of ours may hold (the chart's SVG included)
OURS = {
    "html", "head", "meta", "title", "link", "body", "header", "main", "a", "h1", "h2", "h3",
    "p", "table", "thead", "tbody", "tr", "th", "td", "span", "form", "input", "select",
    "option", "button", "ul", "li", "div", "section", "svg", "rect", "circle", "line",
    "polyline", "path", "text", "g", "polygon", "defs", "marker", "b",
}  # fmt: skip


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fill(tmp_path_factory.mktemp("view") / "history.db")


@pytest.fixture(scope="module")
def server(store: Path) -> Iterator[str]:
    stores = open_stores(store, Links("http://marquez.example:3000", "https://datahub.example"))
    receiver = Receiver(None, Settings.of(port=0))
    receiver.add(view_routes(stores))
    receiver.start()
    yield receiver.url
    receiver.stop()


def get(url: str, key: str | None = None) -> tuple[int, dict[str, str], str]:
    request = urllib.request.Request(url)
    if key:
        request.add_header("Authorization", f"Bearer {key}")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, dict(answer.headers), answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read().decode()


def q(name: str) -> str:
    return urllib.parse.quote(name, safe="")


def assert_inert(page: str) -> None:
    """No tag but ours, no link but ours or to a configured tool, no control byte."""
    tags = set(re.findall(r"<\s*/?([a-zA-Z!][a-zA-Z0-9]*)", page))
    assert tags <= OURS | {"!DOCTYPE"}, tags - OURS
    for href in re.findall(r'href="([^"]*)"', page):
        assert href.startswith(("/", "http://marquez.example", "https://datahub.example")), href
    assert "onerror=" not in page.replace("onerror=x&gt;", "").replace("onerror=alert(2)&gt;", "")
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]", page)


def test_the_datasets_list_shows_health_failures_and_pages(server: str) -> None:
    status, headers, page = get(server + "/")
    assert status == 200 and headers["Content-Security-Policy"] == CSP
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Referrer-Policy"] == "no-referrer"
    assert "Datasets (9)" in page
    row = next(r for r in page.split('<tr class="dataset">') if f"file:{ORDERS}<" in r)
    assert "unhealthy" in row and "customer_id_not_null on customer_id (FAILED, ALERT)" in row
    assert "blocked" in next(r for r in page.split("<tr") if f"file:{EMPTY}<" in r)
    # filter and search, a page at a time
    _, _, doc = get(server + "/api/v1/datasets?health=blocking")
    assert [d["dataset"] for d in json.loads(doc)["datasets"]] == [f"file:{EMPTY}"]
    _, _, doc = get(server + "/api/v1/datasets?health=healthy")
    assert [d["dataset"] for d in json.loads(doc)["datasets"]] == [f"file:{OK}"]
    _, _, doc = get(server + "/api/v1/datasets?q=lake/o")
    assert [d["dataset"] for d in json.loads(doc)["datasets"]] == [f"file:{OK}", f"file:{ORDERS}"]
    _, _, doc = get(server + "/api/v1/datasets?limit=4&page=3")
    listed = json.loads(doc)
    assert (listed["total"], listed["pages"], len(listed["datasets"])) == (9, 3, 1)
    _, _, page = get(server + "/?limit=4&page=2")
    assert 'href="/?q=&amp;health=&amp;page=1"' in page and "page=3" in page


def test_a_dataset_page_has_the_grid_the_charts_and_the_links_out(server: str) -> None:
    status, _, page = get(server + "/datasets/" + q(f"file:{ORDERS}"))
    assert status == 200
    grid = page.split('<table class="grid">')[1].split("</table>")[0]
    rule = next(r for r in grid.split("<tr") if "orders.customer_id.not_null" in r)
    assert rule.count('class="PASSED"') == 4 and rule.count('class="FAILED"') == 1
    assert 'title="FAILED: actual 3, expected [0, 0]"' in rule
    assert page.count("<svg") == 2  # a chart per rule, with its band
    assert 'data-status="FAILED"' in page
    # what a user said: the accepted run ringed on the chart, the record listed, inert
    assert 'class="accepted"' in page and 'data-by="ops"' in page
    listed = page.split('<ul class="feedback">')[1]
    assert "backfill &lt;script&gt;alert(4)&lt;/script&gt;" in listed
    assert_inert(page)
    assert 'href="http://marquez.example:3000/lineage/dataset/file/%2Flake%2Forders"' in page
    datahub = "https://datahub.example/dataset/urn%3Ali%3Adataset%3A%28urn%3Ali%3AdataPlatform%3A"
    assert datahub in page
    _, _, doc = get(server + "/api/v1/datasets/" + q(f"file:{ORDERS}") + "/rules/"
                    + q("orders.customer_id.not_null") + "/history?runs=3")  # fmt: skip
    history = json.loads(doc)["history"]
    assert [(p["status"], p["value"], p["lower"], p["upper"]) for p in history] == [
        ("PASSED", 0.0, 0.0, 0.0), ("PASSED", 0.0, 0.0, 0.0), ("FAILED", 3.0, 0.0, 0.0)
    ]  # fmt: skip
    assert get(server + "/datasets/" + q("file:/nowhere"))[0] == 404


def test_a_run_page_and_the_lineage_page_navigate(server: str) -> None:
    _, _, page = get(server + "/runs/orders-4")
    assert "job spark/ingest" in page and "orders.customer_id.not_null" in page
    assert 'href="/lineage/file%3A%2Flake%2Forders"' in page
    _, _, doc = get(server + "/api/v1/quality/runs/clean-4")
    run = json.loads(doc)
    assert [i["dataset"] for i in run["read"]] == [f"file:{ORDERS}"]
    assert run["wrote"][0]["write"]["marks"][0]["origin"]["rule"] == "customer_id_not_null"
    _, _, page = get(server + "/lineage/" + q(f"file:{CLEAN}"))
    assert f'href="/lineage/{q("file:" + ORDERS)}"' in page  # upstream, clickable
    assert f'href="/lineage/{q("file:" + AGG)}"' in page  # downstream
    _, _, doc = get(server + "/api/v1/datasets/" + q(f"file:{ORDERS}") + "/lineage")
    lineage = json.loads(doc)
    down = {d["dataset"]: d for d in lineage["downstream"]}
    assert down[f"file:{CLEAN}"]["markedColumns"] == ["customer_id"]
    assert {a["dataset"] for a in lineage["impact"]["affected"]} >= {f"file:{CLEAN}", f"file:{AGG}"}
    assert get(server + "/api/v1/quality/runs/nope")[0] == 404


def test_hostile_names_stay_inert_on_every_page(server: str) -> None:
    pages = [get(server + "/")[2], get(server + "/?q=" + q("<script>"))[2]]
    for name in HOSTILE:
        key = f"file:{name}"
        for where in ("/datasets/", "/lineage/"):
            status, _, page = get(server + where + q(key))
            assert status == 200, (where, key)
            pages.append(page)
    pages.append(get(server + "/runs/" + q("<script>alert('run')</script>-0"))[2])
    pages.append(get(server + "/lineage/" + q(f"file:{ORDERS}"))[2])
    for page in pages:
        assert_inert(page)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in pages[0]
    assert "\\x1b[31mred\\x9b\\u2028&lt;/title&gt;&lt;b&gt;x" in pages[0]
    # the JSON API keeps names as they are, in JSON with no raw control byte
    _, headers, doc = get(server + "/api/v1/datasets")
    assert headers["Content-Type"] == "application/json"
    assert not re.search("[\x00-\x1f\x7f-\x9f]", doc)
    assert f"file:{HOSTILE[3]}" in [d["dataset"] for d in json.loads(doc)["datasets"]]


def test_gate_dataset_url_asks_a_running_view(
    server: str, store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, code in ((ORDERS, 0), (OK, 0), (EMPTY, 1), ("/lake/never", 2)):
        assert main(["gate", "--dataset", name, "--url", server]) == code, name
        remote = capsys.readouterr().out
        assert main(["gate", "--dataset", name, "--history", str(store)]) == code
        assert capsys.readouterr().out == remote  # the same line as from the store
    assert main(["gate", "--dataset", EMPTY, "--url", server, "--output", "json"]) == 1
    doc: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert (doc["status"], doc["exit"], doc["failures"][0]["rule"]) == ("blocked", 1, "not_empty")
    # no producer there: cannot tell
    assert main(["gate", "--dataset", ORDERS, "--url", "http://127.0.0.1:9"]) == 2


def test_the_view_command_serves_the_store_behind_the_api_key(store: Path, tmp_path: Path) -> None:
    keyfile = tmp_path / "key"
    keyfile.write_text("s3cret\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "lineage_quality.cli", "view", "--history", str(store),
         "--port", "0", "--api-key-file", str(keyfile)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        url = re.search(r"(http://\S+)/ ", line)
        assert url is not None, line
        base = url.group(1)
        assert get(base + "/")[0] == 401
        status, _, page = get(base + "/", "s3cret")
        assert status == 200 and "Datasets (9)" in page
        post = urllib.request.Request(base + "/api/v1/lineage", b"{}", method="POST",
                                      headers={"Authorization": "Bearer s3cret"})  # fmt: skip
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(post, timeout=10)
        assert refused.value.code == 404  # read-only: no event is taken
        env_key = ["--api-key-file", str(keyfile)]
        assert main(["gate", "--dataset", EMPTY, "--url", base, *env_key]) == 1
        assert main(["gate", "--dataset", EMPTY, "--url", base]) == 2  # no key: cannot tell
    finally:
        proc.terminate()
        proc.wait(10)
