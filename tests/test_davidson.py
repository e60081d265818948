"""Tests for bayesjudge.models.davidson.aggregator (Dadkhahi et al. 2025, section 4, Algorithm 1).

Every equation is checked against an independent computation written here:
eqs. 2-3 (features) and 4 (probabilities) against scalar math, eq. 5 against
the written-out risks, eq. 6 against a brute-force argmin of the expected MAE,
and eq. 8 against a numpy + scipy maximum-likelihood fit (average NLL,
L-BFGS-B, multi-start) that shares no code with the library. The contract
tests (predict, decision map, compile-once, save/load, compare, summaries,
input validation) run on the session fixtures of ``conftest.py``; the
coverage study is ``@pytest.mark.slow``.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from conftest import NUTS_SMALL, fit_quietly
from scipy import optimize, special, stats
from stochastic import FALSE_ALARM, coverage_consistent, rhats_converged

import bayesjudge
from bayesjudge import DataValidationError, DavidsonAggregator, NotFittedError
from bayesjudge.base import BayesianModel
from bayesjudge.datasets import simulate_davidson_votes
from bayesjudge.models.davidson.aggregator import (
    MAE_LOSS,
    bayes_action,
    davidson_log_probs,
    mae_risks,
    vote_features,
)

PARITY_TOL = 1e-4
COUNTS = ["n_pos", "n_tie", "n_neg"]


# ============================================================ independent references
def reference_features(counts, alpha=1.0, kappa=1.0):
    """Eqs. 2-3 written out: s = 1/2 log((c+ + a)/(c- + a)), t = log((c0 + k)/(n + k))."""
    c = np.asarray(counts, dtype=float)
    s = 0.5 * np.log((c[:, 0] + alpha) / (c[:, 2] + alpha))
    t = np.log((c[:, 1] + kappa) / (c.sum(axis=1) + kappa))
    return s, t


def reference_mle(counts, labels, tie="global", alpha=1.0, kappa=1.0, n_starts=8):
    """Maximum-likelihood fit of eq. 8 with numpy + scipy only.

    Minimises the *average* NLL of the logits (beta s, -beta s, eta) for the
    classes (+1, -1, 0), with eta = eta0 (global) or gamma * t (local), by
    L-BFGS-B with box constraints and random restarts (Algorithm 1, step 1).
    """
    s, t = reference_features(counts, alpha, kappa)
    w = np.ones_like(s) if tie == "global" else t
    y = np.asarray(labels)
    onehot = np.stack([y == 1, y == -1, y == 0], axis=1).astype(float)

    def nll_and_grad(theta):
        beta, eta = theta
        logits = np.stack([beta * s, -beta * s, eta * w], axis=1)
        lse = special.logsumexp(logits, axis=1)
        nll = np.mean(lse - (onehot * logits).sum(axis=1))
        resid = np.exp(logits - lse[:, None]) - onehot
        grad = np.array([np.mean((resid[:, 0] - resid[:, 1]) * s), np.mean(resid[:, 2] * w)])
        return nll, grad

    rng = np.random.default_rng(12345)
    best = None
    for k in range(n_starts):
        x0 = np.zeros(2) if k == 0 else rng.uniform(-4, 4, size=2)
        res = optimize.minimize(
            nll_and_grad, x0, jac=True, method="L-BFGS-B", bounds=[(-50, 50)] * 2,
            options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 10_000},
        )
        if best is None or res.fun < best.fun:
            best = res
    return best.x, best.fun


def hand_probs(u, eta):
    """Eq. 4 with plain exponentials (moderate arguments only): columns p(-1), p(0), p(+1)."""
    u, eta = np.broadcast_arrays(np.asarray(u, float), np.asarray(eta, float))
    z = np.exp(u) + np.exp(-u) + np.exp(eta)
    return np.stack([np.exp(-u) / z, np.exp(eta) / z, np.exp(u) / z], axis=-1)


def calibration_counts(votes, labels):
    """Counts (c+, c0, c-) of the labelled items, in label order (pandas merge, not the library)."""
    merged = labels.merge(votes, on="item", how="left", validate="one_to_one")
    return merged[COUNTS].to_numpy(), merged["label"].to_numpy()


def _params(model):
    tie = "tie_logit" if model.tie == "global" else "tie_scale"
    return np.array([float(model.map_["margin_scale"]), float(model.map_[tie])])


# ============================================================ eq. 8: MLE parity
def test_map_flat_matches_scipy_reference_global(davidson_data, davidson_map_flat, davidson_truth):
    counts, y = calibration_counts(*davidson_data)
    ref, _ = reference_mle(counts, y, tie="global")
    np.testing.assert_allclose(_params(davidson_map_flat), ref, atol=PARITY_TOL, rtol=0)
    # and the MLE is where the truth says it should be (400 items: sd ~ 0.2)
    assert abs(ref[0] - davidson_truth["beta"]) < 0.6
    assert abs(ref[1] - davidson_truth["eta0"]) < 0.6


def test_map_flat_matches_scipy_reference_local(davidson_local_data, davidson_truth):
    model = DavidsonAggregator(tie="local", priors="flat").fit(*davidson_local_data)
    counts, y = calibration_counts(*davidson_local_data)
    ref, _ = reference_mle(counts, y, tie="local")
    np.testing.assert_allclose(_params(model), ref, atol=PARITY_TOL, rtol=0)
    assert set(model.map_) == {"margin_scale", "tie_scale"}
    assert abs(ref[1] - davidson_truth["gamma"]) < 0.6


def test_map_flat_matches_scipy_reference_on_pandalm(davidson_map_flat):
    # Real data: PandaLM, two LLM judges' verdicts per item (n <= 2 votes),
    # labels = human majority. Same compiled graph as davidson_map_flat.
    from bayesjudge.datasets import load_pandalm, pandalm_labels, pandalm_votes

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "skipped unparsable verdicts"
        data = load_pandalm()
        votes, labels = pandalm_votes(data), pandalm_labels(data)
    model = DavidsonAggregator(priors="flat").fit(votes, labels)
    assert model._engine is davidson_map_flat._engine
    counts = (
        votes.assign(v=votes["vote"].map({1: "n_pos", 0: "n_tie", -1: "n_neg"}))
        .pivot_table(index="item", columns="v", values="vote", aggfunc="size", fill_value=0)
        .reindex(columns=COUNTS, fill_value=0)
        .reset_index()
    )
    c, y = calibration_counts(counts, labels)
    ref, _ = reference_mle(c, y)
    np.testing.assert_allclose(_params(model), ref, atol=PARITY_TOL, rtol=0)
    pred = model.predict(votes)
    assert len(pred) == labels["item"].nunique()


def test_observed_data_and_pointwise_loglik_carry_the_item_ids(davidson_data, davidson_map,
                                                               davidson_nuts):
    """LOO's Pareto k per item can be traced to the item (they were numbered 0..n-1)."""
    _, labels = davidson_data
    ids = labels["item"].tolist()  # the calibration items, in their order
    for fit in (davidson_map, davidson_nuts):
        idata = fit.idata_
        assert idata.observed_data["label"].coords["item"].values.tolist() == ids
        assert idata.log_likelihood["label"].coords["item"].values.tolist() == ids
        np.testing.assert_array_equal(idata.observed_data["label"].values,
                                      labels["label"].to_numpy())
        assert idata.observed_data["vote_counts"].coords["outcome"].values.tolist() == [
            "-1", "0", "+1"]


