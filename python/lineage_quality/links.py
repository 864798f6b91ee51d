"""Links to a dataset's page in the tools beside this one: the Marquez web UI (alerts link to
it, DataHub assertion results carry it as `externalUrl`) and the quality view (alerts link to
it when `--view-url` is set)."""

from __future__ import annotations

import urllib.parse


def marquez_dataset_url(web_url: str, namespace: str, name: str) -> str:
    """The dataset's page in the Marquez web UI (its route `/lineage/:nodeType/:namespace/:name`,
    each part URI-encoded as marquez-web encodes it)."""
    ns, ds = (urllib.parse.quote(part, safe="") for part in (namespace, name))
    return f"{web_url.rstrip('/')}/lineage/dataset/{ns}/{ds}"


def view_dataset_url(view_url: str, dataset: str) -> str:
    """The dataset's page in the quality view (`serve`'s root, or `lineage-quality view`), the
    dataset as the facets key it (`namespace:name`), URI-encoded whole."""
    return f"{view_url.rstrip('/')}/datasets/{urllib.parse.quote(dataset, safe='')}"


def split_dataset(dataset: str) -> tuple[str, str]:
    """(namespace, name) of a dataset as the facets key it (`namespace:name`; a namespace may
    be a URI, `s3://bucket:raw`)."""
    start = dataset.index("://") + 3 if "://" in dataset else 0
    cut = dataset.find(":", start)
    return (dataset[:cut], dataset[cut + 1 :]) if cut >= 0 else ("", dataset)

