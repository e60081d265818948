"""bayesjudge: Bayesian models that turn noisy LLM-as-a-judge outputs into
calibrated evaluation results (PyMC + ArviZ)."""

from typing import TYPE_CHECKING

from bayesjudge.constants import CI_PROB, __version__
from bayesjudge.lazy import lazy_exports

#: Every public name and the module that defines it, imported on first use
#: (:mod:`bayesjudge.lazy`): ``import bayesjudge`` stays light (no PyMC) until a model,
#: an estimator or a table is used, so the command line checks its arguments at once.
_EXPORTS = {
    "metrics": "bayesjudge.metrics", "rewards": "bayesjudge.rewards",
    "BayesianModel": "bayesjudge.base", "NotFittedError": "bayesjudge.base",
    "load": "bayesjudge.base", "registered_models": "bayesjudge.base",
    "compare": "bayesjudge.comparison",
    "DataValidationError": "bayesjudge.data",
    "symmetrize": "bayesjudge.data.symmetrization",
    "AnchoredBT": "bayesjudge.models.anchored",
    "BradleyTerry": "bayesjudge.models.bradley_terry", "BTSigma": "bayesjudge.models.bradley_terry",
    "DavidsonBT": "bayesjudge.models.bradley_terry", "OrdinalBT": "bayesjudge.models.bradley_terry",
    "DavidsonAggregator": "bayesjudge.models.davidson",
    "HierarchicalMisclassificationModel": "bayesjudge.models.misclassification",
    "MisclassificationModel": "bayesjudge.models.misclassification",
    "bayesian_allocation": "bayesjudge.models.misclassification",
    "PreferenceDistribution": "bayesjudge.models.preference",
    "TemperatureScaling": "bayesjudge.models.preference",
    "alignment_error": "bayesjudge.models.preference",
    "Prior": "bayesjudge.priors",
}
__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)

if TYPE_CHECKING:  # the same names for type checkers and IDEs (tests/test_lazy_imports.py)
    from bayesjudge import metrics, rewards  # noqa: F401  (subpackages as attributes)
    from bayesjudge.base import BayesianModel, NotFittedError, load, registered_models
    from bayesjudge.comparison import compare
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
