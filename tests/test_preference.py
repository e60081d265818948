"""PreferenceDistribution and alignment_error against independent scipy / numpy references."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, stats
from stochastic import FALSE_ALARM, coverage_consistent

from bayesjudge import DataValidationError, Prior
from bayesjudge.datasets.simulate_autorater import simulate_autorater
from bayesjudge.engine import ConvergenceWarning
from bayesjudge.models.preference.alignment import alignment_error
from bayesjudge.models.preference.model import PreferenceDistribution
from bayesjudge.models.preference.posterior import (
    beta_mixture_quantiles,
    dirichlet_multinomial_logpmf,
)

NUTS = {"method": "nuts", "chains": 2, "draws": 300, "tune": 300}


@pytest.fixture(scope="module")
def sim():
    return simulate_autorater(300, (1, 4), population_mean=0.6, concentration=3.0,
                              temperature=2.0, random_seed=11)


@pytest.fixture(scope="module")
def sim_ties():
    return simulate_autorater(200, 3, population_mean=0.5, concentration=5.0, tie_mean=0.25,
                              random_seed=12)


@pytest.fixture(scope="module")
def map_fit(sim):
    return PreferenceDistribution().fit(sim.annotations)


@pytest.fixture(scope="module")
def nuts_fit(sim):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return PreferenceDistribution(random_seed=5).fit(sim.annotations, **NUTS)


# ------------------------------------------------------------------ flat = p-hat
def test_flat_map_is_p_hat_with_conjugate_uniform_intervals(sim):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the boundary MLEs must not warn
        model = PreferenceDistribution(priors="flat").fit(sim.annotations)
        pred = model.predict(ci_prob=0.9)
    # exactly k / m: a unanimous item's MLE is 0 (before: the optimiser's start, 1e-12)
    np.testing.assert_array_equal(pred["p_b"], pred["k_b"] / pred["m"])
    assert pred["p_b"].eq(0).any() and pred["p_b"].eq(1).any()
    assert set(np.asarray(model.map_["item_preference"])) == set(pred["p_b"])
    np.testing.assert_allclose(pred["p_hat"], pred["k_b"] / pred["m"])
    a, b = 1 + pred["k_b"], 1 + pred["k_a"]
    np.testing.assert_allclose(pred["p_b_lower"], stats.beta.ppf(0.05, a, b), atol=1e-12)
    np.testing.assert_allclose(pred["p_b_upper"], stats.beta.ppf(0.95, a, b), atol=1e-12)


def test_flat_with_ties_gives_k_over_m_per_outcome(sim_ties):
    pred = PreferenceDistribution(priors="flat").fit(sim_ties.annotations).predict()
    assert sim_ties.annotations["label"].eq("tie").any()
    np.testing.assert_array_equal(pred["p_b"], pred["k_b"] / pred["m"])
    np.testing.assert_array_equal(pred["p_tie"], pred["k_tie"] / pred["m"])
    # component j of Dirichlet(1 + k) is Beta(1 + k_j, 2 + m - k_j)
    lo = stats.beta.ppf(0.025, 1 + pred["k_tie"], 2 + pred["m"] - pred["k_tie"])
    np.testing.assert_allclose(pred["p_tie_lower"], lo, atol=1e-12)


# ------------------------------------------------------------------ likelihood
def test_beta_binomial_marginal_matches_scipy():
    k = np.array([[3, 0], [1, 2], [0, 5], [2, 2]])  # (k_A, k_B)
    mu, kappa = 0.3, 4.5
    alpha = np.array([(1 - mu) * kappa, mu * kappa])
    ours = dirichlet_multinomial_logpmf(k, alpha)
    ref = stats.betabinom.logpmf(k[:, 1], k.sum(1), mu * kappa, (1 - mu) * kappa)
    np.testing.assert_allclose(ours, ref, rtol=1e-12)


def test_dirichlet_multinomial_matches_scipy():
    k = np.array([[1, 1, 1], [0, 3, 0], [2, 0, 4]])
    alpha = np.array([0.7, 1.3, 2.1])
    ref = [stats.dirichlet_multinomial.logpmf(row, alpha, row.sum()) for row in k]
    np.testing.assert_allclose(dirichlet_multinomial_logpmf(k, alpha), ref, rtol=1e-12)


def test_map_with_uniform_hyperpriors_is_the_marginal_mle(sim):
    """The compiled graph's MAP equals a scipy maximisation of sum betabinom.logpmf."""
    priors = {"population_mean": Prior("Uniform", lower=0, upper=1),
              "concentration": Prior("HalfFlat")}
    fit = PreferenceDistribution(priors=priors).fit(sim.annotations)
    counts = fit.annotation_counts().counts

    def nll(theta):
        mu, kappa = 1 / (1 + np.exp(-theta[0])), np.exp(theta[1])
        return -stats.betabinom.logpmf(counts[:, 2], counts[:, [0, 2]].sum(1),
                                       mu * kappa, (1 - mu) * kappa).sum()

    ref = optimize.minimize(nll, [0.0, 1.0], method="Nelder-Mead",
                            options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 5000})
    np.testing.assert_allclose(fit.map_["population_mean"], 1 / (1 + np.exp(-ref.x[0])),
                               rtol=1e-5)
    np.testing.assert_allclose(fit.map_["concentration"], np.exp(ref.x[1]), rtol=1e-4)
    # pointwise log-likelihood (per item) sums to the same marginal log-likelihood
    ll = fit.idata_["log_likelihood"]["preference"].values
    assert ll.shape[-1] == len(counts)


