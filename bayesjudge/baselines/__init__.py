"""Non-Bayesian baselines the models are compared against.

* :mod:`~bayesjudge.baselines.votes` -- vote aggregation (SC, rounded median,
  Soft-SC, CI-SC; Dadkhahi et al. 2025, arXiv:2512.03019).
"""

from bayesjudge.baselines.votes import (
    ci_self_consistency,
    majority_vote,
    rounded_median,
    soft_self_consistency,
)

__all__ = [
    "ci_self_consistency",
    "majority_vote",
    "rounded_median",
    "soft_self_consistency",
]