def test_default_priors_are_weak(davidson_map, davidson_map_flat):
    # N(0, 5) / N(0, 3) barely move a 400-item MLE.
    np.testing.assert_allclose(_params(davidson_map), _params(davidson_map_flat), atol=0.01)


def test_nuts_posterior_agrees_with_map_and_truth(davidson_nuts, davidson_map, davidson_truth):
    table = davidson_nuts.summarize(ci_prob=0.99)
    for name, truth in (
        ("margin_scale", davidson_truth["beta"]),
        ("tie_logit", davidson_truth["eta0"]),
    ):
        row = table.loc[name]
        assert abs(row["mean"] - float(davidson_map.map_[name])) < 0.3 * row["sd"]
        assert row["eti99_lb"] < truth < row["eti99_ub"]


def test_posterior_moments_equal_a_grid_posterior(davidson_data, davidson_nuts, davidson_map):
    """NUTS and Laplace means and sds of (beta, eta0) against the exact posterior of eq. 8
    with the default priors (N(0, 5), N(0, 3)) on a 2-D numpy grid: an interval too wide
    or too narrow shows here, where a coverage test of 50 replications cannot tell."""
    counts, y = calibration_counts(*davidson_data)
    s, _ = reference_features(counts)
    onehot = np.stack([y == -1, y == 0, y == 1], axis=1).astype(float)
    beta0, eta00 = _params(davidson_map)
    beta = beta0 + np.linspace(-1.5, 1.5, 301)
    eta = eta00 + np.linspace(-1.0, 1.0, 301)
    logits = np.stack(np.broadcast_arrays(-beta[:, None, None] * s, eta[None, :, None],
                                          beta[:, None, None] * s), axis=-1)
    loglik = (onehot * (logits - special.logsumexp(logits, axis=-1, keepdims=True))).sum((2, 3))
    logpost = (loglik + stats.norm.logpdf(beta, 0, 5)[:, None]
               + stats.norm.logpdf(eta, 0, 3)[None, :])
    w = np.exp(logpost - logpost.max())
    w /= w.sum()
    assert w[[0, -1]].max() < 1e-8 and w[:, [0, -1]].max() < 1e-8  # the grid holds the mass
    grid = {}
    for name, axis, values in (("margin_scale", 1, beta), ("tie_logit", 0, eta)):
        marginal = w.sum(axis=axis)
        mean = (marginal * values).sum()
        grid[name] = (mean, np.sqrt((marginal * (values - mean) ** 2).sum()))
    nuts = davidson_nuts.summarize()
    laplace = davidson_map.summarize()
    for name, (mean, sd) in grid.items():
        row = nuts.loc[name]
        print(name, mean, sd, row["mean"], row["sd"], row["ess_bulk"], row["mcse_mean"],
              laplace.loc[name, "mean"], laplace.loc[name, "sd"])
        # Monte Carlo error: the mean's MCSE, and ~1/sqrt(2 ESS) relative for an sd
        assert abs(row["mean"] - mean) < 4 * row["mcse_mean"] + 1e-3 * sd, (name, row, mean)
        assert abs(row["sd"] / sd - 1) < 4 / np.sqrt(2 * row["ess_bulk"]), (name, row, sd)
        # 1,000 importance-resampled Laplace draws: a Gaussian at the mode, near-exact here
        assert abs(laplace.loc[name, "sd"] / sd - 1) < 0.1, (name, laplace.loc[name], sd)
        assert abs(laplace.loc[name, "mean"] - mean) < 0.2 * sd, (name, laplace.loc[name], mean)


# ============================================================ eqs. 2-3: features
@pytest.mark.parametrize(
    "counts, alpha, kappa, s, t",
    [
        ((5, 0, 0), 1.0, 1.0, 0.5 * math.log(6 / 1), math.log(1 / 6)),
        ((0, 4, 0), 1.0, 1.0, 0.0, 0.0),  # all ties: s = 0 and t = 0 (its maximum)
        ((2, 3, 7), 1.0, 1.0, 0.5 * math.log(3 / 8), math.log(4 / 13)),
        ((2, 3, 7), 0.5, 2.0, 0.5 * math.log(2.5 / 7.5), math.log(5 / 14)),
        ((0, 0, 1), 1.0, 1.0, 0.5 * math.log(1 / 2), math.log(1 / 2)),
    ],
)
def test_vote_features_eqs_2_3(counts, alpha, kappa, s, t):
    s_hat, t_hat = vote_features(np.array([counts]), alpha, kappa)
    assert s_hat[0] == pytest.approx(s, abs=1e-15)
    assert t_hat[0] == pytest.approx(t, abs=1e-15)


