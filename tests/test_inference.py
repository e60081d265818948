"""The compile-once engine: PyMC's sampler as fallback, MAP semantics, warnings."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import fit_quietly

from bayesjudge import DavidsonAggregator, MisclassificationModel
from bayesjudge.engine import ConvergenceWarning


def test_pymc_sampler_fallback_agrees_with_nutpie(davidson_data, davidson_nuts):
    model = fit_quietly(DavidsonAggregator(random_seed=1), *davidson_data, method="nuts",
                        sampler="pymc", chains=2, draws=300, tune=300)
    expected = {"posterior", "log_likelihood", "observed_data", "sample_stats"}
    assert expected <= set(model.idata_.children)
    for name in ("margin_scale", "tie_logit"):
        a = model.idata_["posterior"][name].values
        b = davidson_nuts.idata_["posterior"][name].values
        # Two independent samplers of one posterior: means agree within MC error.
        mc_error = np.hypot(a.std() / np.sqrt(150), b.std() / np.sqrt(150))
        assert abs(a.mean() - b.mean()) < 4 * mc_error


def test_map_is_constrained_mode_laplace_uses_jacobian():
    # Beta(1, 1) priors: the MAP (no Jacobian) is the MLE q = tn/m0, q = tp/m1 exactly,
    # while the Laplace centre (unconstrained mode, Jacobian included) is pulled inside.
    model = MisclassificationModel().fit_counts(600, 1000, 90, 100, 80, 100)
    assert float(model.map_["specificity"]) == pytest.approx(0.80, abs=1e-7)
    assert float(model.map_["sensitivity"]) == pytest.approx(0.90, abs=1e-7)
    model.idata_  # builds the Laplace approximation
    fit, engine = model._map_result, model._engine
    # Laplace centre: a stationary point of the unconstrained density (with Jacobian),
    # not of the constrained one; the MAP is the reverse.
    assert np.max(np.abs(engine.logp_dlogp(fit.laplace_x, jacobian=True)[1])) < 1e-4
    assert np.max(np.abs(engine.logp_dlogp(fit.x, jacobian=False)[1])) < 1e-4
    assert np.max(np.abs(engine.logp_dlogp(fit.x, jacobian=True)[1])) > 0.1
    # q(1 - q) Jacobian pulls the logit-scale centre toward 1/2
    centre = engine.constrain(fit.laplace_x)
    assert float(centre["sensitivity"]) < 0.90 and float(centre["specificity"]) < 0.80


def test_sampler_kwargs_reach_nutpie(davidson_data):
    with pytest.raises(Exception, match="no_such_setting"):
        DavidsonAggregator().fit(*davidson_data, method="nuts", chains=2, draws=20, tune=50,
                                 sampler_kwargs={"no_such_setting": 1})


def test_warnings_point_at_the_callers_line():
    # separable labels under a flat prior: the MLE runs off to infinity
    import pandas as pd

    votes = pd.DataFrame({"item": range(6), "n_pos": [3, 0, 0, 3, 0, 0],
                          "n_tie": [0, 3, 0, 0, 3, 0], "n_neg": [0, 0, 3, 0, 0, 3]})
    labels = pd.DataFrame({"item": range(6), "label": [1, 0, -1, 1, 0, -1]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        DavidsonAggregator(priors="flat").fit(votes, labels)
    ours = [w for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert ours and all(w.filename == __file__ for w in ours)
