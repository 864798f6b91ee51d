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
from typing import Any

from lineage_quality.lineage.model import InputField

FACET = "columnLineage"


def column_lineage(
    facets: Mapping[str, Any] | None,
) -> tuple[dict[str, tuple[InputField, ...]] | None, frozenset[str]]:
    """(each output column's input fields, the datasets the facet names for the whole dataset);
    (None, empty) when the dataset's facets have no column lineage."""
    facet = (facets or {}).get(FACET) if isinstance(facets, Mapping) else None
    if not isinstance(facet, Mapping):
        return None, frozenset()
    fields = facet.get("fields")
    columns: dict[str, tuple[InputField, ...]] = {}
    if isinstance(fields, Mapping):
        for column, entry in fields.items():
            inputs = entry.get("inputFields") if isinstance(entry, Mapping) else None
            if isinstance(column, str) and isinstance(inputs, list):
                columns[column] = tuple(f for f in map(_input_field, inputs) if f is not None)
    whole = facet.get("dataset")
    sources = frozenset(
        f.dataset
        for f in map(_input_field, whole if isinstance(whole, list) else [])
        if f is not None
    )
    return columns, sources


def _input_field(doc: Any) -> InputField | None:
    if not isinstance(doc, Mapping):
        return None
    namespace, name, field = doc.get("namespace"), doc.get("name"), doc.get("field")
    if not (isinstance(namespace, str) and isinstance(name, str) and isinstance(field, str)):
        return None
    kinds = doc.get("transformations")
    direct = True
    if isinstance(kinds, list) and kinds:
        direct = any(isinstance(t, Mapping) and t.get("type") == "DIRECT" for t in kinds)
    return InputField(f"{namespace}:{name}", field, direct)
