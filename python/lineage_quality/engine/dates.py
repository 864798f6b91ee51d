"""Date formats: Python strftime (`%Y-%m-%d`, as the schema-rules JSON writes them) -> the
Java DateTimeFormatter pattern Spark parses with. A format without `%` is taken as a Java
pattern already (`yyyy-MM-dd`)."""

from __future__ import annotations

_DIRECTIVES = {
    "Y": "yyyy",
    "y": "yy",
    "m": "MM",
    "d": "dd",
    "H": "HH",
    "I": "hh",
    "M": "mm",
    "S": "ss",
    "f": "SSSSSS",
    "p": "a",
    "b": "MMM",
    "B": "MMMM",
    "a": "EEE",
    "A": "EEEE",
    "j": "DDD",
    "z": "Z",
    "Z": "z",
}


def java_pattern(fmt: str) -> str:
    """Convert a strftime format; raise ValueError naming an unsupported directive."""
    if "%" not in fmt:
        return fmt
    out: list[str] = []
    literal: list[str] = []

    def flush() -> None:
        if literal:
            text = "".join(literal).replace("'", "''")
            # Letters are pattern symbols in Java: quote literal runs that contain any.
            out.append(f"'{text}'" if any(c.isalpha() for c in text) else text)
            literal.clear()

    i = 0
    while i < len(fmt):
        ch = fmt[i]
        if ch != "%":
            literal.append(ch)
            i += 1
            continue
        if i + 1 >= len(fmt):
            raise ValueError(f"date format {fmt!r} ends with a lone %")
        code = fmt[i + 1]
        if code == "%":
            literal.append("%")
        elif code in _DIRECTIVES:
            flush()
            out.append(_DIRECTIVES[code])
        else:
            raise ValueError(f"date format {fmt!r}: directive %{code} is not supported")
        i += 2
    flush()
    return "".join(out)