def test_vote_features_properties():
    rng = np.random.default_rng(0)
    counts = rng.integers(0, 15, size=(500, 3))
    counts[counts.sum(1) == 0, 0] = 1
    s, t = vote_features(counts)
    s_ref, t_ref = reference_features(counts)
    np.testing.assert_allclose(s, s_ref, rtol=0, atol=1e-14)
    np.testing.assert_allclose(t, t_ref, rtol=0, atol=1e-14)
    assert (t <= 0).all()  # eq. 3: t <= 0
    s_swap, _ = vote_features(counts[:, ::-1])  # swapping A and B flips the margin
    np.testing.assert_allclose(s_swap, -s, atol=1e-14)


# ============================================================ eq. 4: probabilities
@pytest.mark.parametrize("u, eta", [(0.0, 0.0), (0.7, -0.3), (-1.2, 0.5), (2.5, -3.0), (0.0, 4.0)])
def test_davidson_probabilities_eq_4(u, eta):
    z = math.exp(u) + math.exp(-u) + math.exp(eta)
    expected = [math.exp(-u) / z, math.exp(eta) / z, math.exp(u) / z]  # -1, 0, +1
    got = np.exp(davidson_log_probs(u, eta))
    np.testing.assert_allclose(got, expected, rtol=1e-13, atol=0)


def test_davidson_probabilities_are_stable_and_consistent():
    # No overflow at extreme logits; log p(-1) = -2u exactly when e^u dominates.
    lp = davidson_log_probs(np.array([1000.0, -1000.0]), np.array([0.0, 0.0]))
    assert np.isfinite(lp).all()
    np.testing.assert_allclose(np.exp(lp).sum(-1), 1.0)
    assert lp[0, 0] == pytest.approx(-2000.0) and lp[0, 2] == pytest.approx(0.0)
    rng = np.random.default_rng(1)
    u, eta = rng.normal(0, 2, 200), rng.normal(0, 2, 200)
    np.testing.assert_allclose(np.exp(davidson_log_probs(u, eta)), hand_probs(u, eta), atol=1e-14)


# ============================================================ eqs. 5-6: risks and action
def test_mae_loss_table():
    # rows: action -1, 0, +1; columns: truth -1, 0, +1; entries |a - y|
    assert MAE_LOSS.tolist() == [[0, 1, 2], [1, 0, 1], [2, 1, 0]]


def test_mae_risks_eq_5():
    rng = np.random.default_rng(2)
    p = rng.dirichlet([1, 1, 1], size=300)
    p_neg, p_tie, p_pos = p.T
    expected = np.stack([p_tie + 2 * p_pos, p_pos + p_neg, 2 * p_neg + p_tie], axis=1)
    np.testing.assert_allclose(mae_risks(p), expected, atol=1e-15)


def _brute_force_action(p):
    """argmin_a sum_y p(y) |a - y| by loops; exact ties go to 0, then -1 (the library's rule)."""
    best, best_risk = None, None
    for a in (0, -1, 1):  # preference order for exact ties
        risk = sum(p_y * abs(a - y) for p_y, y in zip(p, (-1, 0, 1)))
        if best_risk is None or risk < best_risk:
            best, best_risk = a, risk
    return best


def test_bayes_action_eq_6_brute_force():
    rng = np.random.default_rng(3)
    p = np.concatenate(
        [rng.dirichlet([1, 1, 1], size=2000), rng.dirichlet([0.2, 0.2, 0.2], size=500)]
    )
    got = bayes_action(mae_risks(p))
    expected = np.array([_brute_force_action(row) for row in p])
    np.testing.assert_array_equal(got, expected)
    # Under MAE the Bayes action is the median of the ordinal distribution:
    # +1 iff p(+1) > 1/2, -1 iff p(-1) > 1/2, else 0.
    median = np.where(p[:, 2] > 0.5, 1, np.where(p[:, 0] > 0.5, -1, 0))
    np.testing.assert_array_equal(got, median)


@pytest.mark.parametrize(
    "p, action",
    [
        ((0.25, 0.5, 0.25), 0),   # R = (1, .5, 1)
        ((0.5, 0.0, 0.5), 0),     # R = (1, 1, 1): three-way tie -> 0
        ((0.5, 0.5, 0.0), 0),     # R(-1) = R(0) = .5 -> 0
        ((0.0, 0.5, 0.5), 0),     # R(0) = R(+1) = .5 -> 0
        ((0.75, 0.25, 0.0), -1),
        ((0.0, 0.25, 0.75), 1),
    ],
)
def test_bayes_action_exact_ties(p, action):
    assert bayes_action(mae_risks(np.array(p))) == action


# ============================================================ predict
def _random_item_votes(seed=4, n_items=30):
    rng = np.random.default_rng(seed)
    items = [f"q{k}" for k in rng.permutation(n_items)]  # string ids, unsorted
    n = rng.integers(1, 13, size=n_items)
    counts = rng.multinomial(n, [0.45, 0.2, 0.35])
    counts_df = pd.DataFrame(
        {"item": items, "n_pos": counts[:, 0], "n_tie": counts[:, 1], "n_neg": counts[:, 2]}
    )
    long_rows = [
        (item, vote)
        for item, row in zip(items, counts)
        for vote, k in zip((1, 0, -1), row)
        for _ in range(k)
    ]
    long_df = pd.DataFrame(long_rows, columns=["item", "vote"])
    long_df = long_df.iloc[rng.permutation(len(long_df))].reset_index(drop=True)
    return counts_df, long_df


