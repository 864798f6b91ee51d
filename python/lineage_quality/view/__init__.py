"""The quality view (issue 53): pages and a JSON API over the lineage and history stores,
served by `serve` at the root of its port and by `lineage-quality view` (docs/view.md).

    data.py    what is shown, read from the stores as JSON-ready dicts (bounded reads)
    pages.py   the HTML pages, rendered on the server, every text inert
    routes.py  the routes, for the receiver's route table; the security headers
    open.py    the stores of a `--history` PATH|URL, opened read-only
"""
