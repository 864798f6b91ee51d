"""Which results stop the pipeline, and the message saying why. Pure.

A BLOCK rule stops it when it FAILED, and also when it could not be evaluated (ERROR): an error
is never a pass, so it cannot let the pipeline go on either.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import attrs

from lineage_quality.results import RuleResult, Status


@attrs.frozen
class Blocking:
    """One result of a BLOCK rule that stops the pipeline, with the dataset it is about."""

    dataset: str
    result: RuleResult

    def describe(self) -> str:
        r = self.result
        rule = r.rule.name or r.rule.id
        if r.status is Status.ERROR:
            return f"{self.dataset}: rule {rule} could not be evaluated: {r.message}"
        actual = r.actual_text()
        text = f"{self.dataset}: rule {rule} failed: expected {r.expected}, actual {actual}"
        return text + (f" ({r.message})" if r.message else "")


def blocking(results: Iterable[tuple[str, RuleResult]]) -> list[Blocking]:
    return [
        Blocking(dataset, r)
        for dataset, r in results
        if r.rule.effective_action.blocks and r.status in (Status.FAILED, Status.ERROR)
    ]


def gate_message(problems: Sequence[str]) -> str:
    """The text of QualityGateFailed and of the atexit path's stderr: one problem a line."""
    return f"lineage-quality: quality gate failed ({len(problems)}):\n  " + "\n  ".join(problems)