@pytest.mark.parametrize("fit_name", ["davidson_map_flat", "davidson_nuts"])
def test_predict_keeps_every_item_in_input_order(fit_name, request):
    model = request.getfixturevalue(fit_name)
    counts_df, long_df = _random_item_votes()
    by_counts = model.predict(counts_df)
    with pytest.warns(UserWarning, match=r"\['judge'\] that are not used"):
        by_long = model.predict(long_df.assign(judge="some-llm"))  # named, then ignored
    assert by_counts["item"].tolist() == counts_df["item"].tolist()
    assert by_long["item"].tolist() == list(pd.unique(long_df["item"]))
    pd.testing.assert_frame_equal(
        by_long.set_index("item").loc[counts_df["item"]].reset_index(), by_counts
    )
    reversed_counts = counts_df.iloc[::-1].reset_index(drop=True)
    assert model.predict(reversed_counts)["item"].tolist() == reversed_counts["item"].tolist()


def test_predict_map_matches_hand_formulas(davidson_map_flat):
    counts_df, _ = _random_item_votes()
    pred = davidson_map_flat.predict(counts_df)
    beta, eta0 = _params(davidson_map_flat)
    s, _ = reference_features(counts_df[COUNTS].to_numpy())
    p = hand_probs(beta * s, eta0)
    np.testing.assert_allclose(pred[["p_neg", "p_tie", "p_pos"]].to_numpy(), p, atol=1e-12)
    risks = np.stack([p[:, 1] + 2 * p[:, 2], p[:, 2] + p[:, 0], 2 * p[:, 0] + p[:, 1]], axis=1)
    np.testing.assert_allclose(
        pred[["risk_neg", "risk_tie", "risk_pos"]].to_numpy(), risks, atol=1e-12
    )
    np.testing.assert_array_equal(pred["decision"], [_brute_force_action(row) for row in p])
    assert not any(c.endswith(("_lower", "_upper")) for c in pred.columns)


def test_predict_nuts_intervals_and_posterior_averaged_risks(davidson_nuts):
    counts_df, _ = _random_item_votes()
    pred = davidson_nuts.predict(counts_df)
    for name in ("neg", "tie", "pos"):
        lo, mid, hi = pred[f"p_{name}_lower"], pred[f"p_{name}"], pred[f"p_{name}_upper"]
        assert (lo <= mid).all() and (mid <= hi).all() and (lo < hi).all()
    # Risks are averaged over the posterior: the mean over draws of per-draw risks.
    draws = davidson_nuts.param_draws()
    beta, eta0 = draws["margin_scale"], draws["tie_logit"]
    assert beta.shape == (NUTS_SMALL["chains"] * NUTS_SMALL["draws"],)
    s, _ = reference_features(counts_df[COUNTS].to_numpy())
    p = hand_probs(beta[:, None] * s[None], eta0[:, None])  # (draws, items, 3)
    per_draw_risk = np.stack(
        [p[..., 1] + 2 * p[..., 2], p[..., 2] + p[..., 0], 2 * p[..., 0] + p[..., 1]], -1
    )
    avg_risk = per_draw_risk.mean(axis=0)
    np.testing.assert_allclose(
        pred[["risk_neg", "risk_tie", "risk_pos"]].to_numpy(), avg_risk, atol=1e-12
    )
    np.testing.assert_allclose(pred[["p_neg", "p_tie", "p_pos"]].to_numpy(), p.mean(0), atol=1e-12)
    np.testing.assert_array_equal(pred["decision"], bayes_action(avg_risk))
    lo, hi = np.quantile(p, [0.025, 0.975], axis=0)
    np.testing.assert_allclose(pred["p_pos_lower"], lo[:, 2], atol=1e-12)
    np.testing.assert_allclose(pred["p_pos_upper"], hi[:, 2], atol=1e-12)
    narrow = davidson_nuts.predict(counts_df, ci_prob=0.5)
    narrow_width = narrow["p_pos_upper"] - narrow["p_pos_lower"]
    width = pred["p_pos_upper"] - pred["p_pos_lower"]
    assert (narrow_width <= width).all()


# ============================================================ decision map (Figure 1)
def _cell(dm):
    return {(a, b): d for a, b, d in zip(dm["votes_a"], dm["votes_b"], dm["decision"])}


@pytest.mark.parametrize("fit_name", ["davidson_map_flat", "davidson_nuts"])
def test_decision_map_shape_and_symmetry(fit_name, request):
    model = request.getfixturevalue(fit_name)
    dm = model.decision_map(20)
    assert len(dm) == 231 == 21 * 22 // 2
    assert list(dm.columns) == [
        "votes_a", "votes_b", "votes_tie", "p_neg", "p_tie", "p_pos", "decision"
    ]
    assert ((dm["votes_a"] + dm["votes_b"] + dm["votes_tie"]) == 20).all()
    assert (dm[["votes_a", "votes_b", "votes_tie"]] >= 0).all().all()
    assert not dm.duplicated(["votes_a", "votes_b"]).any()
    cell = _cell(dm)
    for (a, b), d in cell.items():
        assert cell[(b, a)] == -d, (a, b)
    swapped = dm.set_index(["votes_b", "votes_a"]).sort_index()
    straight = dm.set_index(["votes_a", "votes_b"]).sort_index()
    np.testing.assert_allclose(
        straight["p_pos"].to_numpy(), swapped["p_neg"].to_numpy(), atol=1e-12
    )
    assert all(cell[(k, k)] == 0 for k in range(11))  # equal A and B votes: p(+1) = p(-1) -> tie
    assert cell[(20, 0)] == 1 and cell[(0, 20)] == -1
    median = np.where(dm["p_pos"] > 0.5, 1, np.where(dm["p_neg"] > 0.5, -1, 0))
    np.testing.assert_array_equal(dm["decision"], median)


