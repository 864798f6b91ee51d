"""What users read names formats by their public names (the schema-rules JSON, ODCS, SHACL,
DataHub's Assertion entity, the OpenLineage facet), never by the project's own working documents
("seed 002") or its tracker ("issue 44"): every command's `--help`, README.md and docs/."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from lineage_quality.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[2]
# "seed 002", "Seed 004", "the seed's", "seeds 000"; "issue 44", "issues 39 and 43"
INTERNAL = re.compile(r"\b[Ss]eeds?\b(?! examples| prefixes)|\bissues? \d+", re.M)


def _helps() -> dict[str, str]:
    parser = build_parser()
    out = {"lineage-quality": parser.format_help()}
    for action in parser._actions:  # argparse keeps its subparsers only here
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out[name] = sub.format_help()
                for inner in sub._actions:
                    if isinstance(inner, argparse._SubParsersAction):
                        for inner_name, leaf in inner.choices.items():
                            out[f"{name} {inner_name}"] = leaf.format_help()
    return out


def test_every_commands_help_speaks_of_public_formats_only() -> None:
    helps = _helps()
    assert {"serve", "check", "schema", "datahub", "gate"} <= set(helps)
    found = {name: INTERNAL.findall(text) for name, text in helps.items()}
    assert {name: words for name, words in found.items() if words} == {}


@pytest.mark.parametrize(
    "doc", sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")]), ids=lambda p: p.name
)
def test_user_docs_name_no_working_document_or_tracker_issue(doc: Path) -> None:
    lines = doc.read_text().splitlines()
    # The traceability tables cite test files whose names hold "seed" (tests/seed_examples/...).
    hits = [
        f"{doc.name}:{n}: {line.strip()[:120]}"
        for n, line in enumerate(lines, 1)
        if INTERNAL.search(re.sub(r"`[^`]*seed[^`]*`|\bseed_\w+", "", line))
    ]
    assert hits == []


def test_the_pattern_catches_what_it_is_for() -> None:
    assert INTERNAL.search("check a data source (seed 002; same as check)")
    assert INTERNAL.search("what made events stick before (issue 44)")
    assert INTERNAL.search("as the seed says")
    assert not INTERNAL.search("the schema-rules JSON format")
