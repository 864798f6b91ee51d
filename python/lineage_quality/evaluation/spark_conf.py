"""The user's Spark settings for the evaluator's session: `--spark-conf key=value` (repeatable)
and `--properties-file` (spark-defaults format), so the evaluator reaches the catalogs, metastores
and object stores the user's jobs use. A few settings stay the producer's own."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from lineage_quality.errors import ConfigError

# Settings the evaluator must keep: changing them would make its own queries lineage jobs,
# let `type: sql` read files, or change how rules count.
PROTECTED = {
    "spark.extraListeners": "the evaluator must not emit lineage of its own queries",
    "spark.sql.queryExecutionListeners": "the evaluator must not emit lineage of its own queries",
    "spark.sql.runSQLOnFiles": "type: sql checks may read only their dataset",
    "spark.sql.ansi.enabled": "rules count mismatches; under ANSI they would be exceptions",
    "spark.sql.legacy.timeParserPolicy": "dateFormat rules count unparseable values",
}

_LINE = re.compile(r"^\s*([^\s=:]+)\s*(?:[=:]|\s)\s*(.*?)\s*$")


def read_properties(path: str | Path) -> dict[str, str]:
    """A spark-defaults style file: `key value` or `key=value` per line, `#` comments."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{file}: cannot read the properties file: {exc}") from exc
    out: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith(("#", "!")):
            continue
        m = _LINE.match(line)
        if m is None or not m.group(2):
            raise ConfigError(f"{file}: line {number}: expected `key value` or `key=value`")
        out[m.group(1)] = m.group(2)
    return checked(out.items(), f"{file}")


def parse_pairs(pairs: Iterable[str]) -> dict[str, str]:
    """`key=value` strings (from `--spark-conf`)."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--spark-conf {pair!r}: expected key=value")
        out[key.strip()] = value.strip()
    return checked(out.items(), "--spark-conf")


def checked(items: Iterable[tuple[str, str]], where: str) -> dict[str, str]:
    out = dict(items)
    for key in out:
        if key in PROTECTED:
            raise ConfigError(f"{where}: {key} cannot be set for the evaluator: {PROTECTED[key]}")
        if not key.startswith("spark."):
            raise ConfigError(f"{where}: {key} is not a Spark setting (they start with `spark.`)")
    return out


def evaluator_conf(properties_file: str | None, pairs: Iterable[str]) -> dict[str, str]:
    """The file's settings, then `--spark-conf` ones over them."""
    conf = read_properties(properties_file) if properties_file else {}
    conf.update(parse_pairs(pairs))
    return conf
