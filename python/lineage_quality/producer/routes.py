"""The receiver's GET endpoints besides the runs API: a small table of path -> handler.

Which need the API key (when one is set): `/metrics` does (it tells job names' activity and
volumes); `/healthz` and `/readyz` do not (a supervisor or load balancer probes them without
credentials, and they say nothing but up/ready).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import attrs


@attrs.frozen
class Reply:
    status: int
    body: bytes
    content_type: str = "application/json"


def json_reply(status: int, payload: dict[str, Any]) -> Reply:
    return Reply(status, json.dumps(payload).encode())


@attrs.frozen
class Route:
    handler: Callable[[], Reply]
    needs_key: bool = True
