"""`lineage-quality`: the command line. One module per command (serve, check, schema, bindings,
history, demo, gate, impact, dead-letters, datahub), each adding its own parser; this one parses and
dispatches."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from lineage_quality.cli import (
    bindings,
    check,
    datahub,
    dead_letters,
    demo,
    gate,
    history,
    impact,
    schema,
    serve,
    view,
)
from lineage_quality.cli.terminal import inert_output
from lineage_quality.errors import ConfigError, LineageQualityError
from lineage_quality.logformat import configure as configure_logging
from lineage_quality.masking import masked
from lineage_quality.version import __version__

COMMANDS = (
    serve, check, schema, bindings, history, demo, gate, impact, dead_letters, datahub, view,
)  # fmt: skip


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lineage-quality",
        description="`lineage-quality serve | check | schema | bindings | history | demo | gate | "
        "impact | dead-letters | datahub | view`.",
    )
    parser.add_argument("--version", action="version", version=__version__)
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    parser.add_argument(
        "--log-format",
        choices=["text", "json"],
        default="text",
        help="json: one JSON object per log line (time, level, logger, message)",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; whatever it prints is made inert (`cli/terminal.py`)."""
    with inert_output():
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    configure_logging(logging.DEBUG if args.verbose else logging.INFO, args.log_format)
    logging.getLogger("py4j").setLevel(logging.WARNING)
    try:
        return int(args.func(args))
    except LineageQualityError as exc:
        print(f"lineage-quality: error: {masked(str(exc))}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] != "pyspark":
            raise
        from lineage_quality.evaluation.spark_line import pyspark_version

        try:
            pyspark_version()  # its ConfigError says what to install
        except ConfigError as missing:
            print(f"lineage-quality: error: {missing}", file=sys.stderr)
            return 2
        raise


if __name__ == "__main__":
    sys.exit(main())
