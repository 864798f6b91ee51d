"""The registry of rule kinds, by value: the one list of what a rule can measure. The built-in
kinds register themselves when `lineage_quality.kinds` is imported; a new kind is one module that
calls `register` (docs/architecture.md, "Add a metric kind")."""

from __future__ import annotations

from lineage_quality.rules.model import Kind

_KINDS: dict[str, Kind] = {}


def register(kind: Kind) -> Kind:
    """Add `kind`; its value, ODCS names and JSON key must be new (ValueError names the clash)."""
    if not kind.value or not kind.assertion_name:
        raise ValueError(f"{type(kind).__name__}: a kind needs a value and an assertion_name")
    if kind.value in _KINDS:
        raise ValueError(f"a kind named {kind.value!r} is already registered")
    for other in _KINDS.values():
        names = _odcs_names(kind) & _odcs_names(other)
        if names:
            raise ValueError(f"{kind.value}: ODCS name(s) {sorted(names)} read by {other.value}")
        if kind.json_key is not None and kind.json_key == other.json_key:
            raise ValueError(f"{kind.value}: JSON key {kind.json_key!r} read by {other.value}")
    _KINDS[kind.value] = kind
    return kind


def unregister(value: str) -> None:
    """Remove a registered kind (tests that register one of their own)."""
    _KINDS.pop(value, None)


def kind_named(value: str) -> Kind:
    try:
        return _KINDS[value]
    except KeyError:
        raise LookupError(f"no rule kind {value!r}; known: {', '.join(sorted(_KINDS))}") from None


def registered() -> tuple[Kind, ...]:
    return tuple(_KINDS.values())


def reading_odcs(name: str) -> Kind | None:
    """The kind an ODCS `metric:` (or `rule:`) name declares, if any."""
    return next((k for k in _KINDS.values() if k.reads_odcs(name)), None)


def odcs_names() -> list[str]:
    """Every ODCS name the registered kinds read, for the error that lists them."""
    return sorted({n for k in _KINDS.values() for n in _odcs_names(k)})


def _odcs_names(kind: Kind) -> set[str]:
    return {*kind.odcs_metrics, *(verb[0] for verb in kind.odcs_verbs)}


def reading_json(key: str) -> Kind | None:
    """The kind a key of a schema-rules JSON field declares, if any."""
    return next((k for k in _KINDS.values() if k.json_key == key), None)
