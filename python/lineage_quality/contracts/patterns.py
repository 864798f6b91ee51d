"""Checking a contract's regular expression when it is read.

Spark matches with Java regular expressions. Python's `re` is close enough to catch real mistakes
(an unclosed group, a dangling quantifier) but rejects some Java-only syntax, which is mapped to a
Python equivalent before compiling: `\\p{...}`/`\\P{...}` classes, `(?<name>...)` groups and
`\\Q...\\E` quoting. What still slips through is caught by Spark and reported as that rule's ERROR.
"""

from __future__ import annotations

import re

_JAVA_ONLY = [
    (re.compile(r"\\[pP]\{[^}]*\}"), "."),  # Unicode / POSIX classes
    (re.compile(r"\(\?<(?![=!])"), "(?P<"),  # named groups; not lookbehind
    (re.compile(r"\\Q.*?\\E", re.S), "x"),  # quoted literal runs
]


def pattern_problem(pattern: str) -> str | None:
    """None when the pattern compiles (as Java would read it); else what is wrong."""
    text = pattern
    for java, python in _JAVA_ONLY:
        text = java.sub(python, text)
    try:
        re.compile(text)
    except re.error as exc:
        return str(exc)
    return None
