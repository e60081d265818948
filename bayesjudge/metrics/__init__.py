"""Meta-evaluation metrics: pure, vectorised functions.

* :mod:`~bayesjudge.metrics.votes` -- MAE and pairwise accuracy on ordinal labels
  (Dadkhahi et al. 2025, arXiv:2512.03019).
"""

from bayesjudge.metrics.votes import mae, pairwise_accuracy

__all__ = ["mae", "pairwise_accuracy"]