def test_ties_map_with_uniform_hyperpriors_is_the_dirichlet_multinomial_mle():
    """With ties (and mu != 1/2, so swapping A and B would show) the graph's MAP equals a
    scipy maximisation of sum dirichlet_multinomial.logpmf with alpha = kappa ((1 - tau)
    (1 - mu), tau, (1 - tau) mu), and the pointwise log-likelihood is scipy's there."""
    sim = simulate_autorater(250, (2, 5), population_mean=0.7, concentration=4.0,
                             tie_mean=0.2, random_seed=13)
    priors = {"population_mean": Prior("Uniform", lower=0, upper=1),
              "tie_mean": Prior("Uniform", lower=0, upper=1),
              "concentration": Prior("HalfFlat")}
    fit = PreferenceDistribution(priors=priors).fit(sim.annotations)
    counts = fit.annotation_counts().counts  # (A, tie, B) per item

    def alpha(theta):
        mu, tau, kappa = 1 / (1 + np.exp(-theta[0])), 1 / (1 + np.exp(-theta[1])), \
            np.exp(theta[2])
        return kappa * np.array([(1 - tau) * (1 - mu), tau, (1 - tau) * mu])

    def nll(theta):
        a = alpha(theta)
        return -sum(stats.dirichlet_multinomial.logpmf(row, a, row.sum()) for row in counts)

    ref = optimize.minimize(nll, [0.0, -1.0, 1.0], method="Nelder-Mead",
                            options={"xatol": 1e-9, "fatol": 1e-11, "maxiter": 5000})
    mu, tau = 1 / (1 + np.exp(-ref.x[:2]))
    assert mu > 0.6  # the data's B side: a swap of A and B would give 1 - mu
    np.testing.assert_allclose(fit.map_["population_mean"], mu, rtol=1e-5)
    np.testing.assert_allclose(fit.map_["tie_mean"], tau, rtol=1e-5)
    np.testing.assert_allclose(fit.map_["concentration"], np.exp(ref.x[2]), rtol=1e-4)
    a = alpha(ref.x)
    ours = fit._pointwise_loglik({k: np.asarray(v)[None, None] for k, v in fit.map_.items()},
                                 fit._fit_data)["preference"][0, 0]
    scipy_ll = [stats.dirichlet_multinomial.logpmf(row, a, row.sum()) for row in counts]
    np.testing.assert_allclose(ours, scipy_ll, rtol=1e-4)