def test_decision_map_tie_corner_follows_eta0(davidson_map_flat):
    # Same compiled graph as davidson_map_flat: only the data change.
    tie_heavy = DavidsonAggregator(priors="flat").fit(
        *simulate_davidson_votes(400, 8, beta=2.0, eta0=2.5, random_seed=7)
    )
    tie_rare = DavidsonAggregator(priors="flat").fit(
        *simulate_davidson_votes(400, 8, beta=2.0, eta0=-2.0, random_seed=8)
    )
    assert tie_heavy.map_["tie_logit"] > 1.5 and tie_rare.map_["tie_logit"] < -1.0
    heavy, rare = _cell(tie_heavy.decision_map(20)), _cell(tie_rare.decision_map(20))
    # All-tie corner, and the near-tie cells with one or two decisive votes
    for cell in [(0, 0), (1, 0), (0, 1), (1, 1), (2, 0), (0, 2)]:
        assert heavy[cell] == 0, cell
    assert rare[(0, 0)] == 0
    assert rare[(1, 0)] == 1 and rare[(0, 1)] == -1  # one decisive vote wins when ties are rare
    assert sum(d == 0 for d in heavy.values()) > sum(d == 0 for d in rare.values())


def test_decision_map_local_all_tie_corner_is_uniform(davidson_nuts_local):
    # Local model: u = 0 and t = 0 when all votes are ties, so eta = gamma * 0 = 0
    # and p = 1/3 each whatever the parameters (no intercept).
    dm = davidson_nuts_local.decision_map(20)
    corner = dm[(dm["votes_a"] == 0) & (dm["votes_b"] == 0)].iloc[0]
    np.testing.assert_allclose(corner[["p_neg", "p_tie", "p_pos"]].astype(float), 1 / 3, atol=1e-12)
    assert corner["decision"] == 0
    assert len(dm) == 231


@pytest.mark.parametrize("n", [0, -3, 2.5])
def test_decision_map_rejects_bad_n(davidson_map_flat, n):
    with pytest.raises(ValueError, match="positive integer"):
        davidson_map_flat.decision_map(n)


# ============================================================ compile once
@pytest.fixture
def count_compiles(monkeypatch):
    """Count every PyTensor compilation (pytensor.function and FunctionMaker.create)."""
    import pytensor
    import pytensor.compile.maker as maker

    calls = {"function": 0, "create": 0}
    orig_function, orig_create = pytensor.function, maker.FunctionMaker.create

    def function(*args, **kwargs):
        calls["function"] += 1
        return orig_function(*args, **kwargs)

    def create(self, *args, **kwargs):
        calls["create"] += 1
        return orig_create(self, *args, **kwargs)

    monkeypatch.setattr(pytensor, "function", function)
    monkeypatch.setattr(maker.FunctionMaker, "create", create)
    return calls


def test_refitting_splits_reuses_compiled_engine(davidson_map_flat, count_compiles):
    from bayesjudge.engine import compiled

    votes, labels = simulate_davidson_votes(2000, 8, beta=2.0, eta0=-0.5, random_seed=11)
    n_engines = len(compiled._ENGINES)
    rng = np.random.default_rng(0)
    fits = []
    for k in range(20):
        idx = np.sort(rng.choice(len(labels), size=100, replace=False))
        split = labels.iloc[idx]
        model = DavidsonAggregator(priors="flat", random_seed=k).fit(votes, split)
        assert model._engine is davidson_map_flat._engine
        fits.append((split, _params(model)))
    assert len(compiled._ENGINES) == n_engines
    assert count_compiles == {"function": 0, "create": 0}
    # The data really were swapped: estimates vary and each equals its split's MLE.
    estimates = np.array([p for _, p in fits])
    assert estimates[:, 0].std() > 0.05
    for split, params in fits[:3]:
        ref, _ = reference_mle(*calibration_counts(votes, split))
        np.testing.assert_allclose(params, ref, atol=PARITY_TOL, rtol=0)


@pytest.mark.parametrize("sampler", ["nutpie", "auto"])
def test_nutpie_compiles_once_for_two_datasets(davidson_nuts, monkeypatch, sampler):
    # "nutpie": numba compiles once for both data sets; "auto": this small model runs on
    # the engine's C functions, nothing is compiled for nutpie, the data swap still holds
    import nutpie

    from bayesjudge.engine import compiled

    engine = davidson_nuts._engine
    engine._nutpie = None  # forget the fixture's compiled sampler, to count afresh
    calls = []
    orig = nutpie.compile_pymc_model

    def counting(*args, **kwargs):
        calls.append(1)
        return orig(*args, **kwargs)

    monkeypatch.setattr(nutpie, "compile_pymc_model", counting)
    n_engines = len(compiled._ENGINES)
    data_a = simulate_davidson_votes(300, 8, beta=1.0, eta0=-0.5, random_seed=21)
    data_b = simulate_davidson_votes(250, 12, beta=3.0, eta0=0.5, random_seed=22)
    fit_a = fit_quietly(DavidsonAggregator(random_seed=3), *data_a, sampler=sampler, **NUTS_SMALL)
    fit_b = fit_quietly(DavidsonAggregator(random_seed=4), *data_b, sampler=sampler, **NUTS_SMALL)
    assert len(calls) == (1 if sampler == "nutpie" else 0)
    assert fit_a.sampler_ == fit_b.sampler_ == ("nutpie" if sampler == "nutpie" else "nutpie-c")
    assert len(compiled._ENGINES) == n_engines
    assert fit_a._engine is fit_b._engine is engine
    # each posterior belongs to its own data (nutpie saw the swapped data)
    for fit, data in ((fit_a, data_a), (fit_b, data_b)):
        ref, _ = reference_mle(*calibration_counts(*data))
        post = fit.summarize()
        assert abs(post.loc["margin_scale", "mean"] - ref[0]) < 0.5 * post.loc["margin_scale", "sd"]
        assert abs(post.loc["tie_logit", "mean"] - ref[1]) < 0.5 * post.loc["tie_logit", "sd"]
    beta_b = fit_b.summarize().loc["margin_scale", "mean"]
    beta_a = fit_a.summarize().loc["margin_scale", "mean"]
    assert beta_b - beta_a > 1.0


