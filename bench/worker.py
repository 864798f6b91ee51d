"""One system's benchmark worker, run with that system's own Python (its virtualenv).

    python bench/worker.py SYSTEM

Reads one JSON command per line on stdin and answers each with one line starting `@@ ` on
stdout (libraries may print other lines; the harness ignores them):

    {"op": "version"}                                  -> {"version": "..."}
    {"op": "run", "data": PATH, "ruleset": "R10"}      -> {"seconds": s, "verdicts": {id: bool}}
    {"op": "memory", "reset": true}                    -> the driver's peaks since the last
                                                          reset (bench/driver_memory.py)

A verdict is true when the rule passed, false when it failed, null when the system has no way
to state that rule (reported as such, never counted as agreement). Errors answer {"error": ...}.
The timed part is the system's own call on an unread DataFrame of the Parquet data: planning,
the scan(s) and collecting its result, as a user would run it.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "python"))

import driver_memory  # noqa: E402
from rulesets import ruleset  # noqa: E402
from settings import session  # noqa: E402


def main() -> None:
    name = sys.argv[1]
    system = importlib.import_module(f"systems.{name}")
    spark = session(system.conf())
    out = sys.stdout
    for line in sys.stdin:
        if not line.strip():
            continue
        command = json.loads(line)
        try:
            if command["op"] == "version":
                answer = {"version": system.version()}
            elif command["op"] == "memory":
                answer = driver_memory.peaks(spark)
                if command.get("reset"):
                    answer |= driver_memory.reset(spark)
            else:
                rules = ruleset(command["ruleset"])
                df = spark.read.parquet(command["data"])
                start = time.perf_counter()
                verdicts = system.run(spark, df, rules)
                seconds = time.perf_counter() - start
                answer = {"seconds": seconds, "verdicts": verdicts}
        except Exception as exc:  # reported by the harness, next to the system's name
            traceback.print_exc(file=sys.stderr)
            answer = {"error": f"{type(exc).__name__}: {exc}"[:2000]}
        out.write("@@ " + json.dumps(answer) + "\n")
        out.flush()
    # Some libraries leave non-daemon threads (PyDeequ's py4j callback server): end regardless.
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
