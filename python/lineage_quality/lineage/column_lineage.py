"""An output's column lineage, read from the event's `columnLineage` dataset facet. Pure.

The facet (OpenLineage ColumnLineageDatasetFacet) maps each output column to its input fields
under `fields.<column>.inputFields`, each `{namespace, name, field, transformations}`; newer
listeners may also list, under `dataset`, input fields that shape the whole dataset (a filter,
a join key). An input field counts as a source of the column's values (`InputField.direct`) when
one of its transformations is DIRECT, or when it lists none (the facet before transformations
were added). Anything malformed in the facet is ignored, field by field: it comes from events.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeGuard

from lineage_quality.lineage.model import InputField

FACET = "columnLineage"
# a parse's objects are dicts: their check first, the Mapping ABC's (slow) only for anything else
_MAPPINGS = (dict, Mapping)


def column_lineage(
    facets: Mapping[str, Any] | None,
) -> tuple[dict[str, tuple[InputField, ...]] | None, frozenset[str]]:
    """(each output column's input fields, the datasets the facet names for the whole dataset);
    (None, empty) when the dataset's facets have no column lineage."""
    facet = facets.get(FACET) if _mapping(facets) else None
    if not _mapping(facet):
        return None, frozenset()
    fields = facet.get("fields")
    columns: dict[str, tuple[InputField, ...]] = {}
    if _mapping(fields):
        for column, entry in fields.items():
            inputs = entry.get("inputFields") if isinstance(entry, _MAPPINGS) else None
            if isinstance(column, str) and isinstance(inputs, list):
                columns[column] = _input_fields(inputs)
    whole = facet.get("dataset")
    sources = frozenset(f.dataset for f in _input_fields(whole if isinstance(whole, list) else []))
    return columns, sources


def _mapping(doc: Any) -> TypeGuard[Mapping[str, Any]]:
    return isinstance(doc, _MAPPINGS)


def _input_fields(docs: list[Any]) -> tuple[InputField, ...]:
    """The well-formed input fields of `docs`, in their order (one loop: a facet has one per
    column and source, hundreds on a wide table)."""
    found: list[InputField] = []
    for doc in docs:
        if not isinstance(doc, _MAPPINGS):  # inline: once per field of a facet
            continue
        namespace, name, field = doc.get("namespace"), doc.get("name"), doc.get("field")
        if not (isinstance(namespace, str) and isinstance(name, str) and isinstance(field, str)):
            continue
        kinds = doc.get("transformations")
        direct = True
        if isinstance(kinds, list) and kinds:
            direct = False
            for kind in kinds:
                if isinstance(kind, _MAPPINGS) and kind.get("type") == "DIRECT":
                    direct = True
                    break
        found.append(InputField(f"{namespace}:{name}", field, direct))
    return tuple(found)
