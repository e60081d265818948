"""bayesjudge: Bayesian models that turn noisy LLM-as-a-judge outputs into
calibrated evaluation results (PyMC + ArviZ)."""

from bayesjudge import metrics, rewards  # noqa: F401  (subpackages as attributes)
from bayesjudge.base import BayesianModel, NotFittedError, load, registered_models
from bayesjudge.comparison import compare
from bayesjudge.constants import CI_PROB, __version__
from bayesjudge.data import DataValidationError
from bayesjudge.data.symmetrization import symmetrize
from bayesjudge.models.bradley_terry.bt_sigma import BradleyTerry, BTSigma
from bayesjudge.models.bradley_terry.davidson_bt import DavidsonBT
from bayesjudge.models.davidson.aggregator import DavidsonAggregator
from bayesjudge.models.misclassification.allocation import bayesian_allocation
from bayesjudge.models.misclassification.hierarchical import HierarchicalMisclassificationModel
from bayesjudge.models.misclassification.model import MisclassificationModel
from bayesjudge.models.preference.alignment import alignment_error
from bayesjudge.models.preference.model import PreferenceDistribution, TemperatureScaling
from bayesjudge.priors import Prior

__all__ = [
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