def test_pointwise_loglik_matches_scipy_at_the_map(map_fit):
    counts = map_fit.annotation_counts().counts
    mu, kappa = float(map_fit.map_["population_mean"]), float(map_fit.map_["concentration"])
    ref = stats.betabinom.logpmf(counts[:, 2], counts.sum(1), mu * kappa, (1 - mu) * kappa)
    ours = map_fit._pointwise_loglik({k: np.asarray(v)[None, None] for k, v in
                                      map_fit.map_.items()}, map_fit._fit_data)["preference"]
    np.testing.assert_allclose(ours[0, 0], ref, rtol=1e-10)


# ------------------------------------------------------------------ conjugate posterior
def test_item_posterior_is_the_conjugate_beta_at_the_map(map_fit):
    pred = map_fit.predict(ci_prob=0.8)
    mu, kappa = float(map_fit.map_["population_mean"]), float(map_fit.map_["concentration"])
    a, b = mu * kappa + pred["k_b"], (1 - mu) * kappa + pred["k_a"]
    np.testing.assert_allclose(pred["p_b"], a / (a + b), rtol=1e-12)
    np.testing.assert_allclose(pred["p_b_lower"], stats.beta.ppf(0.1, a, b), rtol=1e-10)
    np.testing.assert_allclose(pred["p_b_upper"], stats.beta.ppf(0.9, a, b), rtol=1e-10)
    # one annotator borrows strength: shrunk toward mu by kappa / (kappa + 1)
    one = pred[pred["m"] == 1].iloc[0]
    assert abs(one["p_b"] - (mu * kappa + one["k_b"]) / (kappa + 1)) < 1e-12
    assert one["p_b_upper"] - one["p_b_lower"] < 0.95


def test_beta_mixture_quantiles_match_a_brute_force_root():
    a = np.array([[2.0, 5.0, 0.7], [1.0, 1.0, 3.0]])
    b = np.array([[3.0, 1.5, 0.4], [9.0, 2.0, 3.0]])
    q = beta_mixture_quantiles(a, b, (0.025, 0.5, 0.975))
    for row in range(2):
        for j, p in enumerate((0.025, 0.5, 0.975)):
            ref = optimize.brentq(lambda x: stats.beta.cdf(x, a[row], b[row]).mean() - p,
                                  0, 1, xtol=1e-13)
            assert abs(q[j, row] - ref) < 1e-8


def test_nuts_predictions_mix_the_conditional_posterior_over_draws(nuts_fit):
    pred = nuts_fit.predict()
    post = nuts_fit.idata_["posterior"].to_dataset()
    mu = post["population_mean"].values.ravel()
    kappa = post["concentration"].values.ravel()
    row = pred.iloc[3]
    a = mu * kappa + row["k_b"]
    b = (1 - mu) * kappa + row["k_a"]
    assert abs(row["p_b"] - np.mean(a / (a + b))) < 1e-12
    # Monte Carlo check of the mixture interval: one p* per hyperparameter draw, many times
    rng = np.random.default_rng(0)
    draws = rng.beta(np.repeat(a, 200), np.repeat(b, 200))
    lo, hi = np.quantile(draws, [0.025, 0.975])
    assert abs(row["p_b_lower"] - lo) < 0.01 and abs(row["p_b_upper"] - hi) < 0.01


# ------------------------------------------------------------------ predict
def test_predict_items_subset_order_and_unknown_ids(map_fit, sim):
    items = sim.annotations["item"].unique()
    pred = map_fit.predict([items[5], items[2]])
    assert pred["item"].tolist() == [items[5], items[2]]
    full = map_fit.predict().set_index("item")
    pd.testing.assert_frame_equal(pred.set_index("item"), full.loc[[items[5], items[2]]])
    with pytest.raises(DataValidationError, match="not in the fitted"):
        map_fit.predict(["no-such-item"])


