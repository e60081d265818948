"""Vote aggregation with ties: the Davidson aggregator of a judge's sampled verdicts.

Dadkhahi, Trabelsi, Riley, Juraska, Mirzazadeh et al. (2025), "Distribution-Calibrated
Inference Time Compute for Thinking LLM-as-a-Judge", arXiv:2512.03019.
Model card: ``models/davidson.md``.
"""

from bayesjudge.models.davidson.aggregator import DavidsonAggregator

__all__ = ["DavidsonAggregator"]
