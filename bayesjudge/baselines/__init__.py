"""Non-Bayesian baselines the models are compared against.

* :mod:`~bayesjudge.baselines.votes` -- vote aggregation (SC, rounded median,
  Soft-SC, CI-SC; Dadkhahi et al. 2025, arXiv:2512.03019).
* :mod:`~bayesjudge.baselines.calibration` -- post-hoc correctors of a probabilistic
  judge: contextual and batch calibration (Li, Li, Huang et al. 2025, arXiv:2510.00263).
* :mod:`~bayesjudge.baselines.graded` -- graded verdicts: Arena-Hard-Auto's weighted
  win rate and a linear reward score (beside ``OrdinalBT``).
* :mod:`~bayesjudge.baselines.prediction_powered` -- prediction-powered rank-sets from a
  few human votes and an LLM judge's verdicts (Chatzi et al. 2024, arXiv:2402.17826).
"""

from bayesjudge.baselines.calibration import BatchCalibration, ContextualCalibration
from bayesjudge.baselines.graded import arena_hard_score, linear_reward_score
from bayesjudge.baselines.prediction_powered import prediction_powered_ranksets
from bayesjudge.baselines.ranking import (
    avg_prob,
    ece_temperature,
    human_preferences,
    temperature_calibrate,
    temperature_scale,
)
from bayesjudge.baselines.votes import (
    ci_self_consistency,
    majority_vote,
    rounded_median,
    soft_self_consistency,
)

__all__ = [
    "BatchCalibration",
    "ContextualCalibration",
    "ci_self_consistency",
    "majority_vote",
    "prediction_powered_ranksets",
    "rounded_median",
    "soft_self_consistency",
    "avg_prob",
    "ece_temperature",
    "human_preferences",
    "temperature_calibrate",
    "temperature_scale",
    "arena_hard_score",
    "linear_reward_score",
]
