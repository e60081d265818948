"""bayesjudge: Bayesian models that turn noisy LLM-as-a-judge outputs into
calibrated evaluation results (PyMC + ArviZ)."""

__version__ = "0.1.0"

from bayesjudge.base import CI_PROB, BayesianModel, NotFittedError, compare, load  # noqa: E402
from bayesjudge.data import DataValidationError  # noqa: E402
from bayesjudge.models.davidson import DavidsonAggregator  # noqa: E402
from bayesjudge.priors import Prior  # noqa: E402

__all__ = [
    "CI_PROB",
    "BayesianModel",
    "DataValidationError",
    "DavidsonAggregator",
    "NotFittedError",
    "Prior",
    "compare",
    "load",
]
