"""Bias-corrected judge accuracy: misclassification-adjusted win rates.

Lee, Zeng, Jeong, Sohn & Lee (2025), "How to Correctly Report LLM-as-a-Judge
Evaluations", arXiv:2511.21140. Modules: ``posterior`` (conjugate closed forms),
``starts`` (optimiser starting points), ``model`` (:class:`MisclassificationModel`),
``hierarchical`` (:class:`HierarchicalMisclassificationModel`), ``allocation``
(:func:`bayesian_allocation` of the calibration budget). Model card:
``models/misclassification.md``.
"""

from bayesjudge.models.misclassification.allocation import (
    BayesianAllocation,
    bayesian_allocation,
)
from bayesjudge.models.misclassification.hierarchical import HierarchicalMisclassificationModel
from bayesjudge.models.misclassification.model import (
    IdentifiabilityWarning,
    MisclassificationModel,
)

__all__ = ["BayesianAllocation", "HierarchicalMisclassificationModel", "IdentifiabilityWarning",
           "MisclassificationModel", "bayesian_allocation"]
