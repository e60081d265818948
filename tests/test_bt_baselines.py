"""Tests for bayesjudge.baselines.ranking: Avg-Prob, temperature scaling (eqs. 6-7),
the ECE temperature of Temp-BT and human pairwise preferences (Qian, Sun, Gales &
Knill 2026, arXiv:2602.16610), against hand computations and closed forms."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit, logit

from bayesjudge.baselines import (
    avg_prob,
    ece_temperature,
    human_preferences,
    temperature_calibrate,
    temperature_scale,
)
from bayesjudge.data import DataValidationError
from bayesjudge.metrics import expected_calibration_error


# --------------------------------------------------------------------------- Avg-Prob
def test_avg_prob_by_hand():
    df = pd.DataFrame({
        "judge": ["j1", "j1", "j2", "j1"],
        "context": ["c", "c", "c", "d"],
        "left": ["a", "b", "a", "a"],
        "right": ["b", "c", "c", "b"],
        "prob": [0.8, 0.6, 0.3, 0.1],
    })
    out = avg_prob(df)  # jury: judges pooled
    got = {(r.context, r.item): (r.score, r.n) for r in out.itertuples()}
    assert got == {
        ("c", "a"): (pytest.approx((0.8 + 0.3) / 2), 2),
        ("c", "b"): (pytest.approx((0.2 + 0.6) / 2), 2),
        ("c", "c"): (pytest.approx((0.4 + 0.7) / 2), 2),
        ("d", "a"): (pytest.approx(0.1), 1),
        ("d", "b"): (pytest.approx(0.9), 1),
    }
    assert out[["context", "item"]].values.tolist() == [
        ["c", "a"], ["c", "b"], ["c", "c"], ["d", "a"], ["d", "b"]]
    per = avg_prob(df, per_judge=True).set_index(["context", "judge", "item"])["score"]
    assert per.loc[("c", "j1", "b")] == pytest.approx((0.2 + 0.6) / 2)
    assert per.loc[("c", "j2", "c")] == pytest.approx(0.7)


def test_avg_prob_equals_the_papers_formula_on_symmetrised_probabilities():
    rng = np.random.default_rng(0)
    items = list("abcde")
    p = rng.uniform(size=(5, 5))
    rows = [(items[i], items[j], p[i, j]) for i in range(5) for j in range(5) if i != j]
    df = pd.DataFrame(rows, columns=["left", "right", "prob"])
    sym = (p + 1 - p.T) / 2  # eq. 3
    w = [(sym[i].sum() - sym[i, i]) / 4 for i in range(5)]  # w_i = mean_j p'_ij
    np.testing.assert_allclose(avg_prob(df)["score"], w, rtol=1e-12)


def test_avg_prob_hard_outcomes_are_win_rates_with_half_ties():
    df = pd.DataFrame({"left": ["a", "a", "b"], "right": ["b", "c", "c"],
                       "outcome": ["left", "tie", "right"]})
    out = avg_prob(df).set_index("item")["score"]
    assert out.to_dict() == {"a": 0.75, "b": 0.0, "c": 0.75}
    # no judge column: one judge (bayesjudge.data.arena.ONE_JUDGE), as in every comparisons reader
    per_judge = avg_prob(df, per_judge=True)
    assert per_judge["judge"].unique().tolist() == ["(one judge)"]
    assert per_judge.set_index("item")["score"].to_dict() == out.to_dict()


# --------------------------------------------------------------------------- temperature
def test_temperature_scale_is_eq6_and_the_logit_identity_of_eq7():
    rng = np.random.default_rng(1)
    p = rng.uniform(0.001, 0.999, size=200)
    t = rng.uniform(0.1, 10, size=200)
    eq6 = p ** (1 / t) / (p ** (1 / t) + (1 - p) ** (1 / t))
    np.testing.assert_allclose(temperature_scale(p, t), eq6, rtol=1e-10)
    d = rng.normal(scale=3, size=200)  # p = sigma(s_i - s_j) -> sigma((s_i - s_j) / T)
    np.testing.assert_allclose(temperature_scale(expit(d), t), expit(d / t), rtol=1e-10)
    np.testing.assert_array_equal(temperature_scale([0.0, 0.5, 1.0], 3.0), [0.0, 0.5, 1.0])
    for bad_p, bad_t in (([1.2], 1.0), ([0.5], 0.0), ([0.5], -1.0), ([np.nan], 1.0)):
        with pytest.raises(DataValidationError):
            temperature_scale(bad_p, bad_t)


@pytest.mark.parametrize("t_true", [0.5, 2.5])
def test_ece_temperature_recovers_a_known_temperature(t_true):
    rng = np.random.default_rng(11)
    q = rng.uniform(0.02, 0.98, size=60_000)  # calibrated probabilities
    y = (rng.uniform(size=q.size) < q).astype(float)
    p = expit(logit(q) * t_true)  # a judge miscalibrated by temperature t_true
    t = ece_temperature(p, y)
    assert t == pytest.approx(t_true, rel=0.05)
    ece_at = expected_calibration_error(temperature_scale(p, t), y)
    assert ece_at <= expected_calibration_error(temperature_scale(p, t_true), y) + 1e-12
    assert ece_at < expected_calibration_error(p, y)


def test_ece_temperature_rejects_ties_and_bad_bounds():
    with pytest.raises(DataValidationError, match="ties"):
        ece_temperature([0.2, 0.7], [0.5, 1.0])
    with pytest.raises(DataValidationError, match="bounds"):
        ece_temperature([0.2, 0.7], [0.0, 1.0], bounds=(2.0, 1.0))


# --------------------------------------------------------------------------- human prefs
def test_human_preferences_from_scores():
    scores = pd.DataFrame({
        "context": ["c"] * 3 + ["d"] * 3,
        "aspect": "coh",
        "item": ["a", "b", "x", "a", "b", "x"],
        "score": [1.0, 2.0, 2.0 + 1e-12, 3.0, 1.0, 2.0],
    })
    both = human_preferences(scores)
    assert len(both) == 2 * 3 * 2  # N(N-1) ordered pairs per context
    assert (both["judge"] == "human").all()
    got = {(r.context, r.left, r.right): r.prob for r in both.itertuples()}
    assert got[("c", "b", "a")] == 1.0 and got[("c", "a", "b")] == 0.0
    assert got[("c", "b", "x")] == 0.5  # equal up to float noise
    assert got[("d", "a", "x")] == 1.0
    one = human_preferences(scores, orders="one", output="outcome")
    assert len(one) == 6
    pairs = set(zip(one.context, one.left, one.right))
    assert not any((c, b, a) in pairs for c, a, b in pairs)
    assert one.set_index(["context", "left", "right"]).loc[("d", "a", "b"), "outcome"] == "left"
    with pytest.raises(DataValidationError, match="unique"):
        human_preferences(pd.concat([scores, scores.iloc[:1]]))


def test_temperature_calibrate_recovers_each_judges_temperature():
    rng = np.random.default_rng(5)
    n, n_ctx = 12, 150
    items = [f"i{k}" for k in range(n)]
    pairs = pd.DataFrame(
        [(f"c{c}", a, b) for c in range(n_ctx) for a in items for b in items if a < b],
        columns=["context", "left", "right"])
    q = expit(rng.normal(scale=1.5, size=len(pairs)))  # calibrated P(left better)
    y = (rng.uniform(size=len(q)) < q).astype(float)
    y[:50] = 0.5  # human ties: not used to fit T
    human = pairs.assign(judge="human", prob=y)
    true = {"hot": 3.0, "cold": 0.4}  # judges miscalibrated by a known temperature
    comps = pd.concat([pairs.assign(judge=j, prob=expit(logit(q) * t)) for j, t in true.items()],
                      ignore_index=True).sample(frac=1.0, random_state=0)
    scaled, temps = temperature_calibrate(comps, human)
    assert set(temps.index) == set(true)
    for judge, t in true.items():
        assert temps.loc[judge] == pytest.approx(t, rel=0.1)
    assert scaled.index.equals(comps.index)
    np.testing.assert_allclose(
        scaled["prob"], temperature_scale(comps["prob"], comps["judge"].map(temps)))
    with pytest.raises(DataValidationError, match="strict human"):
        temperature_calibrate(comps, human.assign(prob=0.5))
