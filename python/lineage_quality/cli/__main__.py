"""`python -m lineage_quality.cli ...`: the same as `lineage-quality ...`."""

from lineage_quality.cli.main import main

raise SystemExit(main())
