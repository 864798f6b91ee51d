"""Failing-row samples: a few rows a failed verdict counted, shown beside it (docs/rules.md,
"Failing-row samples"), and the masking that keeps personal data out of them. Pure.

A contract says which columns are personal (`SamplePolicy`, read by contracts/odcs.py from ODCS
`classification`, a `pii` tag or custom property); the engine masks their values as it collects
them (engine/samples.py), so a raw value of such a column never reaches a `Samples` value, and so
no output (check's JSON and table, the history store, the view, facets, alerts, logs) can show
it; its min, max or median, each one row's value, is masked alike where a verdict shows it
(masked_values.py). Masking is a keyed hash (`hmac:` and 16 hex digits of HMAC-SHA256 under the
producer's sample key: equal values stay equal, so a repeated value is still recognised) or
`redact` (`***`); a column opts in to be shown with `lineageQuality.samples: show`.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from lineage_quality.rules import Rule

DEFAULT_ROWS = 5  # failing rows per rule, unless the contract or the settings say otherwise
MAX_ROWS = 100  # the most any contract may ask for: samples are a glance, not an export
MAX_TEXT = 64  # characters of one sampled value; longer ones end in TRUNCATED
TRUNCATED = "…"
REDACTED = "***"
HASH_PREFIX = "hmac:"
KEY_BYTES = 32
KEY_FILE_SUFFIX = ".sample-key"  # beside a SQLite history store: <store>.sample-key


class Masking:
    """How a column's values appear in samples."""

    HASH = "hash"  # the default of a classified column: equal values, equal hashes
    REDACT = "redact"
    SHOW = "show"  # an explicit opt-in per column

    ALL = (HASH, REDACT, SHOW)


# ODCS `classification` values that are not personal or secret; any other one masks the column
# (in doubt, masked: `restricted`, `confidential`, `secret`, `sensitive`, `pii`, ...).
OPEN_CLASSES = frozenset({"", "public", "internal", "unclassified", "none"})


def classified(classification: str | None) -> bool:
    """Whether an ODCS `classification` masks its column's samples."""
    return classification is not None and classification.strip().lower() not in OPEN_CLASSES


@attrs.frozen
class SamplePolicy:
    """What a contract says about its samples: rows per rule (None: the setting's; 0: none),
    per rule where a quality entry says otherwise, the key columns shown with each row, how each
    classified column is masked (lower-cased name -> `Masking`), and whether samples may travel
    in the lineage event's facets (None: as `serve --facet-samples` says)."""

    rows: int | None = None
    per_rule: tuple[tuple[str, int], ...] = ()
    keys: tuple[str, ...] = ()
    masks: tuple[tuple[str, str], ...] = ()
    facets: bool | None = None

    def rows_of(self, rule_id: str, default: int) -> int:
        for rid, n in self.per_rule:
            if rid == rule_id:
                return n
        return default if self.rows is None else self.rows

    def masking(self, column: str) -> str:
        return dict(self.masks).get(column.lower(), Masking.SHOW)

    @classmethod
    def merged(cls, policies: Iterable[SamplePolicy]) -> SamplePolicy:
        """The policies of every contract bound to one dataset as one: a column masked by any is
        masked (a hash beaten by a redaction), the first keys, the fewest rows, facets only when
        none refuses them."""
        found = list(policies)
        if not found:
            return cls()
        masks: dict[str, str] = {}
        for p in found:
            for column, how in p.masks:
                if how == Masking.SHOW and column in masks:
                    continue  # another contract masks it: masked
                if masks.get(column) != Masking.REDACT:
                    masks[column] = how
        rows = [p.rows for p in found if p.rows is not None]
        facets = [p.facets for p in found if p.facets is not None]
        return cls(
            rows=min(rows) if rows else None,
            per_rule=tuple(r for p in found for r in p.per_rule),
            keys=next((p.keys for p in found if p.keys), ()),
            masks=tuple(sorted(masks.items())),
            facets=all(facets) if facets else None,
        )


PII_TAG = "pii"


def tagged_personal(rules: Iterable[Rule]) -> SamplePolicy:
    """A contract format without classifications (the schema-rules JSON's rule model): a column
    is personal, and masked, when a rule on it has the tag `pii` (any case)."""
    masked = sorted(
        {
            column.lower()
            for rule in rules
            if any(t.strip().lower() == PII_TAG for t in rule.tags)
            for column in rule.columns
        }
    )
    return SamplePolicy(masks=tuple((c, Masking.HASH) for c in masked))