def test_ties_option(sim_ties):
    with pytest.raises(DataValidationError, match="without ties"):
        PreferenceDistribution(ties=False).fit(sim_ties.annotations)
    auto = PreferenceDistribution().fit(sim_ties.annotations)
    assert "tie_mean" in auto.summarize().index
    assert abs(float(auto.map_["tie_mean"]) - 0.25) < 0.08
    pred = auto.predict()
    assert (pred["p_b"] + pred["p_tie"] < 1).all()
    with pytest.raises(ValueError, match="ties must be"):
        PreferenceDistribution(ties="yes").fit(sim_ties.annotations)


# ------------------------------------------------------------------ alignment error
def test_alignment_error_against_a_hand_computation(map_fit, sim):
    out = sim.outputs
    res = alignment_error(out, map_fit, ci_prob=0.9)
    pred = map_fit.predict(out)  # same items, input order
    # MAP fits mix over the Laplace draws of (mu, kappa) stored in idata_
    post = map_fit.idata_["posterior"].to_dataset()
    mu = post["population_mean"].values.ravel()[:, None]
    kappa = post["concentration"].values.ravel()[:, None]
    a = mu * kappa + pred["k_b"].to_numpy()  # (draws, items)
    b = (1 - mu) * kappa + pred["k_a"].to_numpy()
    p, m = out["prob"].to_numpy(), pred["m"].to_numpy()
    mean, var = a / (a + b), a * b / ((a + b) ** 2 * (a + b + 1))
    floor = (mean * (1 - mean) - var) / m  # E[X(1 - X)] / m = (E X - E X^2) / m
    sq = (p - pred["k_b"].to_numpy() / m) ** 2
    assert np.isclose(res["mse_p_hat"], sq.mean())
    assert np.isclose(res["noise_floor"], floor.mean())
    assert np.isclose(res["alignment_error"], sq.mean() - floor.mean())
    # the interval: a mixture over draws of normals centred at mse - floor_s
    e1, e2 = mean, var + mean ** 2
    e3 = e2 * (a + 2) / (a + b + 2)
    e4 = e3 * (a + 3) / (a + b + 3)
    var_floor = ((e2 - 2 * e3 + e4 - (e1 - e2) ** 2) / m ** 2).mean(0).sum() / len(p) ** 2
    se = np.sqrt(np.var(sq - floor.mean(0), ddof=1) / len(p) + var_floor)
    centres = sq.mean() - floor.mean(1)
    for q, key in ((0.05, "alignment_error_lower"), (0.95, "alignment_error_upper")):
        assert abs(stats.norm.cdf(res[key], centres, se).mean() - q) < 1e-8
    # the truth of this simulation: mean (p - p*)^2 lies inside the interval
    truth = np.mean((p - sim.p_star["p_b"].to_numpy()) ** 2)
    assert res["alignment_error_lower"] < truth < res["alignment_error_upper"]


def test_perfect_judge_mse_sits_on_the_noise_floor():
    """Lemma 2: a judge reporting p* has MSE to p-hat = E[p*(1-p*)/m]; corrected error ~ 0."""
    s = simulate_autorater(4000, 3, concentration=3.0, temperature=1.0, random_seed=3)
    truth = s.p_star["p_b"].to_numpy()
    fit = PreferenceDistribution().fit(s.annotations)
    res = alignment_error(pd.DataFrame({"item": s.p_star["item"], "prob": truth}), fit)
    floor = np.mean(truth * (1 - truth) / 3)
    assert abs(res["mse_p_hat"] - floor) < 0.1 * floor
    assert abs(res["noise_floor"] - floor) < 0.1 * floor
    assert res["alignment_error_lower"] < 0 < res["alignment_error_upper"]
    assert abs(res["alignment_error"]) < 0.1 * res["mse_p_hat"]


def test_alignment_error_interval_mixes_nuts_draws(nuts_fit, sim):
    res = alignment_error(sim.outputs, nuts_fit)
    assert res["alignment_error_lower"] < res["alignment_error"] < res["alignment_error_upper"]
    truth = np.mean((sim.outputs["prob"] - sim.p_star["p_b"]) ** 2)
    assert res["alignment_error_lower"] < truth < res["alignment_error_upper"]


