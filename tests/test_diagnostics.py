"""NUTS diagnostics: values constant by construction never warn; a stuck chain does."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from bayesjudge import DavidsonBT
from bayesjudge.engine import ConvergenceWarning
from bayesjudge.engine.diagnostics import check_convergence


def _tree(**values) -> xr.DataTree:
    post = xr.Dataset({k: (("chain", "draw", *(f"{k}_{i}" for i in range(v.ndim - 2))), v)
                       for k, v in values.items()})
    stats = xr.Dataset({"diverging": (("chain", "draw"), np.zeros((4, 500), bool))})
    return xr.DataTree.from_dict({"posterior": post, "sample_stats": stats})


def _mixed(seed=0):
    return np.random.default_rng(seed).normal(size=(4, 500, 3))


def test_a_value_constant_by_construction_is_left_out():
    fixed = np.ones((4, 500, 2))
    fixed[..., 1] = np.random.default_rng(1).normal(size=(4, 500))  # one constant element
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        warnings.simplefilter("error", RuntimeWarning)  # no raw numpy 0/0 warning either
        out = check_convergence(_tree(skill=_mixed(), discriminator=fixed),
                                ["skill", "discriminator"])
    assert np.isfinite(out["max_rhat"]) and out["max_rhat"] < 1.01
    assert out["min_ess_bulk"] > 400


@pytest.mark.parametrize("stuck", ["one chain", "every chain at its own value", "nan"])
def test_a_stuck_chain_still_warns(stuck):
    x = _mixed()
    if stuck == "one chain":
        x[2, :, 0] = 0.3  # moving chains elsewhere: R-hat large
    elif stuck == "every chain at its own value":
        x[:, :, 0] = np.array([-1.0, -0.5, 0.5, 1.0])[:, None]
    else:
        x[:, :, 0] = np.nan
    with pytest.warns(ConvergenceWarning, match="NUTS diagnostics"):
        check_convergence(_tree(skill=x), ["skill"])


def test_one_judge_with_discriminators_under_nuts_gives_no_warning():
    skill = {"a": 1.0, "b": 0.3, "c": -0.2, "d": -1.1}
    rows = [("j", a, b, round(1 / (1 + np.exp(skill[b] - skill[a])), 3))
            for a in skill for b in skill if a != b]
    comps = pd.DataFrame(rows, columns=["judge", "left", "right", "prob"])
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        warnings.simplefilter("error", RuntimeWarning)
        fit = DavidsonBT(discriminators=True, random_seed=0).fit(
            comps, method="nuts", draws=1000, tune=1000, chains=2)
        table = fit.summarize()  # its R-hat is undefined (NaN), without a numpy warning
        fit.ranking(), fit.judges()
    assert np.isnan(table.loc["discriminator[j]", "r_hat"])
    assert np.all(fit.idata_.posterior["discriminator"].values == 1.0)
    assert np.isfinite(fit.diagnostics_["max_rhat"])
