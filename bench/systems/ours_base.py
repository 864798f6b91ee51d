"""lineage-quality's engine as another checkout has it (`LQ_BENCH_BASE`: that checkout's root, e.g.
a `git worktree` of the commit before a change), run by this harness beside `ours`: before and
after figures in one sitting, interleaved, on the same data and JVM settings.

    git worktree add /tmp/base <commit>
    LQ_BENCH_BASE=/tmp/base .venv/bin/python bench/run.py --systems ours,ours_base \\
        --rulesets R10,R30,RU --sizes 10000000 --no-producer --out /tmp/before-after.md

That checkout's own systems/ours.py makes the calls, with its own package first on the path.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

_ROOT = Path(os.environ["LQ_BENCH_BASE"]).resolve()
sys.path.insert(0, str(_ROOT / "python"))
for _name in [m for m in sys.modules if m.split(".")[0] == "lineage_quality"]:
    del sys.modules[_name]  # the base checkout's package, not this one's
_SPEC = importlib.util.spec_from_file_location("ours_at_base", _ROOT / "bench/systems/ours.py")
assert _SPEC is not None and _SPEC.loader is not None
_BASE = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(_BASE)
_COMMIT = subprocess.run(
    ["git", "-C", str(_ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
).stdout.strip()


def conf() -> dict[str, str]:
    return dict(_BASE.conf())


def version() -> str:
    return f"{_BASE.version()} at {_COMMIT or _ROOT}"


def run(spark: Any, df: Any, rules: list[dict[str, Any]]) -> Any:
    return _BASE.run(spark, df, rules)
