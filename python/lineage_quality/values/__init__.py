"""The ground floor: plain values every layer speaks of, importing nothing of the package.

- `refs.py`: `DatasetRef`, which dataset of an event a verdict is about, and a dataset's
  catalog tables (its `symlinks` facet);
- `metric.py`: `Metric`, one aggregate of the fused scan as the plan asks for it;
- `datahub_shape.py`: a rule's DataHub assertion shape as plain values (no SDK).
"""
