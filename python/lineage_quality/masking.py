"""One way to keep a password out of a message: `masked`, used by every message that may hold
one (start-up errors, the CLI's error line, every log record of `serve` through its secrets
filter, producer/secrets.py).

A password in a URL is written in more ways than parsers agree on: `user:PASS@`, libpq's
`?password=` (and `password=` in a key/value connection string), a `%` or an `@` not
percent-encoded (libpq then splits the URL elsewhere than urllib does, and its error quotes the
fragment it choked on), a mistyped scheme. A parser-based mask misses some of them, so this one
is textual and errs towards masking: in a word that has a `scheme:` (`//` or not) and an `@`,
everything between them but a plain user name; every `password=` value; and, wherever it
appears, every password this process was told of (`remember`), as written and percent-decoded.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from urllib.parse import unquote

MASK = "***"
_MIN_LENGTH = 4  # a shorter value masked wherever it appears would mask ordinary words

_WORD = re.compile(r"\S+")  # one match per word: linear whatever the text
_SCHEME = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-")
_PLAIN_USER = re.compile(r"[A-Za-z0-9._~\-]*")
# after a `://`: `user:` and a password holding spaces, up to an `@` within 256 characters
_SPACED = re.compile(r"(?P<user>[A-Za-z0-9._~%\-]*:)(?P<password>[^/@\n]{0,256})@")
# `password=VALUE`, `sslpassword = 'quoted value'`, `PGPASSWORD=...`: up to `&`, `;`, space
_PASSWORD = re.compile(
    r"(?P<key>password\s*=\s*)(?P<value>'(?:[^'\\]|\\.)*'?|\"[^\"]*\"?|[^\s&;'\"]*)",
    re.IGNORECASE,
)

_lock = threading.Lock()
_remembered: tuple[str, ...] = ()  # longest first


def remember(secrets: Iterable[str]) -> None:
    """Mask these values (and their percent-decoded forms) in every later message."""
    global _remembered
    found: set[str] = set()
    for secret in secrets:
        found.update((secret, unquote(secret)))
    with _lock:
        kept = {*_remembered, *(s for s in found if len(s) >= _MIN_LENGTH)}
        _remembered = tuple(sorted(kept, key=len, reverse=True))


def masked(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` with every password form masked (see the module docstring), and `secrets` too."""
    known = _remembered
    extra = [s for s in secrets if len(s) >= _MIN_LENGTH]
    if extra:
        known = tuple(sorted({*known, *extra}, key=len, reverse=True))
    for secret in known:
        if secret in text:
            text = text.replace(secret, MASK)
    if "@" in text:
        text = _mask_spaced(text)
        text = _WORD.sub(_mask_word, text)
    if "=" in text:
        text = _PASSWORD.sub(lambda m: m.group("key") + MASK, text)
    return text


def _mask_word(match: re.Match[str]) -> str:
    """A word with `scheme:` (then up to three `/`) before its last `@`: all between them but a
    plain user name masked. Scanned by hand, each character a bounded number of times (a
    pattern would backtrack over a long word)."""
    word = match.group()
    at = word.rfind("@")
    if at < 0:
        return word
    colon = word.find(":", 0, at)
    previous = -1
    while colon >= 0:
        start = colon
        while start > previous + 1 and word[start - 1] in _SCHEME:
            start -= 1
        while start < colon and not word[start].isalpha():
            start += 1
        if start < colon:
            return word[: colon + 1] + _masked_userinfo(word[colon + 1 : at]) + word[at:]
        previous, colon = colon, word.find(":", colon + 1, at)
    return word


def _mask_spaced(text: str) -> str:
    """`scheme://user:PASS WITH SPACES@host`: the words after the first are not a URL's."""
    start = text.find("://")
    while start >= 0:
        found = _SPACED.match(text, start + 3)
        if found and any(c.isspace() for c in found.group("password")):
            cut = found.start("password")
            text = text[:cut] + MASK + text[found.end("password") :]
        start = text.find("://", start + 3)
    return text


def _masked_userinfo(rest: str) -> str:
    """What lies between a scheme's `:` and the last `@`: `//user:***`, or all masked."""
    slashes = len(rest) - len(rest.lstrip("/"))
    lead, info = rest[: min(slashes, 3)], rest[min(slashes, 3) :]
    if ":" not in info and "@" not in info:
        return rest  # a user name alone: no password to mask
    user = info.split(":", 1)[0]
    if _PLAIN_USER.fullmatch(user) and user != MASK:
        return f"{lead}{user}:{MASK}"
    return f"{lead}{MASK}"  # in doubt, all of it


def url_secrets(url: str) -> list[str]:
    """The password-like parts of a URL or connection string, however it splits: between
    the first `:` after `://` and each `@` of it, and each `password=` value, unquoted."""
    found: list[str] = []
    _, sep, rest = url.partition("://")
    if sep:
        user_and_password = rest.split("@")[:-1]
        for end in range(1, len(user_and_password) + 1):
            userinfo = "@".join(user_and_password[:end])
            if ":" in userinfo:
                found.append(userinfo.split(":", 1)[1])
    for match in _PASSWORD.finditer(url):
        found.append(match.group("value").strip("'\""))
    return [s for s in found if s]
