"""What an ODCS contract says about its failing-row samples (lineage_quality.samples):

- a property is personal, and its sampled values masked, when it has a `classification` other
  than public/internal, a `pii` tag, or the custom property `pii` (or `lineageQuality.pii`)
  true; its custom property `lineageQuality.samples` (`show`, `hash`, `redact`) says how,
  `show` being the only way to see a classified column's values;
- the key columns shown with each failing row: the `primaryKey` properties (in
  `primaryKeyPosition` order), else the object's `lineageQuality.samples.keys` (comma-separated);
- `lineageQuality.samples.rows` (0-100, 0: none) on a quality entry, the object or the contract;
  `lineageQuality.samples.facets` (true/false) on the object or the contract.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from open_data_contract_standard.model import (
    DataQuality,
    OpenDataContractStandard,
    SchemaObject,
    SchemaProperty,
)

from lineage_quality.contracts.odcs_quality import QualityReader, Where
from lineage_quality.rules import Rule
from lineage_quality.samples import MAX_ROWS, PII_TAG, Masking, SamplePolicy, classified

SAMPLES_KEY = "lineageQuality.samples"  # a property's masking
ROWS_KEY = "lineageQuality.samples.rows"
FACETS_KEY = "lineageQuality.samples.facets"
KEYS_KEY = "lineageQuality.samples.keys"
PII_KEYS = ("pii", "lineageQuality.pii")
_TRUE = ("true", "yes", "on", "1")
_FALSE = ("false", "no", "off", "0")
_MASK_WORDS = {"show": Masking.SHOW, "hash": Masking.HASH, "mask": Masking.HASH}
_MASK_WORDS["redact"] = Masking.REDACT


def sample_policy(
    doc: OpenDataContractStandard,
    obj: SchemaObject,
    rules: Sequence[tuple[Rule, DataQuality]],
    reader: QualityReader,
    where: Where,
    root: Where,
) -> SamplePolicy:
    """The policy of one schema object; a value it cannot read is a ContractError at its key."""
    masks: list[tuple[str, str]] = []
    for k, prop in enumerate(obj.properties or []):
        how = _masking(prop, reader, where.child("properties").child(k))
        if how is not None and prop.name:
            masks.append((prop.name.lower(), how))
    per_rule = []
    for rule, q in rules:
        rows = _rows(q.customProperties, reader, where)  # the entry's own location is the rule's
        if rows is not None:
            per_rule.append((rule.id, rows))
    rows = _rows(obj.customProperties, reader, where)
    if rows is None:
        rows = _rows(doc.customProperties, reader, root)
    facets = _flag(obj.customProperties, reader, where)
    if facets is None:
        facets = _flag(doc.customProperties, reader, root)
    return SamplePolicy(
        rows=rows,
        per_rule=tuple(per_rule),
        keys=_keys(obj),
        masks=tuple(masks),
        facets=facets,
    )


def _custom(props: Sequence[Any] | None, keys: Sequence[str]) -> tuple[int, str] | None:
    for i, p in enumerate(props or []):
        if p.property in keys and p.value is not None:
            return i, str(p.value)
    return None


def _masking(prop: SchemaProperty, reader: QualityReader, where: Where) -> str | None:
    """How the property's samples are masked: None when it is not personal and says nothing."""
    found = _custom(prop.customProperties, (SAMPLES_KEY,))
    if found is not None:
        i, value = found
        how = _MASK_WORDS.get(value.strip().lower())
        if how is None:
            raise reader.fail(
                f"{SAMPLES_KEY} must be show, hash or redact, not {value!r}",
                where.child("customProperties").child(i),
            )
        return how
    pii = _custom(prop.customProperties, PII_KEYS)
    personal = (
        classified(prop.classification)
        or any(t.strip().lower() == PII_TAG for t in prop.tags or [])
        or (pii is not None and pii[1].strip().lower() in _TRUE)
    )
    return Masking.HASH if personal else None


def _keys(obj: SchemaObject) -> tuple[str, ...]:
    primary = [
        (p.primaryKeyPosition if p.primaryKeyPosition is not None else 1 << 30, i, p.name)
        for i, p in enumerate(obj.properties or [])
        if p.primaryKey and p.name
    ]
    if primary:
        return tuple(str(name) for _, _, name in sorted(primary))
    declared = _custom(obj.customProperties, (KEYS_KEY,))
    if declared is None:
        return ()
    return tuple(k.strip() for k in declared[1].split(",") if k.strip())


def _rows(props: Sequence[Any] | None, reader: QualityReader, where: Where) -> int | None:
    found = _custom(props, (ROWS_KEY,))
    if found is None:
        return None
    i, value = found
    try:
        rows = int(value.strip())
    except ValueError:
        rows = -1
    if not 0 <= rows <= MAX_ROWS:
        raise reader.fail(
            f"{ROWS_KEY} must be a whole number from 0 to {MAX_ROWS}, not {value!r}",
            where.child("customProperties").child(i),
        )
    return rows


def _flag(props: Sequence[Any] | None, reader: QualityReader, where: Where) -> bool | None:
    found = _custom(props, (FACETS_KEY,))
    if found is None:
        return None
    i, value = found
    word = value.strip().lower()
    if word not in _TRUE and word not in _FALSE:
        raise reader.fail(
            f"{FACETS_KEY} must be true or false, not {value!r}",
            where.child("customProperties").child(i),
        )
    return word in _TRUE
