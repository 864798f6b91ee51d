"""The command line, one module per command (`serve`, `check`, `bindings`, `history`, `demo`,
`gate`, `dead-letters`); `main` is the `lineage-quality` entry point."""

from __future__ import annotations

from lineage_quality.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
