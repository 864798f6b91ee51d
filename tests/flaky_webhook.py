"""A local webhook for the alert tests: answers `down_status` (503) until `up` is set, then 2xx;
records what it took and how often it refused."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FlakyWebhook:
    def __init__(self, ok_status: int = 204, down_status: int = 503) -> None:
        self.up = threading.Event()
        self.taken: list[dict[str, Any]] = []
        self.refused = 0
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if hook.up.is_set():
                    hook.taken.append(json.loads(body))
                    self.send_response(ok_status)
                else:
                    hook.refused += 1
                    self.send_response(down_status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/alerts"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
