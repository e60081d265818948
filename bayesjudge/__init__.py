"""bayesjudge: Bayesian models that turn noisy LLM-as-a-judge outputs into
calibrated evaluation results (PyMC + ArviZ)."""

from bayesjudge import metrics, rewards  # noqa: F401  (subpackages as attributes)
from bayesjudge.base import BayesianModel, NotFittedError, load, registered_models
from bayesjudge.comparison import compare
from bayesjudge.constants import CI_PROB, __version__
from bayesjudge.data import DataValidationError
from bayesjudge.data.symmetrization import symmetrize
from bayesjudge.models.anchored import AnchoredBT
from bayesjudge.models.bradley_terry import BradleyTerry, BTSigma, DavidsonBT, OrdinalBT
from bayesjudge.models.davidson import DavidsonAggregator
from bayesjudge.models.misclassification import (
    HierarchicalMisclassificationModel,
    MisclassificationModel,
    bayesian_allocation,
)
from bayesjudge.models.preference import (
    PreferenceDistribution,
    TemperatureScaling,
    alignment_error,
)
from bayesjudge.priors import Prior

__all__ = [
    "AnchoredBT",
    "CI_PROB",
    "BTSigma",
    "BayesianModel",
    "BradleyTerry",
    "DataValidationError",
    "DavidsonAggregator",
    "DavidsonBT",
    "HierarchicalMisclassificationModel",
    "MisclassificationModel",
    "NotFittedError",
    "OrdinalBT",
    "PreferenceDistribution",
    "Prior",
    "TemperatureScaling",
    "__version__",
    "alignment_error",
    "bayesian_allocation",
    "compare",
    "load",
    "registered_models",
    "symmetrize",
]
