"""librdkafka settings from `--kafka-conf-file FILE` (a Java properties file, as Kafka's own
clients read one) and `--kafka-conf KEY=VALUE`: `settings_from_pairs`.

The file is where the secrets go (`sasl.password`, `ssl.key.password`...: the command line shows
in `ps`), so no error ever quotes a line of it, nor a value: an error names the file and the line
number, and the key only when it reads as a setting name (`security.protocol`), never a lone
word that may be a password wrapped onto a line of its own.

The file is read as `java.util.Properties.load` reads one, in UTF-8: `key=value`, `key: value`
and `key value` (the key ends at the first `=`, `:` or blank not escaped by `\\`), `#` and `!`
comment lines, a line ending in an odd number of `\\` continued on the next (its leading blanks
dropped), the escapes `\\t \\n \\r \\f \\uXXXX` and `\\` before any other character for that
character. Then, as Kafka's clients do with a value, its blanks at both ends are dropped. Two
departures, both refusals: a key must look like a librdkafka setting name (letters, digits,
`.`, `_`, `-`), and a line that is a key with no separator and no value at all is refused (a
lone word is more often a wrapped secret than a setting to empty; `key=` empties one).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path

from lineage_quality.errors import ConfigError

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
# shown in an error: a dotted lowercase name, as every librdkafka setting worth naming is
_SHOWN = re.compile(r"[a-z][a-z0-9_-]*(\.[a-z0-9_-]+)+")
_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
_BLANKS = " \t\f"
FORMS = "KEY=VALUE, KEY: VALUE or KEY VALUE"


def settings_from_pairs(pairs: list[str], files: list[str]) -> Mapping[str, str]:
    """librdkafka settings from each `--kafka-conf-file` in turn, then each `--kafka-conf
    KEY=VALUE` (a later one wins). ConfigError naming the file and line (or the flag's
    position), never a value."""
    found: dict[str, str] = {}
    for name in files:
        found.update(read_properties(name))
    for number, pair in enumerate(pairs, 1):
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not _NAME.fullmatch(key):
            raise ConfigError(f"--kafka-conf number {number}: not KEY=VALUE")
        found[key] = value.strip()
    return found


def read_properties(name: str) -> dict[str, str]:
    """The settings of the Java properties file `name` (see the module docstring)."""
    origin = f"--kafka-conf-file {name}"
    try:
        data = Path(name).read_bytes()
    except OSError as exc:
        raise ConfigError(f"{origin}: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ConfigError(f"{origin}, line {line}: not UTF-8 text") from None
    found: dict[str, str] = {}
    for number, logical in _logical_lines(text):
        where = f"{origin}, line {number}"
        key, value = _split(logical, where)
        found[key] = value
    return found


def _logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """(number of its first line, text) of each logical line that is not blank nor a comment:
    natural lines joined where one ends in an odd number of backslashes."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        number, line = i + 1, lines[i].lstrip(_BLANKS)
        i += 1
        if not line or line[0] in "#!":
            continue
        while _continued(line) and i < len(lines):
            line = line[:-1] + lines[i].lstrip(_BLANKS)
            i += 1
        if _continued(line):  # the file's last line: Java drops the backslash
            line = line[:-1]
        yield number, line


def _continued(line: str) -> bool:
    return (len(line) - len(line.rstrip("\\"))) % 2 == 1


def _split(line: str, where: str) -> tuple[str, str]:
    """(key, value) of one logical line, both unescaped; the value's blanks at both ends
    dropped."""
    i, n = 0, len(line)
    while i < n and line[i] not in "=:" + _BLANKS:
        i += 2 if line[i] == "\\" else 1
    raw_key = line[:i]
    rest = line[i:].lstrip(_BLANKS)
    separated = bool(rest) and rest[0] in "=:"
    if separated:
        rest = rest[1:].lstrip(_BLANKS)
    key = _unescape(raw_key, where, None)
    if not _NAME.fullmatch(key):
        raise ConfigError(f"{where}: not a setting ({FORMS}; the key a librdkafka setting name)")
    if not rest and not separated:
        raise ConfigError(f"{where}: a key with no value ({FORMS}; KEY= for an empty value)")
    return key, _unescape(rest, where, key).strip(_BLANKS)


def _unescape(text: str, where: str, key: str | None) -> str:
    if "\\" not in text:
        return text
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        i += 1
        if c != "\\" or i == n:
            out.append(c)
            continue
        c = text[i]
        i += 1
        if c == "u":
            digits = text[i : i + 4]
            if len(digits) < 4 or not all(d in "0123456789abcdefABCDEF" for d in digits):
                shown = f" (the value of {key})" if key and _SHOWN.fullmatch(key) else ""
                raise ConfigError(f"{where}{shown}: a malformed \\uXXXX escape")
            out.append(chr(int(digits, 16)))
            i += 4
        else:
            out.append(_ESCAPES.get(c, c))
    return "".join(out)
