"""bayesjudge: Bayesian models that turn noisy LLM-as-a-judge outputs into
calibrated evaluation results (PyMC + ArviZ)."""

from bayesjudge.base import BayesianModel, NotFittedError, load, registered_models
from bayesjudge.comparison import compare
from bayesjudge.constants import CI_PROB, __version__
from bayesjudge.data import DataValidationError
from bayesjudge.models.davidson import DavidsonAggregator
from bayesjudge.models.misclassification import MisclassificationModel
from bayesjudge.models.misclassification_allocation import bayesian_allocation
from bayesjudge.models.misclassification_hierarchical import HierarchicalMisclassificationModel
from bayesjudge.priors import Prior

__all__ = [
    "CI_PROB",
    "BayesianModel",
    "DataValidationError",
    "DavidsonAggregator",
    "HierarchicalMisclassificationModel",
    "MisclassificationModel",
    "NotFittedError",
    "Prior",
    "__version__",
    "bayesian_allocation",
    "compare",
    "load",
    "registered_models",
]
