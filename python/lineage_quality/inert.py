"""Event-controlled text made inert for where it is shown.

Job and dataset names, run ids and sink answers come from outside. Shown raw, a newline forges a
log record, an escape sequence drives the operator's terminal, and `<!channel>` pings a Slack
channel. `inert` writes every control character as an escape (`\\n`, `\\x1b`, `\\u2028`); `slack`
also escapes Slack mrkdwn's `&`, `<` and `>`; `truncate` cuts such text to a length limit with a
visible marker, never inside an escape; `html_text` makes it safe in HTML or SVG text and quoted
attributes (a page written to a terminal carries no control byte either).
"""

from __future__ import annotations

import html
import re

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(char: str) -> str:
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


# C0 controls, DEL and C1 controls (0x9b alone starts an escape sequence on many terminals), the
# line and paragraph separators (line breaks to some log viewers), and the bidirectional controls
# that reorder what a terminal or viewer shows ("Trojan Source").
_CONTROLS = [
    *(chr(c) for c in range(0x20)),
    *(chr(c) for c in range(0x7F, 0xA0)),
    *"\u2028\u2029\u200e\u200f\u061c",
    *(chr(c) for c in range(0x202A, 0x202F)),
    *(chr(c) for c in range(0x2066, 0x206A)),
]
_ESCAPES = {c: _escape(c) for c in _CONTROLS}
_TABLE = str.maketrans(_ESCAPES)
_SLACK_TABLE = str.maketrans({**_ESCAPES, "&": "&amp;", "<": "&lt;", ">": "&gt;"})
_ANY_CONTROL = re.compile("[" + re.escape("".join(_CONTROLS)) + "]")


def inert(text: str) -> str:
    """`text` with every control character written as an escape: one line, no terminal
    sequence. Backslashes are kept (paths), so `\\n` may also have been written as is."""
    if _ANY_CONTROL.search(text) is None:  # nearly always: no copy
        return text
    return text.translate(_TABLE)


_LINES_TABLE = str.maketrans({c: e for c, e in _ESCAPES.items() if c not in "\n\t"})


def inert_lines(text: str) -> str:
    """`text` as `inert` writes it, but for its line breaks and tabs: a command's whole output
    (a table, a page, JSON) with no byte that drives the terminal it is printed to."""
    if _ANY_CONTROL.search(text) is None:
        return text
    return text.translate(_LINES_TABLE)


def slack(text: str) -> str:
    """`text` for Slack mrkdwn: `&`, `<`, `>` escaped as Slack asks (so no mention, channel ping
    or link can be written) and control characters as by `inert` (no forged line)."""
    return text.translate(_SLACK_TABLE)


TRUNCATED = " … (truncated)"
# an `&amp;` `&lt;` `&gt;` cut before its `;`, or an escape of `inert` cut short
_CUT_ESCAPE = re.compile(r"(&[a-z]*|\\(x[0-9a-f]?|u[0-9a-f]{0,3})?)$")


def truncate(text: str, limit: int, marker: str = TRUNCATED) -> str:
    """`text` (as escaped by `slack` or `inert`) cut to at most `limit` characters, ending in
    `marker` when cut; an escape is never cut in half."""
    if len(text) <= limit:
        return text
    kept = text[: max(0, limit - len(marker))]
    kept = _CUT_ESCAPE.sub("", kept)
    return kept + marker


# What XML 1.0 cannot hold even escaped, left after `inert`: lone surrogates, U+FFFE, U+FFFF.
_NOT_XML = re.compile("[\ud800-\udfff\ufffe\uffff]")


def html_text(value: str) -> str:
    """`value` safe in HTML and XML text and in a quoted attribute: controls written as `inert`
    writes them (visible, and no byte that drives a terminal the page is printed to), then
    `&`, `<`, `>`, `"` and `'` escaped."""
    shown = _NOT_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", inert(value))
    return html.escape(shown, quote=True)
