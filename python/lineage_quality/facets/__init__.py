"""OpenLineage facets built from rule results."""

from lineage_quality.facets.assertions import assertions_facet, test_run_facet, to_json_dict

__all__ = ["assertions_facet", "test_run_facet", "to_json_dict"]
