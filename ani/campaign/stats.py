"""Moved to :mod:`ani.stats` (interval estimates, McNemar, Holm): pure arithmetic that
NetConfBench's per-cell scores use too, below both (docs/architecture.md, "Layers").
``ani.campaign.stats`` is the same module object, so code written against it is unchanged."""

import sys

from ani import stats

sys.modules[__name__] = stats
