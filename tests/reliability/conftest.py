"""Fault-injection suite: each test injects one fault and asserts (and reports) that no accepted
event was lost. The counts are printed at the end of the run (docs/reliability.md quotes them)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from faultkit import FAULTS, RecordingSink


@pytest.fixture
def sink() -> Iterator[RecordingSink]:
    s = RecordingSink()
    yield s
    s.close()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not FAULTS:
        return
    terminalreporter.section("fault injection: events sent, accepted, forwarded, lost")
    for row in FAULTS:
        terminalreporter.write_line("  ".join(f"{k}={v}" for k, v in row.items()))