# ============================================================ save / load
class _NotDavidson(BayesianModel):
    """A second registered model class, only to exercise load's class check."""


@pytest.mark.parametrize("fit_name", ["davidson_map", "davidson_nuts", "davidson_nuts_local"])
def test_save_load_round_trip(fit_name, request, tmp_path):
    model = request.getfixturevalue(fit_name)
    path = tmp_path / f"{fit_name}.nc"
    model.save(path)
    loaded = DavidsonAggregator.load(path)
    assert type(loaded) is DavidsonAggregator
    assert loaded.get_params() == model.get_params()
    assert loaded.method_ == model.method_
    counts_df, long_df = _random_item_votes()
    pd.testing.assert_frame_equal(loaded.predict(counts_df), model.predict(counts_df))
    pd.testing.assert_frame_equal(loaded.predict(long_df), model.predict(long_df))
    pd.testing.assert_frame_equal(loaded.decision_map(20), model.decision_map(20))
    pd.testing.assert_frame_equal(loaded.summarize(), model.summarize())
    for group in ("posterior", "log_likelihood", "observed_data"):
        xr.testing.assert_equal(
            loaded.idata_[group].to_dataset(), model.idata_[group].to_dataset()
        )
    generic = bayesjudge.load(path)
    assert type(generic) is DavidsonAggregator


def test_load_checks_class_and_origin(davidson_map, tmp_path):
    path = tmp_path / "fit.nc"
    davidson_map.save(path)
    with pytest.raises(TypeError, match="holds a DavidsonAggregator, not a _NotDavidson"):
        _NotDavidson.load(path)
    foreign = tmp_path / "foreign.nc"
    foreign_tree = xr.DataTree.from_dict({"posterior": xr.Dataset({"x": ("draw", np.arange(3.0))})})
    foreign_tree.to_netcdf(foreign)
    with pytest.raises(ValueError, match="not written by bayesjudge"):
        DavidsonAggregator.load(foreign)


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.predict(pd.DataFrame({"item": [1], "vote": [1]})),
        lambda m: m.summarize(),
        lambda m: m.idata_,
        lambda m: m.param_draws(),
        lambda m: m.decision_map(5),
        lambda m: m.save("never.nc"),
    ],
    ids=["predict", "summarize", "idata_", "param_draws", "decision_map", "save"],
)
def test_not_fitted_error(call):
    with pytest.raises(NotFittedError, match=r"call \.fit\(\.\.\.\) first"):
        call(DavidsonAggregator())


# ============================================================ idata_, compare, summarize
@pytest.mark.parametrize("fit_name", ["davidson_map", "davidson_nuts"])
def test_idata_groups(fit_name, request, davidson_data):
    model = request.getfixturevalue(fit_name)
    votes, labels = davidson_data
    tree = model.idata_
    for group in ("posterior", "log_likelihood", "observed_data"):
        assert group in tree.children, group
    post = tree["posterior"].to_dataset()
    assert {"margin_scale", "tie_logit"} <= set(post.data_vars)
    ll = tree["log_likelihood"]["label"]
    assert ll.dims == ("chain", "draw", "item") and ll.sizes["item"] == len(labels)
    obs = tree["observed_data"].to_dataset()
    np.testing.assert_array_equal(obs["label"].values, labels["label"].to_numpy())
    np.testing.assert_array_equal(obs["vote_counts"].values, votes[COUNTS].to_numpy()[:, ::-1])
    if model.method_ == "map":
        assert "laplace" in tree["posterior"].attrs["inference"]
    else:
        assert "sample_stats" in tree.children
    # the pointwise log-likelihood is eq. 4 at each draw, per calibration item
    s, _ = reference_features(votes[COUNTS].to_numpy())
    beta = post["margin_scale"].values[..., None]
    eta0 = post["tie_logit"].values[..., None]
    logp = np.log(hand_probs(beta * s, eta0))  # (chain, draw, item, 3)
    label_idx = (labels["label"].to_numpy() + 1)[None, None, :, None]
    expected = np.take_along_axis(logp, label_idx, -1)[..., 0]
    np.testing.assert_allclose(ll.values, expected, atol=1e-10)


def test_compare_global_vs_local(davidson_nuts, davidson_nuts_local):
    table = bayesjudge.compare({"global": davidson_nuts, "local": davidson_nuts_local})
    assert set(table.index) == {"global", "local"}
    assert {"elpd", "elpd_diff", "weight", "rank"} <= set(table.columns)
    assert table["weight"].sum() == pytest.approx(1.0)
    # data simulated from the global model: the global model should not lose clearly
    assert table.loc["global", "elpd"] > table.loc["local", "elpd"] - 2 * table.loc["local", "dse"]


def test_compare_works_for_map_fits_and_refuses_different_data(davidson_map, davidson_nuts):
    table = bayesjudge.compare({"laplace": davidson_map, "nuts": davidson_nuts})
    assert set(table.index) == {"laplace", "nuts"}
    other_labels = simulate_davidson_votes(300, 8, beta=2.0, eta0=-0.5, random_seed=31)
    other = DavidsonAggregator().fit(*other_labels)
    with pytest.raises(ValueError, match="different observed data"):
        bayesjudge.compare({"global": davidson_nuts, "other": other})
    with pytest.raises(ValueError, match="at least two"):
        bayesjudge.compare({"global": davidson_nuts})


def test_compare_refuses_same_labels_with_different_votes(davidson_data, davidson_map):
    # Labels alone do not identify the data: swapping A/B votes keeps every
    # label and gives the symmetric model the same fit quality.
    votes, labels = davidson_data
    swapped = votes.rename(columns={"n_pos": "n_neg", "n_neg": "n_pos"})
    other = DavidsonAggregator().fit(swapped, labels)
    with pytest.raises(ValueError, match="different observed data"):
        bayesjudge.compare({"a": davidson_map, "b": other})


