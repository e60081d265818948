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
        table = fit.summarize()
        fit.ranking(), fit.judges()
    # sigma = 1 is a constant of the one-judge model: not listed as an estimate (it
    # used to show [1, 1] with an R-hat of NaN); the posterior still holds it
    assert not table.index.str.startswith("discriminator").any()
    assert np.isfinite(table["r_hat"]).all()
    assert np.all(fit.idata_.posterior["discriminator"].values == 1.0)
    assert np.isfinite(fit.diagnostics_["max_rhat"])


def _ar1(rng, shape, phi):
    """AR(1) draws (P, C, D), one coefficient per parameter."""
    noise = rng.normal(size=shape)
    x = np.empty(shape)
    x[..., 0] = noise[..., 0]
    for t in range(1, shape[2]):
        x[..., t] = phi[:, None] * x[..., t - 1] + noise[..., t]
    return x


def _arviz(x):
    import arviz as az

    data = xr.Dataset({"v": (("chain", "draw", "k"), np.moveaxis(x, 0, -1))})
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return (az.rhat(data)["v"].values, az.ess(data, method="bulk")["v"].values)


@pytest.mark.parametrize("chains,draws", [(4, 1000), (2, 301), (3, 5), (4, 4), (2, 7)])
def test_vectorised_rank_rhat_and_bulk_ess_equal_arviz(chains, draws):
    from bayesjudge.engine.batch_diagnostics import rank_rhat_ess_bulk

    rng = np.random.default_rng(draws)
    phi = np.linspace(-0.9, 0.995, 30)  # anticorrelated to nearly stuck: every Geyer cut
    x = _ar1(rng, (30, chains, draws), phi)
    x[:4] = np.round(x[:4])  # tied draws: average ranks
    x[4] += np.arange(chains)[:, None] * 2.0  # chains that disagree: R-hat >> 1
    x[5] = 0.25  # constant: R-hat NaN, ESS = number of draws (ArviZ's conventions)
    rhat_az, ess_az = _arviz(x)
    rhat, ess = rank_rhat_ess_bulk(x)
    np.testing.assert_array_equal(np.isnan(rhat), np.isnan(rhat_az))
    np.testing.assert_allclose(rhat, rhat_az, rtol=1e-12, equal_nan=True)
    np.testing.assert_allclose(ess, ess_az, rtol=1e-10, equal_nan=True)


def test_check_convergence_reports_arviz_values_in_blocks(monkeypatch):
    import bayesjudge.engine.batch_diagnostics as rd

    monkeypatch.setattr(rd, "BLOCK", 3 * 4 * 500)  # three parameters per block
    rng = np.random.default_rng(5)
    skill = np.moveaxis(_ar1(rng, (10, 4, 500), np.linspace(0, 0.97, 10)), 0, -1)
    tree = _tree(skill=skill.reshape(4, 500, 2, 5))  # a 2-d variable, C order
    with pytest.warns(ConvergenceWarning, match="ESS"):  # phi 0.97: ESS ~ 16, as ArviZ
        out = check_convergence(tree, ["skill"])
    rhat_az, ess_az = _arviz(np.moveaxis(skill, -1, 0))
    assert out["max_rhat"] == pytest.approx(rhat_az.max(), rel=1e-12)
    assert out["min_ess_bulk"] == pytest.approx(ess_az.min(), rel=1e-10)
    # one chain: R-hat undefined, ArviZ's own path (NaN -> a warning, never a pass)
    single = xr.DataTree.from_dict({
        "posterior": xr.Dataset({"skill": (("chain", "draw", "k"), skill[:1])}),
        "sample_stats": xr.Dataset({"diverging": (("chain", "draw"), np.zeros((1, 500)))})})
    with pytest.warns(ConvergenceWarning, match="undefined"):
        assert np.isnan(check_convergence(single, ["skill"])["max_rhat"])


def test_summary_table_equals_arviz_summary():
    import arviz as az

    from bayesjudge.engine.diagnostics import summary_table

    rng = np.random.default_rng(7)
    scale = _ar1(rng, (1, 4, 600), np.array([0.6]))[0]
    skill = _ar1(rng, (6, 4, 600), np.linspace(-0.5, 0.95, 6))
    skill[2] = 1.5  # constant by construction: r_hat and mcse_sd NaN, as ArviZ
    skill[3] = np.round(skill[3])  # ties
    # a 2-d variable stored with a non-sample dimension first: rows follow ArviZ's order
    skill = skill.reshape(2, 3, 4, 600).transpose(0, 2, 3, 1)
    post = xr.Dataset({"scale": (("chain", "draw"), scale),
                       "skill": (("group", "chain", "draw", "item"), skill)},
                      coords={"group": ["g1", "g2"], "item": ["a", "b", "c"]})
    names = ["skill", "scale"]
    ours = summary_table(post, names, 0.9, diagnostics=True)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = az.summary(post, var_names=names, ci_prob=0.9, ci_kind="eti", kind="all",
                            round_to="none")
    assert list(ours.index) == list(theirs.index)
    assert list(ours.columns) == list(theirs.columns)
    np.testing.assert_allclose(ours.to_numpy(float), theirs.to_numpy(float), rtol=1e-9,
                               atol=1e-12, equal_nan=True)
    # a non-finite draw: ArviZ's own summary, unchanged
    post["scale"][0, 0] = np.nan
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fallback = summary_table(post, names, 0.9, diagnostics=True)
        direct = az.summary(post, var_names=names, ci_prob=0.9, ci_kind="eti", kind="all",
                            round_to="none")
    pd.testing.assert_frame_equal(fallback, direct)


@pytest.mark.parametrize("chains,draws", [(4, 1000), (1, 10), (1, 5), (2, 4), (4, 3)])
def test_vectorised_mcse_of_a_share_equals_arviz(chains, draws):
    """P(best)'s Monte Carlo error (``ranking()``'s ``p_best_mcse``): indicators, constant
    ones (0) and chains too short for ArviZ (NaN, as ArviZ)."""
    import arviz as az

    from bayesjudge.engine.batch_diagnostics import mcse_mean

    rng = np.random.default_rng(draws)
    x = (_ar1(rng, (6, chains, draws), np.linspace(0, 0.9, 6)) > 0.3).astype(float)
    x[0] = 1.0  # every draw agrees
    data = xr.Dataset({"v": (("chain", "draw", "k"), np.moveaxis(x, 0, -1))})
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        want = az.mcse(data, method="mean")["v"].values
    np.testing.assert_allclose(mcse_mean(x), want, rtol=1e-10, atol=1e-15, equal_nan=True)
