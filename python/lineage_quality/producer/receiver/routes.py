"""Every endpoint of the receiver, in one table (`route_table`): method, path, whether it needs
the API key (when one is set), and its handler.

    POST /api/v1/lineage        key   an OpenLineage event (the listener's HTTP transport): 201
    GET  /api/v1/runs/{runId}   key   a run's verdicts (`lineage-quality gate`): 200/202/404
    GET  /metrics               key   Prometheus exposition (tells job names' activity, volumes)
    GET  /healthz, /health      -     the process answers
    GET  /readyz                -     it can take and evaluate events (health.py)
    GET  /, /api/v1/datasets... key   the quality view, when added (view/routes.py)

Probes go without credentials: a supervisor or load balancer asks them, and they say nothing but
up/ready. Anything else: GET or POST of another path 404, PUT, DELETE and PATCH 405, any other
method 501.
"""

from __future__ import annotations

import json
import logging
import urllib.parse
from collections.abc import Callable
from http import HTTPStatus
from typing import Any, Protocol

import attrs

from lineage_quality.producer.receiver.body import RejectedError, decode
from lineage_quality.producer.receiver.request import RequestHead
from lineage_quality.producer.spool import SpoolFullError

log = logging.getLogger(__name__)

LINEAGE_PATH = "/api/v1/lineage"
RUNS_PATH = "/api/v1/runs"


@attrs.frozen
class Reply:
    status: int
    body: bytes
    content_type: str = "application/json"
    headers: tuple[tuple[str, str], ...] = ()


def json_reply(status: int, payload: dict[str, Any]) -> Reply:
    return Reply(status, json.dumps(payload).encode())


CREATED = json_reply(201, {})  # an event stored (the connection writes it pre-formatted)


class Request(Protocol):
    """What a handler sees of a request: its head, the part of the path after a prefix route's
    path, and its body (read on demand, under the body deadline; a RejectedError for a body
    that cannot be taken)."""

    head: RequestHead
    tail: str

    def body(self) -> bytes: ...


Handler = Callable[[Request], Reply]


@attrs.frozen
class Route:
    method: str
    path: str  # the whole path, or with `prefix` what the path starts with
    handler: Handler
    needs_key: bool = True
    prefix: bool = False


@attrs.frozen
class RouteTable:
    routes: tuple[Route, ...]

    def find(self, method: str, path: str) -> tuple[Route | None, str]:
        """The route of `method` and `path` (None: not served), and the path's tail after a
        prefix route's path."""
        for route in self.routes:
            if route.method != method:
                continue
            if route.prefix:
                if path.startswith(route.path) and len(path) > len(route.path):
                    return route, path[len(route.path) :]
            elif path == route.path:
                return route, ""
        return None, ""


def route_table(
    accept: Callable[[str, dict[str, Any]], None] | None,
    max_body: int,
    runs: Callable[[str], tuple[int, dict[str, Any]]] | None = None,
    ready: Callable[[], tuple[bool, dict[str, Any]]] | None = None,
    metrics: Callable[[], tuple[bytes, str]] | None = None,
) -> RouteTable:
    """The receiver's routes: `accept(text, event)` stores an event (it must have when it
    returns); `runs(run_id)` answers the runs API (status, payload); `ready()` and `metrics()`
    answer the probes. Those not given are not served (404; no `accept`: a read-only server,
    `lineage-quality view`)."""
    routes = [
        Route("GET", "/healthz", _healthz, needs_key=False),
        Route("GET", "/health", _healthz, needs_key=False),
    ]
    if accept is not None:
        routes.insert(0, Route("POST", LINEAGE_PATH, _post_event(accept, max_body)))
    if runs is not None:
        routes.append(Route("GET", RUNS_PATH + "/", _run_status(runs), prefix=True))
    if ready is not None:
        routes.append(Route("GET", "/readyz", _readyz(ready), needs_key=False))
    if metrics is not None:
        routes.append(Route("GET", "/metrics", _scrape(metrics)))
    return RouteTable(tuple(routes))


def _post_event(accept: Callable[[str, dict[str, Any]], None], max_body: int) -> Handler:
    def post(request: Request) -> Reply:
        ctype = (request.head.get("content-type") or "application/json").lower()
        if "json" not in ctype:
            raise RejectedError(
                HTTPStatus.UNSUPPORTED_MEDIA_TYPE, f"Content-Type must be JSON, not {ctype[:80]}"
            )
        text, event = decode(request.body(), request.head.get("content-encoding"), max_body)
        try:
            accept(text, event)  # durable when it returns
        except SpoolFullError as exc:
            raise RejectedError(HTTPStatus.SERVICE_UNAVAILABLE, str(exc)) from exc
        except Exception as exc:
            log.error("could not store event: %s", exc)
            raise RejectedError(
                HTTPStatus.SERVICE_UNAVAILABLE, "event could not be stored"
            ) from exc
        return CREATED

    return post


def _healthz(request: Request) -> Reply:
    return json_reply(200, {"status": "ok"})


def _run_status(runs: Callable[[str], tuple[int, dict[str, Any]]]) -> Handler:
    def status(request: Request) -> Reply:
        code, payload = runs(urllib.parse.unquote(request.tail))
        return json_reply(code, payload)

    return status


def _readyz(ready: Callable[[], tuple[bool, dict[str, Any]]]) -> Handler:
    def readyz(request: Request) -> Reply:
        ok, payload = ready()
        return json_reply(200 if ok else 503, payload)

    return readyz


def _scrape(metrics: Callable[[], tuple[bytes, str]]) -> Handler:
    def scrape(request: Request) -> Reply:
        body, ctype = metrics()
        return Reply(200, body, ctype)

    return scrape
