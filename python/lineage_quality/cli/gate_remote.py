"""`gate --dataset NAME --url URL`: the dataset's gate asked of a producer (`serve`, or `view`)
over its API, `GET /api/v1/datasets/{NAME}/gate`: the decision `gate --dataset` makes from the
store, made there (its store may be the shared PostgreSQL the orchestrator cannot reach). Exit
as the answer's `exit` (0, 1, 2); 2 when there is no answer (unreachable, a wrong API key, an
answer that is not the gate's)."""

from __future__ import annotations

import json
import sys
import urllib.error
import urllib.parse
import urllib.request

from lineage_quality.inert import inert


def dataset_gate(url: str, name: str, key: str | None, output: str) -> int:
    target = f"{url.rstrip('/')}/api/v1/datasets/{urllib.parse.quote(name, safe='')}/gate"
    request = urllib.request.Request(target)
    if key:
        request.add_header("Authorization", f"Bearer {key}")
    why = ""
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            doc = json.loads(answer.read() or b"{}")
    except urllib.error.HTTPError as exc:
        why = {401: "wrong or missing API key", 404: "no quality view there (serve --history)"}.get(
            exc.code, f"HTTP {exc.code}"
        )
    except (OSError, ValueError) as exc:
        why = str(exc)
    else:
        code = doc.get("exit") if isinstance(doc, dict) else None
        if code in (0, 1, 2) and isinstance(doc.get("line"), str):
            if output == "json":
                shown = {k: v for k, v in doc.items() if k != "line"}
                print(inert(json.dumps(shown, ensure_ascii=True)))
            else:
                print(inert(doc["line"]))
            return int(code)
        why = "not a gate answer"
    line = f"{name}: cannot tell: {url}: {why}"
    if output == "json":
        print(inert(json.dumps({"dataset": name, "status": "unknown", "exit": 2, "error": why})))
    else:
        print(inert(line), file=sys.stderr)
    return 2
