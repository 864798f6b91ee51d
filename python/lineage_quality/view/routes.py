"""The quality view's routes, for the receiver's route table (`serve` at the root of its port,
and `lineage-quality view`): read-only, GET only, guarded by the API key when one is set.

    GET /                                   the datasets list (?q= &health= &page= &limit=)
    GET /datasets/{dataset}                 a dataset: rules x runs, history charts
    GET /runs/{runId}                       a run: inputs, outputs, every assertion
    GET /lineage/{dataset}                  upstream and downstream, with health and marks
    GET /view.css                           the one stylesheet
    GET /api/v1/datasets                    the list as JSON (the same parameters)
    GET /api/v1/datasets/{dataset}          a dataset
    GET /api/v1/datasets/{dataset}/rules/{ruleId}/history   a rule's values (?runs=N)
    GET /api/v1/datasets/{dataset}/lineage  its lineage
    GET /api/v1/datasets/{dataset}/gate     what `gate --dataset` decides (`exit` 0, 1, 2)
    GET /api/v1/quality/runs/{runId}        a run

A `{dataset}` or `{runId}` is one path segment, URI-encoded (`file%3A%2Flake%2Fraw`). Every
answer carries `CSP` (no script, no frame, styles and images from this origin only),
`nosniff` and `Referrer-Policy: no-referrer`; an unknown name is a 404. Reads are serialised
per store (one connection each), each bounded (data.py).
"""

from __future__ import annotations

import json
import threading
import urllib.parse
from collections.abc import Callable
from typing import Any

from lineage_quality.producer.receiver.routes import Reply, Request, Route
from lineage_quality.view import data, pages

CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
    "base-uri 'none'; frame-ancestors 'none'"
)
HEADERS = (
    ("Content-Security-Policy", CSP),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
    ("Cache-Control", "no-store"),
)
HTML = "text/html; charset=utf-8"
API = "/api/v1"


def _html(status: int, page: str) -> Reply:
    return Reply(status, page.encode("utf-8"), HTML, HEADERS)


def _json(status: int, doc: Any) -> Reply:
    return Reply(status, json.dumps(doc, ensure_ascii=True).encode(), "application/json", HEADERS)


def _query(request: Request) -> dict[str, str]:
    query = urllib.parse.urlsplit(request.head.target).query
    return {k: v[0] for k, v in urllib.parse.parse_qs(query).items() if v}


def _int(text: str | None, default: int) -> int:
    try:
        return int(text) if text is not None else default
    except ValueError:
        return default


def _segments(tail: str) -> list[str]:
    return [urllib.parse.unquote(s) for s in tail.split("/")]


class View:
    """The handlers over `stores`; `lock` serialises reads of its connections."""

    def __init__(self, stores: data.Stores) -> None:
        self.stores = stores
        self.lock = threading.Lock()

    def _list(self, request: Request) -> dict[str, Any]:
        q = _query(request)
        with self.lock:
            page, limit = _int(q.get("page"), 1), _int(q.get("limit"), data.PAGE_SIZE)
            return data.datasets(self.stores, q.get("q", ""), q.get("health", ""), page, limit)

    def index(self, request: Request) -> Reply:
        return _html(200, pages.datasets_page(self._list(request)))

    def style(self, request: Request) -> Reply:
        return Reply(200, pages.STYLE.encode(), "text/css; charset=utf-8", HEADERS)

    def dataset_page(self, request: Request) -> Reply:
        with self.lock:
            doc = data.dataset(self.stores, urllib.parse.unquote(request.tail))
            said = {} if doc is None else data.feedback(self.stores, doc["dataset"])
        if doc is None:
            return _html(404, pages.not_found(f"no dataset {urllib.parse.unquote(request.tail)}"))
        return _html(200, pages.dataset_page(doc, pages.points_of(doc), said))

    def run_page(self, request: Request) -> Reply:
        with self.lock:
            doc = data.run(self.stores, urllib.parse.unquote(request.tail))
        if doc is None:
            return _html(404, pages.not_found(f"no run {urllib.parse.unquote(request.tail)}"))
        return _html(200, pages.run_page(doc))

    def lineage_page(self, request: Request) -> Reply:
        with self.lock:
            doc = data.lineage(self.stores, urllib.parse.unquote(request.tail))
        if doc is None:
            return _html(404, pages.not_found(f"no dataset {urllib.parse.unquote(request.tail)}"))
        return _html(200, pages.lineage_page(doc))

    def api_list(self, request: Request) -> Reply:
        return _json(200, self._list(request))

    def api_dataset(self, request: Request) -> Reply:
        parts = _segments(request.tail)
        name, rest = parts[0], parts[1:]
        with self.lock:
            if not rest:
                doc = data.dataset(self.stores, name)
            elif rest == ["gate"]:
                verdict = data.gate(self.stores, name)
                return _json(200, {**verdict.doc, "line": verdict.line})
            elif rest == ["lineage"]:
                doc = data.lineage(self.stores, name)
            elif len(rest) == 3 and rest[0] == "rules" and rest[2] == "history":
                key = data.resolve(self.stores, name)
                runs = _int(_query(request).get("runs"), data.MAX_RUNS)
                points = [] if key is None else data.rule_history(self.stores, key, rest[1], runs)
                doc = None if not points else {
                    "dataset": key, "rule": rest[1], "history": [data.point_doc(p) for p in points]
                }  # fmt: skip
            else:
                return _json(404, {"error": "not found"})
        return _json(200, doc) if doc is not None else _json(404, {"error": "not found"})

    def api_run(self, request: Request) -> Reply:
        with self.lock:
            doc = data.run(self.stores, urllib.parse.unquote(request.tail))
        return _json(200, doc) if doc is not None else _json(404, {"error": "unknown run"})

    def routes(self) -> tuple[Route, ...]:
        def get(path: str, handler: Callable[[Request], Reply], prefix: bool = False) -> Route:
            return Route("GET", path, handler, prefix=prefix)

        return (
            get("", self.index),
            get("/view.css", self.style),
            get("/datasets/", self.dataset_page, True),
            get("/runs/", self.run_page, True),
            get("/lineage/", self.lineage_page, True),
            get(f"{API}/datasets", self.api_list),
            get(f"{API}/datasets/", self.api_dataset, True),
            get(f"{API}/quality/runs/", self.api_run, True),
        )


def view_routes(stores: data.Stores) -> tuple[Route, ...]:
    return View(stores).routes()
