"""What a failed rule makes happen (seed 002's RuleAction), and the default for each severity.

LOG: recorded in the facet only. ALERT: also sent to the configured alert sinks. BLOCK: alerts and
stops the pipeline (the in-driver mode fails the driver; the sidecar's `gate` exits 1).
QUARANTINE: alerts and writes the failing rows aside. CORRECT and IGNORE come from seed 002;
CORRECT is treated as ALERT (nothing is corrected automatically) and IGNORE as LOG.
"""

from __future__ import annotations

import enum


class Action(enum.Enum):
    LOG = "LOG"
    ALERT = "ALERT"
    BLOCK = "BLOCK"
    QUARANTINE = "QUARANTINE"
    CORRECT = "CORRECT"
    IGNORE = "IGNORE"

    @property
    def alerts(self) -> bool:
        """A failure of this action is sent to the alert sinks."""
        return self in (Action.ALERT, Action.BLOCK, Action.QUARANTINE, Action.CORRECT)

    @property
    def blocks(self) -> bool:
        return self is Action.BLOCK


ACTIONS = tuple(a.value for a in Action)

# Severity words of the three formats (lower-cased) -> the action a failure takes by default.
# Seed 001: `error` "blocks pipeline", `warn` is a warning only.
_BY_SEVERITY = {
    "error": Action.BLOCK,
    "critical": Action.BLOCK,
    "blocker": Action.BLOCK,
    "high": Action.ALERT,
    "warn": Action.ALERT,
    "warning": Action.ALERT,
    "medium": Action.ALERT,
    "low": Action.LOG,
    "info": Action.LOG,
}


def parse_action(value: object) -> Action:
    """An action name (any case) -> Action; ValueError listing the known names otherwise."""
    if isinstance(value, str):
        try:
            return Action(value.strip().upper())
        except ValueError:
            pass
    raise ValueError(f"action must be one of {', '.join(ACTIONS)}, not {value!r}")


def effective_action(action: str | None, severity: str | None) -> Action:
    """The declared action, else the default for the severity, else ALERT (a failure nobody
    declared anything about should still reach someone)."""
    if action:
        return parse_action(action)
    if severity:
        return _BY_SEVERITY.get(severity.strip().lower(), Action.ALERT)
    return Action.ALERT
