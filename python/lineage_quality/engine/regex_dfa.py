"""Pattern rules as a byte-level DFA: the same verdict as Spark's `rlike`, several times faster.

`rlike` decodes every value into a Java String and runs java.util.regex's backtracking matcher
on it. For the patterns data contracts use (character classes, literals, repetition, groups,
alternation, `^...$`), the question "does the value contain a match" is a regular language, so a
DFA over the value's UTF-8 bytes answers it in one pass without decoding. `compile_dfa` builds
that DFA for the subset of Java's syntax whose meaning it knows exactly, and answers None for
anything else (the rule then runs on `rlike`, as before). The JVM side (jvm-config/src,
`lineagequality.RegexDfa`) walks the table; a value holding any non-ASCII byte is matched by
java.util.regex instead, so the DFA only ever decides ASCII input, where its meaning is Java's:

- `find` semantics, like `rlike`: a match anywhere unless anchored by `^` / `$`;
- `$` (no MULTILINE) also matches before a final line terminator, except between "\\r" and
  "\\n": for a pattern ending in `$`, a value ending in "\\n" or "\\r" goes to java.util.regex,
  and the DFA reads `$` as the end of input;
- `.` is any character but "\\n" and "\\r"; `\\d \\w \\s` are ASCII classes (Java's default);
- lazy quantifiers match the same strings as greedy ones (the verdict is only "any match").

Table layout (big-endian): u32 state count N; u8 options (1 = the pattern ends with `$`); N flag
bytes (1 = accepting, 2 = dead: no input leads to acceptance); N x 129 u16 next states (bytes
0..127, then 128 = end of input). State 0 is the start.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable

ASCII = (1 << 128) - 1
END = 128  # the end-of-input symbol
SYMBOLS = 129
MAX_STATES = 1024
MAX_NFA = 4096
MAX_REPEAT = 64

ACCEPT = 1
DEAD = 2
ENDS_AT_END = 1  # header option: the pattern ends with `$`


def _bits(chars: Iterable[int]) -> int:
    mask = 0
    for c in chars:
        mask |= 1 << c
    return mask


def _range(low: int, high: int) -> int:
    return ((1 << (high + 1)) - 1) ^ ((1 << low) - 1)


DIGIT = _range(ord("0"), ord("9"))
WORD = DIGIT | _range(ord("a"), ord("z")) | _range(ord("A"), ord("Z")) | _bits([ord("_")])
SPACE = _bits(b" \t\n\x0b\f\r")
DOT = ASCII & ~_bits(b"\n\r")
CLASS_ESCAPES = {
    "d": DIGIT,
    "D": ASCII & ~DIGIT,
    "w": WORD,
    "W": ASCII & ~WORD,
    "s": SPACE,
    "S": ASCII & ~SPACE,
}
CHAR_ESCAPES = {"t": 9, "n": 10, "r": 13, "f": 12}
# Outside a class these stand for themselves only when escaped.
SPECIAL = set("\\^$.|?*+()[]{}")


class Unsupported(Exception):
    """The pattern uses syntax this compiler does not translate: it stays on `rlike`."""


# --- parsing: pattern -> tree of ("set", mask) | ("cat", [..]) | ("alt", [..]) | ("rep", n, m, t)


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0

    def peek(self) -> str | None:
        return self.text[self.i] if self.i < len(self.text) else None

    def take(self) -> str:
        ch = self.text[self.i]
        self.i += 1
        return ch

    def alternation(self) -> tuple[object, ...]:
        branches = [self.sequence()]
        while self.peek() == "|":
            self.take()
            branches.append(self.sequence())
        return branches[0] if len(branches) == 1 else ("alt", branches)

    def sequence(self) -> tuple[object, ...]:
        items: list[tuple[object, ...]] = []
        while (ch := self.peek()) is not None and ch not in "|)":
            items.append(self.quantified(self.atom()))
        return ("cat", items)

    def atom(self) -> tuple[object, ...]:
        ch = self.take()
        if ch == "(":
            if self.peek() == "?":
                if self.text[self.i : self.i + 2] != "?:":
                    raise Unsupported("group flag or look-around")
                self.i += 2
            inner = self.alternation()
            if self.peek() != ")":
                raise Unsupported("unbalanced group")
            self.take()
            return inner
        if ch == "[":
            return ("set", self.char_class())
        if ch == ".":
            return ("set", DOT)
        if ch == "\\":
            return ("set", self.escape(in_class=False))
        if ch in SPECIAL:
            raise Unsupported(f"{ch!r} here")
        return ("set", 1 << _ascii(ch))

    def escape(self, in_class: bool) -> int:
        if self.peek() is None:
            raise Unsupported("trailing backslash")
        ch = self.take()
        if ch in CLASS_ESCAPES:
            return CLASS_ESCAPES[ch]
        if ch in CHAR_ESCAPES:
            return 1 << CHAR_ESCAPES[ch]
        if ch.isascii() and not ch.isalnum() and ch.isprintable():
            return 1 << ord(ch)  # an escaped punctuation character is itself
        raise Unsupported(f"escape \\{ch}")

    def char_class(self) -> int:
        negate = self.peek() == "^"
        if negate:
            self.take()
        if self.peek() in ("]", None):
            raise Unsupported("empty or ']'-first class")
        mask = 0
        first = True
        while True:
            ch = self.peek()
            if ch is None:
                raise Unsupported("unterminated class")
            if ch == "]":
                self.take()
                break
            if ch == "[" or self.text.startswith("&&", self.i):
                raise Unsupported("nested class or intersection")
            low, single = self.class_item()
            if self.peek() == "-" and self.text[self.i + 1 : self.i + 2] not in ("]", ""):
                self.take()
                if single is None or self.peek() in ("[", "\\"):
                    raise Unsupported("range with a class escape")
                _, high = self.class_item()
                if high is None or high < single:
                    raise Unsupported("bad range")
                mask |= _range(single, high)
            elif ch == "-" and not first and self.peek() != "]":
                raise Unsupported("'-' inside a class, neither first nor last")
            else:
                mask |= low
            first = False
        return (ASCII & ~mask) if negate else mask

    def class_item(self) -> tuple[int, int | None]:
        """One class member: its mask, and its code when it is a single character."""
        ch = self.take()
        if ch == "\\":
            if self.peek() in CLASS_ESCAPES:
                return self.escape(in_class=True), None
            mask = self.escape(in_class=True)
            return mask, mask.bit_length() - 1
        code = _ascii(ch)
        return 1 << code, code

    def quantified(self, node: tuple[object, ...]) -> tuple[object, ...]:
        ch = self.peek()
        if ch is None or ch not in "*+?{":
            return node
        self.take()
        high: int | None
        if ch == "*":
            low, high = 0, None
        elif ch == "+":
            low, high = 1, None
        elif ch == "?":
            low, high = 0, 1
        else:
            close = self.text.find("}", self.i)
            if close < 0:
                raise Unsupported("unterminated {")
            body = self.text[self.i : close]
            self.i = close + 1
            parts = body.split(",")
            if len(parts) > 2 or not parts[0].isdigit():
                raise Unsupported(f"quantifier {{{body}}}")
            low = int(parts[0])
            if len(parts) == 1:
                high = low
            elif parts[1] == "":
                high = None
            elif parts[1].isdigit():
                high = int(parts[1])
            else:
                raise Unsupported(f"quantifier {{{body}}}")
            if high is not None and high < low:
                raise Unsupported("{n,m} with m < n")
            if low > MAX_REPEAT or (high or 0) > MAX_REPEAT:
                raise Unsupported("repetition count too large for a DFA")
        if self.peek() == "?":
            self.take()  # lazy: the same strings match
        elif self.peek() == "+":
            raise Unsupported("possessive quantifier")
        after = self.peek()
        if after is not None and after in "*+?{":
            raise Unsupported("stacked quantifiers")
        return ("rep", low, high, node)


def _ascii(ch: str) -> int:
    code = ord(ch)
    if code < 0x20 or code > 0x7E:
        raise Unsupported("non-printable or non-ASCII character")
    return code


def parse(pattern: str) -> tuple[bool, tuple[object, ...], bool]:
    """(anchored at start, tree, anchored at end)."""
    start = pattern.startswith("^")
    body = pattern[1:] if start else pattern
    end = False
    if body.endswith("$"):
        slashes = len(body[:-1]) - len(body[:-1].rstrip("\\"))
        if slashes % 2 == 0:
            end = True
            body = body[:-1]
    parser = _Parser(body)
    tree = parser.alternation()
    if parser.i != len(body):
        raise Unsupported(f"unexpected {body[parser.i]!r}")
    if (start or end) and tree[0] == "alt":
        raise Unsupported("anchors around a top-level alternation")
    return start, tree, end


# --- NFA (Thompson) and subset construction


class _Nfa:
    def __init__(self) -> None:
        self.eps: list[list[int]] = []
        self.edges: list[list[tuple[int, int]]] = []  # (symbol mask, target)

    def state(self) -> int:
        if len(self.eps) >= MAX_NFA:
            raise Unsupported("pattern too large for a DFA")
        self.eps.append([])
        self.edges.append([])
        return len(self.eps) - 1

    def build(self, node: tuple[object, ...], entry: int) -> int:
        """Adds `node` starting at `entry`; returns its exit state."""
        kind = node[0]
        if kind == "set":
            out = self.state()
            self.edges[entry].append((node[1], out))  # type: ignore[arg-type]
            return out
        if kind == "cat":
            at = entry
            for item in node[1]:  # type: ignore[attr-defined]
                at = self.build(item, at)
            return at
        if kind == "alt":
            out = self.state()
            for branch in node[1]:  # type: ignore[attr-defined]
                start = self.state()
                self.eps[entry].append(start)
                self.eps[self.build(branch, start)].append(out)
            return out
        _, low, high, inner = node
        assert isinstance(low, int) and isinstance(inner, tuple)
        at = entry
        for _ in range(low):
            at = self.build(inner, at)
        if high is None:  # inner*: loop back
            loop = self.state()
            self.eps[at].append(loop)
            self.eps[self.build(inner, loop)].append(loop)
            return loop
        out = self.state()
        self.eps[at].append(out)
        assert isinstance(high, int)
        for _ in range(high - low):
            at = self.build(inner, at)
            self.eps[at].append(out)
        return out

    def closure(self, states: Iterable[int]) -> frozenset[int]:
        seen = set(states)
        stack = list(seen)
        while stack:
            for nxt in self.eps[stack.pop()]:
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        return frozenset(seen)


def compile_dfa(pattern: str) -> bytes | None:
    """The DFA table for `pattern` (layout in the module doc), or None when the pattern is
    outside the translated subset or its DFA would be too large."""
    try:
        return _compile(pattern)
    except Unsupported:
        return None
    except RecursionError:
        return None


def _compile(pattern: str) -> bytes:
    anchored_start, tree, anchored_end = parse(pattern)
    nfa = _Nfa()
    begin = nfa.state()
    entry = begin
    if not anchored_start:  # find(): the match may start anywhere
        nfa.edges[begin].append((ASCII, begin))
    exit_ = nfa.build(tree, entry)
    accept, tail = nfa.state(), nfa.state()
    nfa.eps[exit_].append(tail)
    if not anchored_end:  # the match may end anywhere: whatever follows it
        nfa.edges[tail].append((ASCII, tail))
    # `$` is then the end of input: values ending in "\n" or "\r" go to java.util.regex
    nfa.edges[tail].append((1 << END, accept))
    start = nfa.closure([begin])
    index = {start: 0}
    order = [start]
    table: list[list[int]] = []
    while len(table) < len(order):
        current = order[len(table)]
        row = []
        for symbol in range(SYMBOLS):
            bit = 1 << symbol
            targets = [t for s in current for mask, t in nfa.edges[s] if mask & bit]
            nxt = nfa.closure(targets)
            if nxt not in index:
                if len(order) >= MAX_STATES:
                    raise Unsupported("DFA too large")
                index[nxt] = len(order)
                order.append(nxt)
            row.append(index[nxt])
        table.append(row)
    flags = [ACCEPT if accept in s else 0 for s in order]
    # dead: no path to an accepting state (backwards reachability from the accepting ones)
    alive = {i for i, f in enumerate(flags) if f & ACCEPT}
    changed = True
    while changed:
        changed = False
        for i, row in enumerate(table):
            if i not in alive and any(t in alive for t in row):
                alive.add(i)
                changed = True
    flags = [f | (0 if i in alive else DEAD) for i, f in enumerate(flags)]
    out = bytearray(struct.pack(">IB", len(order), ENDS_AT_END if anchored_end else 0))
    out += bytes(flags)
    for row in table:
        out += struct.pack(f">{SYMBOLS}H", *row)
    return bytes(out)


def run_dfa(table: bytes, value: str) -> bool | None:
    """The table's answer for `value` the way the JVM side computes it, or None when the value
    holds a non-ASCII character (the JVM side hands those to java.util.regex)."""
    data = value.encode("utf-8", "surrogatepass")
    if any(b >= 0x80 for b in data):
        return None
    (count, options) = struct.unpack_from(">IB", table, 0)
    if options & ENDS_AT_END and data[-1:] in (b"\n", b"\r"):
        return None
    flags = table[5 : 5 + count]
    base = 5 + count
    state = 0
    for b in data:
        state = next_state(table, base, state, b)
        if flags[state] & DEAD:
            return False
    return bool(flags[next_state(table, base, state, END)] & ACCEPT)


def next_state(table: bytes, base: int, state: int, symbol: int) -> int:
    """The transition of a table whose u16 next-state rows start at `base`."""
    (nxt,) = struct.unpack_from(">H", table, base + (state * SYMBOLS + symbol) * 2)
    return int(nxt)
