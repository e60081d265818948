"""Prediction-powered rank-sets (Chatzi et al. 2024, arXiv:2402.17826) against a hand computation.

The reference below is written from the paper's definitions battle by battle with
Python loops (win indicator: 1 for the winner, 0 for the loser and for both sides of a
tie; per-item means over the battles involving the item; Sigma normalised by n^2 and
N^2; PPI++ lambda; pairwise chi-square test with k degrees of freedom), independently of
the vectorised implementation.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import chi2

import bayesjudge.baselines.prediction_powered as ppr_module
from bayesjudge import DataValidationError
from bayesjudge.baselines import prediction_powered_ranksets

ITEMS = ["a", "b", "c", "d"]


def _table(seed=0, n_battles=300, n_human=80, judges=("llm",)):
    rng = np.random.default_rng(seed)
    skill = {"a": 1.0, "b": 0.4, "c": 0.0, "d": -0.8}
    rows = []
    for b in range(n_battles):
        left, right = rng.choice(ITEMS, 2, replace=False)
        p = 1 / (1 + np.exp(-(skill[left] - skill[right])))
        u = rng.random()
        truth = "left" if u < 0.8 * p else ("right" if u > 0.8 * p + 0.2 else "tie")
        if b < n_human:
            rows.append((f"x{b}", "human", left, right, truth))
        for j, judge in enumerate(judges):
            noisy = truth if rng.random() < 0.7 - 0.1 * j else rng.choice(["left", "tie", "right"])
            rows.append((f"x{b}", judge, left, right, noisy))
    return pd.DataFrame(rows, columns=["battle", "judge", "left", "right", "outcome"])


def _hand(table, judge="llm", lam=None, alpha=0.1, covariance="paper"):
    """theta, Sigma, lambda and rank-sets from the paper's formulas, one battle at a time;
    ``covariance="per_item"``: Sigma[m, m'] of the per-item means, divided by c_m c_m'
    (each item's number of battles in the set) instead of n^2 and N^2."""
    human = table[table.judge == "human"].set_index("battle")["outcome"].to_dict()
    judges = [judge] if isinstance(judge, str) else judge
    llm = {j: table[table.judge == j].set_index("battle")["outcome"].to_dict() for j in judges}
    pairs = table.drop_duplicates("battle").set_index("battle")[["left", "right"]]
    k = len(ITEMS)

    def win(outcome, side):
        return 1.0 if outcome == side else 0.0

    def f(b, side):
        return np.mean([win(llm[j][b], side) for j in judges])

    lab = [b for b in pairs.index if b in human]
    unl = [b for b in pairs.index if b not in human]
    n, big_n = len(lab), len(unl)

    def terms(battles, value):
        """Per-item means and residual vectors (k x battles) of value(b, side)."""
        mean = np.zeros(k)
        count = np.zeros(k)
        for b in battles:
            for side in ("left", "right"):
                m = ITEMS.index(pairs.loc[b, side])
                mean[m] += value(b, side)
                count[m] += 1
        res = np.zeros((k, len(battles)))
        for col, b in enumerate(battles):
            for side in ("left", "right"):
                m = ITEMS.index(pairs.loc[b, side])
                res[m, col] = value(b, side) - mean[m] / count[m]
        return mean / count, res, count

    a, res_a, c_big = terms(unl, f)
    if lam is None:
        _, res_f, _ = terms(lab, f)
        _, res_h, _ = terms(lab, lambda b, s: win(human[b], s))
        cov_n = sum(np.outer(res_h[:, c], res_f[:, c]) for c in range(n)) / n
        var_big = sum(np.outer(res_a[:, c], res_a[:, c]) for c in range(big_n)) / big_n
        lam = min(1.0, max(0.0, np.trace(cov_n) / ((1 + n / big_n) * np.trace(var_big))))
    b_mean, res_b, c_n = terms(lab, lambda b, s: lam * f(b, s) - win(human[b], s))
    theta = lam * a - b_mean
    norm_big, norm_n = ((big_n**2, n**2) if covariance == "paper"
                        else (np.outer(c_big, c_big), np.outer(c_n, c_n)))
    sigma = (lam**2 * sum(np.outer(res_a[:, c], res_a[:, c]) for c in range(big_n)) / norm_big
             + sum(np.outer(res_b[:, c], res_b[:, c]) for c in range(n)) / norm_n)
    lower, upper = np.ones(k, int), np.full(k, k)
    q = chi2.ppf(1 - alpha, k)
    for i in range(k):
        for j in range(k):
            if i == j:
                continue
            var = sigma[i, i] + sigma[j, j] - 2 * sigma[i, j]
            if abs(theta[i] - theta[j]) > np.sqrt(var * q):
                if theta[i] < theta[j]:
                    lower[i] += 1
                else:
                    upper[i] -= 1
    return dict(zip(ITEMS, theta, strict=True)), sigma, lam, lower, upper


def _by_item(out):
    return out.set_index("item").loc[ITEMS]


@pytest.mark.parametrize("alpha, covariance", [(0.1, "paper"), (0.4, "paper"),
                                               (0.1, "per_item"), (0.6, "per_item")])
def test_ppr_equals_the_hand_computation(alpha, covariance):
    table = _table()
    out = prediction_powered_ranksets(table, reference="human", judge="llm", alpha=alpha,
                                      covariance=covariance)
    theta, sigma, lam, lower, upper = _hand(table, alpha=alpha, covariance=covariance)
    got = _by_item(out)
    assert 0 < lam < 1 and got["lambda"].iloc[0] == pytest.approx(lam, rel=1e-10)
    np.testing.assert_allclose(got["theta"], [theta[m] for m in ITEMS], rtol=1e-10)
    order = list(out["item"])
    idx = [ITEMS.index(m) for m in order]
    np.testing.assert_allclose(out.attrs["covariance"], sigma[np.ix_(idx, idx)], rtol=1e-10)
    np.testing.assert_array_equal(got["rank_lower"], lower)
    np.testing.assert_array_equal(got["rank_upper"], upper)
    assert out["theta"].is_monotonic_decreasing and out["rank"].tolist() == [1, 2, 3, 4]
    assert (out.attrs["n"], out.attrs["N"]) == (80, 220)


def test_rank_sets_use_the_chi_square_quantile_over_k_degrees_of_freedom():
    """Algorithm 2 in closed form: three items, Sigma = 0.01 I, so Var(theta_i - theta_j) =
    0.02; a and b differ by 2.33 sd, between sqrt(chi2_{0.9, 2}) = 2.15 and
    sqrt(chi2_{0.9, 3}) = 2.50 (k = 3 items): not ordered; c is 8 sd below both."""
    sd = np.sqrt(0.02)
    theta = np.array([0.5, 0.5 - 2.33 * sd, 0.5 - 10 * sd])
    assert np.sqrt(chi2.ppf(0.9, 2)) < 2.33 < np.sqrt(chi2.ppf(0.9, 3))
    lower, upper = ppr_module._rank_sets(theta, 0.01 * np.eye(3), 0.1)
    np.testing.assert_array_equal(lower, [1, 1, 3])
    np.testing.assert_array_equal(upper, [2, 2, 3])
    # at alpha = 0.2 the k = 3 threshold sqrt(chi2_{0.8, 3}) = 2.15 separates them
    lower, upper = ppr_module._rank_sets(theta, 0.01 * np.eye(3), 0.2)
    np.testing.assert_array_equal(lower, [1, 2, 3])
    np.testing.assert_array_equal(upper, [1, 2, 3])


def test_lambda_zero_is_the_human_only_win_rate():
    table = _table(seed=3)
    out = _by_item(prediction_powered_ranksets(table, judge="llm", lam=0.0))
    human = table[table.judge == "human"]
    wins = pd.concat([human.loc[human.outcome == "left", "left"],
                      human.loc[human.outcome == "right", "right"]]).value_counts()
    played = pd.concat([human["left"], human["right"]]).value_counts()
    rate = wins.reindex(ITEMS, fill_value=0) / played.loc[ITEMS]  # a tie is no win
    np.testing.assert_allclose(out["theta"], rate.to_numpy(), rtol=1e-12)
    theta, sigma, _, lower, upper = _hand(table, lam=0.0)
    np.testing.assert_array_equal(out["rank_lower"], lower)
    assert (out["lambda"] == 0).all()
    # the LLM's verdicts do not matter at lambda = 0
    flipped = table.assign(outcome=np.where(table.judge == "llm", "tie", table.outcome))
    again = _by_item(prediction_powered_ranksets(flipped, judge="llm", lam=0.0))
    np.testing.assert_allclose(again["theta"], out["theta"], rtol=1e-12)


def test_several_judges_average_their_win_indicators():
    table = _table(seed=5, judges=("j1", "j2"))
    out = _by_item(prediction_powered_ranksets(table, judge=["j1", "j2"]))
    theta, _, lam, lower, upper = _hand(table, judge=["j1", "j2"])
    np.testing.assert_allclose(out["theta"], [theta[m] for m in ITEMS], rtol=1e-10)
    assert out["lambda"].iloc[0] == pytest.approx(lam, rel=1e-10)
    np.testing.assert_array_equal(out["rank_upper"], upper)


def test_bad_input_is_named():
    table = _table(n_battles=40, n_human=20)
    with pytest.raises(DataValidationError, match="'gpt'"):
        prediction_powered_ranksets(table, judge="gpt")
    clash = table.copy()
    row = clash.index[(clash.battle == "x3") & (clash.judge == "llm")][0]
    clash.loc[row, ["left", "right"]] = clash.loc[row, ["right", "left"]].to_numpy()
    with pytest.raises(DataValidationError, match="x3"):
        prediction_powered_ranksets(clash, judge="llm")
    with pytest.raises(DataValidationError, match="x5"):
        prediction_powered_ranksets(table.drop(table.index[(table.battle == "x5")
                                                           & (table.judge == "llm")]), judge="llm")
    with pytest.raises(DataValidationError, match="'win'"):
        prediction_powered_ranksets(table.replace({"outcome": {"left": "win"}}), judge="llm")
    with pytest.raises(ValueError, match="alpha"):
        prediction_powered_ranksets(table, judge="llm", alpha=1.5)
    all_human = _table(n_battles=30, n_human=30)
    with pytest.raises(ValueError, match="N = 0"):
        prediction_powered_ranksets(all_human, judge="llm", lam=0.5)
    assert (prediction_powered_ranksets(all_human, judge="llm")["lambda"] == 0).all()
