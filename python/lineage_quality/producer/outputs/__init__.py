"""The producer's outputs besides the lineage event itself: result sinks (DataHub assertions) and
alert senders (webhooks), made from `Settings.outputs` by `type`, the same for `serve` and the
in-driver `attach` (docs/producer.md, "Outputs"; the recipe: docs/architecture.md).

    kind.py        OutputType: what one kind declares (type, options, durability, build)
    registry.py    the one list of kinds, one line each; `register`, `output_type`
    factory.py     build_outputs(settings, bindings) -> Outputs (result sinks, alert sender)
    datahub_rest.py, datahub_file.py, webhook.py, slack.py   one module per kind

Empty on purpose: `settings.py` is read by every kind, so this package imports nothing at its
top (`from lineage_quality.producer.outputs.factory import build_outputs`).
"""
