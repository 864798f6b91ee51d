"""A stand-in DataHub GMS on 127.0.0.1 (port 0) that records what the SDK's emitter sends.

`GET /config` answers like a GMS of `version` (the SDK picks OpenAPI for >= 1.0.1, Rest.li
below); every POST is recorded and answered with `ingest_status`. `decode` turns a recorded
ingestion request back into DataHub's own MCP classes.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

import attrs
from datahub.emitter.mcp import MetadataChangeProposalWrapper


@attrs.frozen
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class FakeGms:
    def __init__(self, version: str = "v1.4.0.3", ingest_status: int = 200) -> None:
        self.version = version
        self.ingest_status = ingest_status
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        gms = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                pass

            def _reply(self, status: int, payload: Any) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _record(self) -> Recorded:
                length = int(self.headers.get("Content-Length") or 0)
                item = Recorded(
                    self.command, self.path, dict(self.headers.items()), self.rfile.read(length)
                )
                with gms._lock:
                    gms.requests.append(item)
                return item

            def do_GET(self) -> None:
                self._record()
                if urlsplit(self.path).path == "/config":
                    self._reply(
                        HTTPStatus.OK,
                        {
                            "noCode": "true",
                            "versions": {"acryldata/datahub": {"version": gms.version}},
                        },
                    )
                else:
                    self._reply(HTTPStatus.NOT_FOUND, {"message": "not found"})

            def do_POST(self) -> None:
                item = self._record()
                if gms.ingest_status >= 400:
                    self._reply(gms.ingest_status, {"message": "refused by the fake GMS"})
                elif item.path.startswith("/openapi/v3/entity/"):
                    self._reply(gms.ingest_status, [{"urn": x.get("urn")} for x in item.json()])
                else:
                    self._reply(gms.ingest_status, {"value": []})

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def posts(self) -> list[Recorded]:
        with self._lock:
            return [r for r in self.requests if r.method == "POST"]

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@contextmanager
def fake_gms(version: str = "v1.4.0.3", ingest_status: int = 200) -> Iterator[FakeGms]:
    gms = FakeGms(version, ingest_status)
    gms.start()
    try:
        yield gms
    finally:
        gms.stop()


def decode(request: Recorded) -> list[MetadataChangeProposalWrapper]:
    """The MCPs of one ingestion request, through DataHub's own classes, each validated."""
    path = urlsplit(request.path).path
    body = request.json()
    objs: list[dict[str, Any]] = []
    if path == "/aspects" and "proposals" in body:  # Rest.li ingestProposalBatch
        objs = list(body["proposals"])
    elif path == "/aspects":  # Rest.li ingestProposal
        objs = [body["proposal"]]
    elif path.startswith("/openapi/v3/entity/"):
        entity_type = path.rsplit("/", 1)[1]
        for item in body:
            for aspect_name, aspect in item.items():
                if aspect_name == "urn":
                    continue
                objs.append(
                    {
                        "entityType": entity_type,
                        "entityUrn": item["urn"],
                        "changeType": "UPSERT",
                        "aspectName": aspect_name,
                        "aspect": {"json": aspect["value"]},
                        "systemMetadata": aspect.get("systemMetadata"),
                    }
                )
    else:
        raise AssertionError(f"not an ingestion request: {request.method} {request.path}")
    out = []
    for obj in objs:
        mcp = MetadataChangeProposalWrapper.from_obj(obj)
        assert isinstance(mcp, MetadataChangeProposalWrapper), obj
        assert mcp.validate(), obj
        out.append(mcp)
    return out
