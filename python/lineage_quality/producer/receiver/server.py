"""The receiver's server: a thread per connection, at most `max_connections` of them, and a
reaper that cuts connections past their request's deadline; `Receiver` runs it in the background.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from lineage_quality.producer.receiver.connection import Connection, HostServer
from lineage_quality.producer.receiver.routes import Route, RouteTable, route_table
from lineage_quality.producer.settings import DEFAULTS, Settings

log = logging.getLogger(__name__)

_FULL = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
    b"Retry-After: 1\r\nConnection: close\r\nContent-Length: 33\r\n\r\n"
    b'{"error": "too many connections"}'
)


class Server(HostServer):
    """A thread per connection, at most `max_connections` of them: beyond that a connection is
    answered 503 at once and closed, so idle or trickling clients cannot starve real senders of
    threads (and of memory)."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, receiver: Receiver, address: tuple[str, int], max_connections: int) -> None:
        super().__init__(address, Connection)
        self.receiver = receiver
        self.max_connections = max_connections
        self._active = 0
        self._active_lock = threading.Lock()

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._active_lock:
            full = self._active >= self.max_connections
            if not full:
                self._active += 1
        if full:
            log.warning("refusing a connection: %d open already", self.max_connections)
            with contextlib.suppress(OSError):
                request.settimeout(1.0)
                request.sendall(_FULL)
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except Exception:
            with self._active_lock:
                self._active -= 1
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self._active_lock:
                self._active -= 1


class Receiver:
    """Runs the HTTP server on a background thread. `accept(text, event)` is called with each
    event's JSON text and the event parsed from it (validated), and must have stored it when it
    returns; `runs`, `ready` and `metrics` answer the other routes (routes.py); `on_refused` gets
    the status of each refused POST (for metrics). Reads its part of `settings`: host, port,
    api_key, max_body, the timeouts, max_connections."""

    def __init__(
        self,
        accept: Callable[[str, dict[str, Any]], None] | None,
        settings: Settings = DEFAULTS,
        *,
        runs: Callable[[str], tuple[int, dict[str, Any]]] | None = None,
        ready: Callable[[], tuple[bool, dict[str, Any]]] | None = None,
        metrics: Callable[[], tuple[bytes, str]] | None = None,
        on_refused: Callable[[int], None] | None = None,
    ) -> None:
        self.settings = settings
        self.routes: RouteTable = route_table(
            accept, settings.receiver.max_body, runs, ready, metrics
        )
        self.on_refused = on_refused
        self._lock = threading.Lock()  # guards _connections and _deadlines
        self._connections: set[socket.socket] = set()
        self._deadlines: dict[socket.socket, float] = {}
        self._server = Server(
            self,
            (settings.receiver.host, settings.receiver.port),
            settings.receiver.max_connections,
        )
        self._thread: threading.Thread | None = None
        self._reaper: threading.Thread | None = None
        self._stopped = threading.Event()

    def add(self, routes: Sequence[Route]) -> None:
        """Serve `routes` too (the quality view), after the receiver's own; before `start`."""
        self.routes = RouteTable((*self.routes.routes, *routes))

    @property
    def address(self) -> tuple[str, int]:
        host, port = self._server.server_address[:2]
        return str(host), int(port)

    @property
    def url(self) -> str:
        host, port = self.address
        return f"http://{host}:{port}"

    def start(self) -> None:
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.1,), name="lq-receiver", daemon=True
        )
        self._thread.start()
        self._reaper = threading.Thread(target=self._reap, name="lq-receiver-reaper", daemon=True)
        self._reaper.start()

    # -- connections (called by each connection's thread) ---------------------------------------

    def opened(self, conn: socket.socket) -> None:
        with self._lock:
            self._connections.add(conn)

    def closed(self, conn: socket.socket) -> None:
        with self._lock:
            self._connections.discard(conn)
            self._deadlines.pop(conn, None)

    def deadline(self, conn: socket.socket, seconds: float | None) -> None:
        """`conn`'s request must be read within `seconds` from now (None: no deadline)."""
        with self._lock:
            if seconds is None:
                self._deadlines.pop(conn, None)
            else:
                self._deadlines[conn] = time.monotonic() + seconds

    def _reap(self) -> None:
        """Cut connections whose request is past its deadline: a client trickling headers or a
        body a byte at a time holds a thread only that long."""
        while not self._stopped.wait(0.25):
            now = time.monotonic()
            with self._lock:
                late = [c for c, t in self._deadlines.items() if t < now]
                for conn in late:
                    del self._deadlines[conn]
            for conn in late:
                log.warning("closing a connection whose request is past its deadline")
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)

    def stop(self) -> None:
        """Stop accepting, and end the kept-alive connections (no request after stop)."""
        self._stopped.set()
        if self._thread is not None:  # shutdown() would wait forever for a loop never started
            self._server.shutdown()
        self._server.server_close()
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