def test_summarize_map(davidson_map_flat):
    table = davidson_map_flat.summarize()
    assert list(table.index) == ["margin_scale", "tie_logit"]
    assert list(table.columns) == ["map", "mean", "sd", "eti95_lb", "eti95_ub", "mcse_mean",
                                   "laplace_ok"]
    np.testing.assert_allclose(table["map"].to_numpy(), _params(davidson_map_flat), atol=0)
    assert (table["eti95_lb"] < table["map"]).all() and (table["map"] < table["eti95_ub"]).all()


def test_summarize_nuts_equal_tailed_interval(davidson_nuts, davidson_nuts_local):
    table = davidson_nuts.summarize()
    assert {"eti95_lb", "eti95_ub", "r_hat", "ess_bulk"} <= set(table.columns)
    assert "map" not in table.columns
    for name in ("margin_scale", "tie_logit"):
        draws = davidson_nuts.idata_["posterior"][name].values.ravel()
        lo, hi = np.quantile(draws, [0.025, 0.975])  # equal-tailed 95%
        assert table.loc[name, "eti95_lb"] == pytest.approx(lo, abs=1e-10)
        assert table.loc[name, "eti95_ub"] == pytest.approx(hi, abs=1e-10)
    narrow = davidson_nuts.summarize(ci_prob=0.9)
    assert (narrow["eti90_ub"] - narrow["eti90_lb"] < table["eti95_ub"] - table["eti95_lb"]).all()
    assert list(davidson_nuts_local.summarize().index) == ["margin_scale", "tie_scale"]


# ============================================================ bad input
def _valid():
    votes, labels = simulate_davidson_votes(40, 6, beta=2.0, eta0=0.0, random_seed=41)
    assert set(labels["label"]) == {-1, 0, 1}
    return votes, labels


def _long():
    return pd.DataFrame({"item": [1, 1, 2, 2, 3, 3], "vote": [1, 1, 0, -1, -1, 0]})


def _long_labels():
    return pd.DataFrame({"item": [1, 2, 3], "label": [1, 0, -1]})


def _set(df, row, col, value):
    df = df.copy()
    if isinstance(value, float) and df[col].dtype.kind in "iu":
        df[col] = df[col].astype(float)
    elif not isinstance(value, (int, float)):
        df[col] = df[col].astype(object)
    df.loc[row, col] = value
    return df


def _bad_inputs():
    votes, labels = _valid()
    cases = {
        "vote outside {-1,0,1}": (
            _set(_long(), 2, "vote", 2), _long_labels(),
            r"votes\.vote must take values in",
        ),
        "NaN vote": (
            _set(_long(), 0, "vote", np.nan), _long_labels(),
            r"votes\.vote has 1 missing value",
        ),
        "NaN item (long votes)": (
            _set(_long(), 3, "item", np.nan), _long_labels(),
            r"votes\.item has 1 missing value",
        ),
        "NaN count": (
            _set(votes, 5, "n_tie", np.nan), labels,
            r"votes\.n_tie has 1 missing value",
        ),
        "NaN label": (
            votes, _set(labels, 4, "label", np.nan),
            r"labels\.label has 1 missing value",
        ),
        "NaN label item": (
            votes, _set(labels, 4, "item", np.nan),
            r"labels\.item has 1 missing value",
        ),
        "label outside {-1,0,1}": (
            votes, _set(labels, 0, "label", 2),
            r"labels\.label must take values in",
        ),
        "zero votes": (
            _set(_set(_set(votes, 3, "n_pos", 0), 3, "n_tie", 0), 3, "n_neg", 0), labels,
            r"have zero votes",
        ),
        "negative counts": (
            _set(votes, 2, "n_neg", -1), labels,
            r"votes\.n_neg has negative counts",
        ),
        "non-integer counts": (
            _set(votes, 2, "n_pos", 1.5), labels,
            r"votes\.n_pos must hold whole numbers",
        ),
        "one calibration item": (
            votes, labels.iloc[:1],
            r"1 labelled item\(s\); at least 2 are needed",
        ),
        "no tie labels": (
            votes, labels[labels["label"] != 0],
            r"never take the value\(s\) \[0\].*tie logit",
        ),
        "no -1 labels": (
            votes, labels[labels["label"] != -1],
            r"never take the value\(s\) \[-1\].*margin scale",
        ),
        "labelled items without votes": (
            votes, labels.assign(item=labels["item"] + 1000),
            r"labelled item\(s\) have no votes",
        ),
        "duplicated counts items": (
            _set(votes, 1, "item", 0), labels,
            r"votes\.item has duplicated ids in counts form",
        ),
        "duplicated label items": (
            votes, _set(labels, 1, "item", 0),
            r"labels\.item has duplicated ids",
        ),
        "wrong vote columns": (
            _long().rename(columns={"vote": "verdict"}), _long_labels(),
            r"votes is missing column\(s\) \['vote'\]",
        ),
        "wrong label columns": (
            votes, labels.rename(columns={"label": "y"}),
            r"labels is missing column\(s\) \['label'\]",
        ),
        "votes not a DataFrame": (
            _long().to_dict("list"), _long_labels(),
            r"votes must be a pandas DataFrame, got dict",
        ),
        "labels not a DataFrame": (
            votes, labels.to_numpy(),
            r"labels must be a pandas DataFrame, got ndarray",
        ),
        "empty votes": (
            _long().iloc[:0], _long_labels(),
            r"votes is empty",
        ),
    }
    return [pytest.param(v, lab, m, id=k) for k, (v, lab, m) in cases.items()]


