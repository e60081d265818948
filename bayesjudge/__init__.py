"""bayesjudge: Bayesian models that turn noisy LLM-as-a-judge outputs into
calibrated evaluation results (PyMC + ArviZ)."""

__version__ = "0.1.0"

from bayesjudge.base import CI_PROB, BayesianModel, NotFittedError, compare, load  # noqa: E402
from bayesjudge.data import DataValidationError  # noqa: E402
from bayesjudge.models.davidson import DavidsonAggregator  # noqa: E402
from bayesjudge.models.misclassification import (  # noqa: E402
    MisclassificationModel,
    bayesian_allocation,
)
from bayesjudge.models.misclassification_hierarchical import (  # noqa: E402
    HierarchicalMisclassificationModel,
)
from bayesjudge.priors import Prior  # noqa: E402

__all__ = [
    "CI_PROB",
    "BayesianModel",
    "DataValidationError",
    "DavidsonAggregator",
    "HierarchicalMisclassificationModel",
    "MisclassificationModel",
    "NotFittedError",
    "Prior",
    "bayesian_allocation",
    "compare",
    "load",
]