def test_alignment_error_requires_annotations_for_every_item(map_fit):
    with pytest.raises(DataValidationError, match="zero annotations"):
        alignment_error(pd.DataFrame({"item": ["nope"], "prob": [0.5]}), map_fit)
    with pytest.raises(TypeError, match="PreferenceDistribution"):
        alignment_error(pd.DataFrame({"item": ["x"], "prob": [0.5]}), object())


@pytest.mark.slow
def test_alignment_error_interval_covers_the_true_error():
    """Coverage over 100 simulated data sets: a noisy, miscalibrated judge, 400 items, m = 1..4."""
    hits, estimates, truths = [], [], []
    for rep in range(100):
        s = simulate_autorater(400, (1, 4), concentration=3.0, temperature=1.5, bias=0.2,
                               noise_sd=0.5, random_seed=1000 + rep)
        fit = PreferenceDistribution().fit(s.annotations)
        res = alignment_error(s.outputs, fit)
        truth = np.mean((s.outputs["prob"] - s.p_star["p_b"]) ** 2)
        hits.append(res["alignment_error_lower"] < truth < res["alignment_error_upper"])
        estimates.append(res["alignment_error"])
        truths.append(truth)
    # unbiased: mean error within z Monte Carlo standard errors; coverage consistent with
    # 0.95 (both at the suite's false-alarm rate, shared over the two checks)
    err = np.asarray(estimates) - np.asarray(truths)
    assert abs(err.mean()) < stats.norm.isf(FALSE_ALARM / 4) * err.std() / np.sqrt(len(err))
    assert coverage_consistent(sum(hits), len(hits), 0.95, n_checks=2), np.mean(hits)


def test_alignment_error_with_ties_counts_a_tie_as_half_a_vote():
    """With ties p-hat = (k_B + k_tie/2)/m; a judge reporting q* = p*_B + p*_tie/2 scores ~0.

    The noise floor is E[Var(y)]/m for one annotation y in {0, 1/2, 1}, checked here
    against its value at the simulation's true p* (Lemma 2 with a three-valued y).
    """
    s = simulate_autorater(4000, 3, concentration=3.0, tie_mean=0.3, temperature=1.0,
                           random_seed=4)
    p_b, p_tie = s.p_star["p_b"].to_numpy(), s.p_star["p_tie"].to_numpy()
    q = p_b + p_tie / 2
    fit = PreferenceDistribution(ties=True).fit(s.annotations)
    res = alignment_error(pd.DataFrame({"item": s.p_star["item"], "prob": q}), fit)
    floor = np.mean((p_b + p_tie / 4 - q ** 2) / 3)
    assert abs(res["noise_floor"] - floor) < 0.1 * floor
    assert abs(res["mse_p_hat"] - floor) < 0.1 * floor
    assert res["alignment_error_lower"] < 0 < res["alignment_error_upper"]
    # a judge off by 0.1 everywhere: the corrected error recovers 0.01
    off = np.clip(q + 0.1, 0, 1)
    res = alignment_error(pd.DataFrame({"item": s.p_star["item"], "prob": off}), fit)
    truth = np.mean((off - q) ** 2)
    assert res["alignment_error_lower"] < truth < res["alignment_error_upper"]


def test_alignment_error_says_it_does_not_use_the_swapped_order(map_fit):
    # before 2026-12-02: a prob_swapped column was dropped without a word
    s = simulate_autorater(300, (1, 4), population_mean=0.6, concentration=3.0,
                           temperature=2.0, swapped=True, random_seed=11)
    assert "prob_swapped" in s.outputs
    with pytest.warns(UserWarning, match=r"prob_swapped is not used.*1 - prob_swapped"):
        both = alignment_error(s.outputs, map_fit)
    one = alignment_error(s.outputs[["item", "prob"]], map_fit)
    pd.testing.assert_series_equal(both, one)