@pytest.mark.parametrize("votes, labels, match", _bad_inputs())
def test_fit_rejects_bad_input(votes, labels, match):
    with pytest.raises(DataValidationError, match=match):
        DavidsonAggregator().fit(votes, labels)


@pytest.mark.parametrize(
    "votes, match",
    [
        (pd.DataFrame({"item": [1, 2], "vote": [1, 3]}), r"votes\.vote must take values in"),
        (pd.DataFrame({"item": [1], "n_pos": [0], "n_tie": [0], "n_neg": [0]}), r"have zero votes"),
        ([1, 0, -1], r"votes must be a pandas DataFrame"),
    ],
)
def test_predict_rejects_bad_votes(davidson_map_flat, votes, match):
    with pytest.raises(DataValidationError, match=match):
        davidson_map_flat.predict(votes)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"tie": "foo"}, r"tie must be 'global' or 'local', got 'foo'"),
        ({"alpha": 0.0}, r"alpha and kappa must be > 0"),
        ({"alpha": -1.0}, r"alpha and kappa must be > 0"),
        ({"kappa": 0.0}, r"alpha and kappa must be > 0"),
        ({"priors": "weird"}, r"priors must be None, 'flat' or a dict"),
        ({"priors": {"beta": {"dist": "Normal", "mu": 0, "sigma": 1}}}, r"unknown prior name"),
    ],
)
def test_fit_rejects_invalid_options(kwargs, match):
    # Options are arguments, not tables: ValueError (DataValidationError is a subclass
    # reserved for table problems). __init__ stores them; fit checks them.
    model = DavidsonAggregator(**kwargs)
    with pytest.raises(ValueError, match=match):
        model.fit(*_valid())


def test_fit_rejects_unknown_method():
    with pytest.raises(ValueError, match="method must be 'map' or 'nuts'"):
        DavidsonAggregator().fit(*_valid(), method="bfgs")


# ============================================================ slow: coverage study
@pytest.mark.slow
def test_nuts_recovery_and_coverage(monkeypatch):
    """Repeated simulations with known (beta, eta0): 95% intervals cover at ~0.95.

    50 replications x 400 calibration items x 8 votes; NUTS 2 x (500 + 500)
    with the default priors; one compiled graph, data swapped per replication.
    The MAP + Laplace intervals of the same data sets are checked alongside.
    """
    import nutpie

    from bayesjudge.engine import compiled

    truth = {"margin_scale": 2.0, "tie_logit": -0.5}
    n_reps, n_items = 50, 400
    compiles = []
    orig = nutpie.compile_pymc_model
    monkeypatch.setattr(
        nutpie, "compile_pymc_model", lambda *a, **k: compiles.append(1) or orig(*a, **k)
    )
    rows, engines, n_engines = [], set(), None
    for rep in range(n_reps):
        data = simulate_davidson_votes(
            n_items, 8, beta=truth["margin_scale"], eta0=truth["tie_logit"], random_seed=5000 + rep
        )
        nuts = fit_quietly(
            DavidsonAggregator(random_seed=rep), *data, method="nuts", chains=2, draws=500,
            tune=500, sampler="nutpie",  # a loop of refits: numba nutpie, compiled once
        )
        laplace = DavidsonAggregator(random_seed=rep).fit(*data).summarize()
        if n_engines is None:
            n_engines = len(compiled._ENGINES)
        engines.add(id(nuts._engine))
        post = nuts.summarize()
        for name, value in truth.items():
            rows.append(
                {
                    "rep": rep, "param": name, "truth": value,
                    "mean": post.loc[name, "mean"], "sd": post.loc[name, "sd"],
                    "covered": post.loc[name, "eti95_lb"] <= value <= post.loc[name, "eti95_ub"],
                    "laplace_covered": (
                        laplace.loc[name, "eti95_lb"] <= value <= laplace.loc[name, "eti95_ub"]
                    ),
                    "rhat": post.loc[name, "r_hat"],
                }
            )
    res = pd.DataFrame(rows)
    res["error"] = res["mean"] - res["truth"]
    summary = res.groupby("param").agg(
        covered=("covered", "sum"), laplace_covered=("laplace_covered", "sum"),
        reps=("covered", "size"), bias=("error", "mean"), error_sd=("error", "std"),
        mean_posterior_sd=("sd", "mean"), max_rhat=("rhat", "max"),
    )
    summary["bias_mc_se"] = summary["error_sd"] / np.sqrt(summary["reps"])
    # shown with -s; printed before the assertions so a failure still reports the numbers
    print(f"\nDavidson NUTS recovery ({n_reps} reps x {n_items} items):\n" + summary.to_string())

    assert len(engines) == 1 and len(compiles) <= 1  # one compiled graph, data swapped
    # (0 when an earlier test compiled this structure's nutpie model already)
    assert len(compiled._ENGINES) == n_engines
    assert rhats_converged(res["rhat"]), res["rhat"].describe()

    def coverage_ok(k, n):  # two-sided binomial test against the nominal 0.95
        # NUTS and Laplace per parameter, and the pooled check
        return coverage_consistent(k, n, 0.95, n_checks=2 * len(summary) + 1)

    for name, row in summary.iterrows():
        assert coverage_ok(row["covered"], row["reps"]), (
            f"{name}: NUTS coverage {row['covered']}/{row['reps']}"
        )
        assert coverage_ok(row["laplace_covered"], row["reps"]), (
            f"{name}: Laplace coverage {row['laplace_covered']}/{row['reps']}"
        )
        # a z test of the mean error at the suite's false-alarm rate (two-sided, per parameter)
        z = stats.norm.isf(FALSE_ALARM / (2 * len(summary)))
        assert abs(row["bias"]) < z * row["bias_mc_se"], f"{name}: bias {row['bias']:.4f}"
        # the posterior sd matches the spread of the estimates across replications
        assert 0.6 < row["mean_posterior_sd"] / row["error_sd"] < 1.6
    assert coverage_ok(res["covered"].sum(), len(res))
