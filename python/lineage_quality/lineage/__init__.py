"""Quality along lineage (issue 39): each dataset's health (its latest write, the rules that
failed there, the marks it got from upstream) and each run's lineage, kept in the history store;
the propagation of a failure upstream to the derived columns downstream; `gate --dataset`'s
decision. docs/lineage.md.

- `model.py`: the values kept (`Write`, `Failure`, `Mark`, `Origin`, `RunLineage`, ...).
- `column_lineage.py`, `observe.py`: what an event and its verdicts say.
- `propagate.py`: the propagation rule; `policy.py`: what a propagated failure is (`Upstream`).
- `step.py`: one COMPLETE event: marks of its outputs, writes to keep (pure, over a lookup).
- `gate.py`: `gate --dataset`'s decision. `store.py`: the tables (SQLite, PostgreSQL).
"""

from lineage_quality.lineage.gate import GateVerdict, decide
from lineage_quality.lineage.model import (
    Failure,
    InputField,
    Mark,
    Origin,
    Read,
    RunLineage,
    Write,
    Written,
)
from lineage_quality.lineage.policy import Upstream, parse_upstream
from lineage_quality.lineage.propagate import Issue, propagate
from lineage_quality.lineage.step import Observed, observe
from lineage_quality.lineage.store import LineageStore, open_lineage

__all__ = [
    "Failure",
    "GateVerdict",
    "InputField",
    "Issue",
    "LineageStore",
    "Mark",
    "Observed",
    "Origin",
    "Read",
    "RunLineage",
    "Upstream",
    "Write",
    "Written",
    "decide",
    "observe",
    "open_lineage",
    "parse_upstream",
    "propagate",
]
