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


_UNBOUNDED = re.compile(r"[*+]|\{\d*,\}")
_GROUP_PREFIX = re.compile(r"\?(?:<[A-Za-z][A-Za-z0-9]*>|[:=!>]|<[=!]|[a-zA-Z-]*[:)])")


def _quantifier_at(text: str, i: int) -> int:
    """Length of an unbounded quantifier (`*`, `+`, `{n,}`) starting at i, else 0."""
    m = _UNBOUNDED.match(text, i)
    return len(m.group(0)) if m else 0


def _after_atom(pattern: str, i: int, stack: list[dict[str, object]]) -> int:
    """Past the quantifier (if any) following an atom ending at i; an unbounded, non-possessive
    one marks the enclosing group as holding a repetition."""
    q = _quantifier_at(pattern, i)
    if q and stack and not pattern.startswith("+", i + q):
        stack[-1]["inner"] = True
    return i + q


def backtracking_problem(pattern: str) -> str | None:
    """Why the pattern may backtrack catastrophically (exponential time on a non-matching value),
    or None. java.util.regex never checks for interruption, so a cancelled Spark task running
    such a pattern keeps its core busy: these patterns are refused instead of run.

    Detected: an unboundedly repeated group that itself contains an unbounded repetition
    (`(a+)+`, `(\\w*x?)*`, `(?:a|b+)*`), and an unboundedly repeated alternation with two
    branches starting with the same literal (`(a|ab)+`). Possessive (`++`) and atomic
    (`(?>...)`) forms do not backtrack and pass."""
    stack: list[dict[str, object]] = []
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\":
            if pattern.startswith("\\Q", i):
                end = pattern.find("\\E", i + 2)
                i = n if end < 0 else end + 2
            else:
                i += 2
            i = _after_atom(pattern, i, stack)
            continue
        if ch == "[":
            depth, j = 0, i + 1
            if j < n and pattern[j] == "^":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            while j < n:
                if pattern[j] == "\\":
                    j += 2
                    continue
                if pattern[j] == "[":
                    depth += 1
                elif pattern[j] == "]":
                    if depth == 0:
                        break
                    depth -= 1
                j += 1
            i = j + 1
            i = _after_atom(pattern, i, stack)
            continue
        if ch == "(":
            atomic = pattern.startswith("(?>", i)
            stack.append({"inner": False, "atomic": atomic, "branches": [i + 1], "start": i})
            i += 1
            if pattern.startswith("?", i):  # (?:, (?=, (?<name>, flags: skip to the body
                m = _GROUP_PREFIX.match(pattern, i)
                if m:
                    i += len(m.group(0))
                    stack[-1]["branches"] = [i]
            continue
        if ch == "|" and stack:
            branches = stack[-1]["branches"]
            assert isinstance(branches, list)
            branches.append(i + 1)
            i += 1
            continue
        if ch == ")" and stack:
            group = stack.pop()
            i += 1
            q = _quantifier_at(pattern, i)
            possessive = bool(q) and pattern.startswith("+", i + q)
            if q and not possessive and not group["atomic"]:
                body = pattern[int(str(group["start"])) : i]
                if group["inner"]:
                    return (
                        f"nested repetition {body}{pattern[i : i + q]} can backtrack exponentially"
                    )
                branches = group["branches"]
                assert isinstance(branches, list)
                firsts = [pattern[b] for b in branches if b < n and pattern[b].isalnum()]
                if len(firsts) != len(set(firsts)):
                    return (
                        f"repeated alternation {body}{pattern[i : i + q]} with overlapping "
                        "branches can backtrack exponentially"
                    )
            if stack and (q or group["inner"]) and not possessive and not group["atomic"]:
                stack[-1]["inner"] = True
            i += q
            continue
        q = _quantifier_at(pattern, i + 1) if ch not in "*+?{" else 0
        if q and stack and not pattern.startswith("+", i + 1 + q):
            stack[-1]["inner"] = True
        i += 1 + q
    return None


def pattern_refusal(pattern: str) -> str | None:
    """Why a rule's pattern will not be run (it does not compile, or may backtrack
    catastrophically), or None. The rule then becomes one ERROR result; the others still run."""
    problem = pattern_problem(pattern)
    if problem:
        return f"pattern {pattern!r} does not compile: {problem}"
    problem = backtracking_problem(pattern)
    if problem:
        return (
            f"pattern {pattern!r} refused: {problem}; rewrite it with a possessive quantifier "
            "(`++`, `*+`) or an atomic group `(?>...)`"
        )
    return None
