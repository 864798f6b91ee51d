"""What a failure upstream makes of a run's outputs: `Upstream`, the policy setting
(`serve --upstream`, Settings.upstream). Pure.

- `warn` (the default): the outputs derived from unhealthy data are marked (an
  `upstreamQuality` assertion, severity warn, action LOG); nothing stops.
- `block`: the same marks are BLOCK (severity error): `gate --dataset` on a marked dataset
  exits 1, as on a failed BLOCK rule.
- `off`: no lineage is kept and nothing is marked.
"""

from __future__ import annotations

import enum


class Upstream(enum.Enum):
    OFF = "off"
    WARN = "warn"
    BLOCK = "block"

    @property
    def blocking(self) -> bool:
        return self is Upstream.BLOCK

    @property
    def severity(self) -> str:
        """The marks' severity in the facets (the spec's error / warn)."""
        return "error" if self.blocking else "warn"

    @property
    def action(self) -> str:
        """The marks' action (rules.Action's value)."""
        return "BLOCK" if self.blocking else "LOG"


def parse_upstream(value: object) -> Upstream:
    """`off`, `warn` or `block` (any case), or an Upstream; ValueError naming them otherwise."""
    if isinstance(value, Upstream):
        return value
    if isinstance(value, str):
        try:
            return Upstream(value.strip().lower())
        except ValueError:
            pass
    raise ValueError(f"upstream must be one of off, warn, block, not {value!r}")
