"""Several pattern rules on one column as ONE DFA walk: the product of their DFAs
(engine/regex_dfa.py), whose states carry a bit per pattern. Each row's bytes are read once
however many patterns test the column; the JVM helper (`RegexDfa.findAll`) returns a bitmask,
bit i set when pattern i finds a match, the same answer as `rlike` for each pattern (values with
a non-ASCII byte, or ending in a line terminator when some pattern ends with `$`, go to
java.util.regex for every pattern).

Table layout (big-endian): u32 state count N; u8 pattern count K (<= 64); u64 mask of the
patterns ending with `$`; N u8 flags (2 = dead: no pattern can still match); N u64 accept masks
(bits of the patterns whose component accepts); N x 129 u16 next states (bytes 0..127, then
128 = end of input). State 0 is the start.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from functools import lru_cache

import attrs

from lineage_quality.engine.regex_dfa import (
    ACCEPT,
    DEAD,
    END,
    ENDS_AT_END,
    SYMBOLS,
    compile_dfa,
    next_state,
)

MAX_PATTERNS = 63  # bits of a signed bigint usable as literal masks
MAX_PRODUCT_STATES = 1024  # bounds both the table (~260 KiB) and the time to build it


@attrs.frozen
class _MaskDfa:
    """A DFA whose states carry the bits of the patterns they accept (after END)."""

    dead: tuple[bool, ...]
    accept: tuple[int, ...]
    rows: tuple[tuple[int, ...], ...]
    ends: int  # bits of the patterns ending with `$`
    width: int  # how many patterns (bits)


def _single(table: bytes) -> _MaskDfa:
    count, options = struct.unpack_from(">IB", table, 0)
    flags = table[5 : 5 + count]
    base = 5 + count
    rows = tuple(
        struct.unpack_from(f">{SYMBOLS}H", table, base + state * SYMBOLS * 2)
        for state in range(count)
    )
    return _MaskDfa(
        dead=tuple(bool(f & DEAD) for f in flags),
        accept=tuple(1 if f & ACCEPT else 0 for f in flags),
        rows=rows,
        ends=1 if options & ENDS_AT_END else 0,
        width=1,
    )


def _product(a: _MaskDfa, b: _MaskDfa) -> _MaskDfa | None:
    """a's patterns, then b's (shifted past a's bits); None past MAX_PRODUCT_STATES."""
    index = {(0, 0): 0}
    order = [(0, 0)]
    rows: list[tuple[int, ...]] = []
    while len(rows) < len(order):
        x, y = order[len(rows)]
        row = []
        for nx, ny in zip(a.rows[x], b.rows[y], strict=True):
            pair = (nx, ny)
            at = index.get(pair)
            if at is None:
                if len(order) >= MAX_PRODUCT_STATES:
                    return None
                at = index[pair] = len(order)
                order.append(pair)
            row.append(at)
        rows.append(tuple(row))
    return _MaskDfa(
        dead=tuple(a.dead[x] and b.dead[y] for x, y in order),
        accept=tuple(a.accept[x] | (b.accept[y] << a.width) for x, y in order),
        rows=tuple(rows),
        ends=a.ends | (b.ends << a.width),
        width=a.width + b.width,
    )


def _pack(dfa: _MaskDfa) -> bytes:
    count = len(dfa.rows)
    out = bytearray(struct.pack(">IBQ", count, dfa.width, dfa.ends))
    out += bytes(DEAD if d else 0 for d in dfa.dead)
    out += struct.pack(f">{count}Q", *dfa.accept)
    for r in dfa.rows:
        out += struct.pack(f">{SYMBOLS}H", *r)
    return bytes(out)


@lru_cache(maxsize=256)
def group_patterns(patterns: tuple[str, ...]) -> tuple[tuple[tuple[str, ...], bytes], ...]:
    """`patterns` split into groups of 2 or more that each walk as one product table, in order,
    each at most MAX_PATTERNS wide and MAX_PRODUCT_STATES large. Patterns without a DFA, and a
    pattern left alone in its group, are not in any group (they run on their own)."""
    groups: list[tuple[tuple[str, ...], bytes]] = []
    members: list[str] = []
    current: _MaskDfa | None = None

    def close() -> None:
        if current is not None and len(members) > 1:
            groups.append((tuple(members), _pack(current)))

    for pattern in patterns:
        table = compile_dfa(pattern)
        if table is None:
            continue
        single = _single(table)
        joined = None
        if current is not None and current.width < MAX_PATTERNS:
            joined = _product(current, single)
        if joined is None:
            close()
            members, current = [pattern], single
        else:
            members.append(pattern)
            current = joined
    close()
    return tuple(groups)


def compile_dfa_set(patterns: Sequence[str]) -> bytes | None:
    """One product table for all of `patterns` (2..63), or None when they do not fit in one."""
    if not 2 <= len(patterns) <= MAX_PATTERNS:
        return None
    groups = group_patterns(tuple(patterns))
    if len(groups) != 1 or len(groups[0][0]) != len(patterns):
        return None
    return groups[0][1]


def run_dfa_set(table: bytes, value: str) -> int | None:
    """The table's bitmask for `value` the way the JVM side computes it, or None when the JVM
    side hands the value to java.util.regex (non-ASCII, or a final line terminator under `$`)."""
    data = value.encode("utf-8", "surrogatepass")
    count, _k, ends = struct.unpack_from(">IBQ", table, 0)
    if any(b >= 0x80 for b in data) or (ends and data[-1:] in (b"\n", b"\r")):
        return None
    flags = table[13 : 13 + count]
    accepts = struct.unpack_from(f">{count}Q", table, 13 + count)
    base = 13 + count + 8 * count
    state = 0
    for b in data:
        state = next_state(table, base, state, b)
        if flags[state] & DEAD:
            return 0
    return int(accepts[next_state(table, base, state, END)])
