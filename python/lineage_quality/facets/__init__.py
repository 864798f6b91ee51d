"""OpenLineage facets built from rule results."""

from lineage_quality.facets.assertions import (
    assertion_json,
    assertions_facet,
    assertions_facet_json,
    test_run_facet,
    to_json_dict,
)
from lineage_quality.facets.metrics import dataset_metrics_facet, input_metrics_facet

__all__ = [
    "assertion_json",
    "assertions_facet",
    "assertions_facet_json",
    "dataset_metrics_facet",
    "input_metrics_facet",
    "test_run_facet",
    "to_json_dict",
]