@attrs.frozen
class Sampling:
    """What the engine needs to take samples: the contract's policy, the rows per rule by
    default (settings) and the key of the masking hash (never shown: repr=False)."""

    policy: SamplePolicy = attrs.field(factory=SamplePolicy)
    rows: int = DEFAULT_ROWS
    key: bytes = attrs.field(factory=lambda: secrets.token_bytes(KEY_BYTES), repr=False)
    facets: bool = False  # the settings' (serve --facet-samples), unless the contract says

    @property
    def in_facets(self) -> bool:
        return self.facets if self.policy.facets is None else self.policy.facets

    def rows_of(self, rule_id: str) -> int:
        return max(0, min(MAX_ROWS, self.policy.rows_of(rule_id, self.rows)))

    def shown(self, column: str, value: object) -> str | None:
        """`value` of `column` as a sample shows it: masked as the policy says, cut to MAX_TEXT."""
        if value is None:
            return None
        how = self.policy.masking(column)
        if how == Masking.REDACT:
            return REDACTED
        text = value if isinstance(value, str) else _text(value)
        if how == Masking.HASH:
            digest = hmac.new(self.key, text.encode("utf-8", "surrogatepass"), hashlib.sha256)
            return HASH_PREFIX + digest.hexdigest()[:16]
        return cut(text)


def _text(value: object) -> str:
    if isinstance(value, bytes | bytearray):
        return value.hex()
    return str(value)


def cut(text: str, limit: int = MAX_TEXT) -> str:
    """`text` cut to `limit` characters, ending in TRUNCATED when cut."""
    return text if len(text) <= limit else text[: limit - len(TRUNCATED)] + TRUNCATED


@attrs.frozen
class Samples:
    """Up to N failing rows of one failed rule, as shown: `columns` are the key columns then the
    rule's own (or `rows`, the count of a duplicated key); each value already masked and cut.
    `masked`: the columns whose values are hashed or redacted. `error`: why none were taken."""

    columns: tuple[str, ...] = ()
    rows: tuple[tuple[str | None, ...], ...] = ()
    masked: tuple[str, ...] = ()
    error: str | None = None
    # whether they may travel in the lineage event's facets (contract, else serve's setting);
    # not shown
    facets: bool = False

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "columns": list(self.columns),
            "rows": [dict(zip(self.columns, row, strict=True)) for row in self.rows],
        }
        if self.masked:
            out["masked"] = list(self.masked)
        if self.error:
            out["error"] = self.error
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Samples:
        columns = tuple(str(c) for c in data.get("columns") or ())
        rows = tuple(
            tuple(None if r.get(c) is None else str(r.get(c)) for c in columns)
            for r in data.get("rows") or ()
            if isinstance(r, Mapping)
        )
        masked = tuple(str(c) for c in data.get("masked") or ())
        error = data.get("error")
        return cls(columns, rows, masked, None if error is None else str(error))

    def text(self) -> str:
        """Compact JSON, as stored and as the facet carries it."""
        return json.dumps(self.to_json(), ensure_ascii=False, separators=(",", ":"))

    def lines(self) -> list[str]:
        """One line per row, `column=value` pairs, for the table (printed inert by the caller)."""
        if self.error:
            return [f"samples not taken: {self.error}"]
        out = []
        for row in self.rows:
            pairs = zip(self.columns, row, strict=True)
            out.append(", ".join(f"{c}={'null' if v is None else v}" for c, v in pairs))
        return out


def rows_of_samples(samples: Samples | None) -> int:
    return 0 if samples is None else len(samples.rows)


def sample_key(path: Path | None) -> bytes:
    """The masking hash's key kept in file `path` (made, mode 0600, when missing): the same key
    every run, so a value's hash stays comparable across runs. None: a key for this process."""
    if path is None:
        return secrets.token_bytes(KEY_BYTES)
    try:
        return bytes.fromhex(path.read_text().strip())
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    key = secrets.token_bytes(KEY_BYTES)
    try:
        with open(path, "x", encoding="ascii", opener=_private) as f:
            f.write(key.hex() + "\n")
    except FileExistsError:  # made meanwhile by another process: theirs
        return bytes.fromhex(path.read_text().strip())
    return key


def _private(path: str, flags: int) -> int:
    import os

    return os.open(path, flags, 0o600)


def key_file_beside(history: str | Path | None, spool: Path | None = None) -> Path | None:
    """Where the generated sample key is kept: beside a SQLite history store, else beside the
    spool; None when neither is a local file (PostgreSQL and no spool: a key per process, unless
    the settings name a key file)."""
    if history is not None and "://" not in str(history):
        return Path(str(history) + KEY_FILE_SUFFIX)
    if spool is not None:
        return Path(str(spool) + KEY_FILE_SUFFIX)
    return None


def sample_columns(keys: Sequence[str], own: Sequence[str]) -> tuple[str, ...]:
    """The columns of a sample row: the key columns, then the rule's own not among them."""
    lowered = {k.lower() for k in keys}
    return (*keys, *(c for c in own if c.lower() not in lowered))


def sampling_of(
    rows: int,
    facets: bool,
    key_file: Path | None,
    history: str | Path | None,
    spool: Path | None = None,
) -> Sampling:
    """The producer's sampling from its settings: the key read from `key_file`, else from (or
    made) beside the history store or the spool (`key_file_beside`)."""
    where = key_file or key_file_beside(history, spool)
    return Sampling(rows=rows, key=sample_key(where), facets=facets)
