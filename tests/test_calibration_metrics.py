"""Metrics of probabilistic judges (Li, Li, Huang et al. 2025, arXiv:2510.00263, appendix C.1,
Section 5.2, appendix D.1) against hand computations written out below, a loop-based
reference ECE, scikit-learn's macro precision/recall/F1, and explicitly drawn bootstrap
resamples."""

from __future__ import annotations

import time
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bayesjudge.data import DataValidationError
from bayesjudge.metrics import (
    TABLE_METRICS,
    absolute_symmetry_deviation,
    agreement,
    bootstrap_interval,
    brier_score,
    compare_judges,
    expected_calibration_error,
    macro_prf,
    metric_table,
    mse_to_phat,
    predicted_label,
    predicted_win_rate,
    reference_labels,
    swap_consistency,
    symmetry_deviation,
)


# ------------------------------------------------------------------------ ECE
def reference_ece(p, y, k_bins, kind):
    """Loop over bins with the interval test written as in appendix C.1."""
    p, y = np.asarray(p, float), np.asarray(y, float)
    if kind == "confidence":
        conf = np.maximum(p, 1 - p)
        acc = np.array([0.5 if pi == 0.5 else float((pi > 0.5) == (yi == 1))
                        for pi, yi in zip(p, y)])
    else:
        conf, acc = p, y
    total = 0.0
    for k in range(1, k_bins + 1):
        inside = (conf > (k - 1) / k_bins) & (conf <= k / k_bins)
        if k == 1:
            inside |= conf == 0
        if inside.any():
            total += inside.sum() / len(p) * abs(acc[inside].mean() - conf[inside].mean())
    return total


def test_ece_hand_example_probability_kind():
    # bins: 0.0 and 0.1 -> bin 1 (0 goes in the first bin; 0.1 is its right edge);
    # 0.2, 0.2 -> bin 2; 0.7 -> bin 7.
    # bin 1: |(0+1) - (0+0.1)| = 0.9; bin 2: |(0+1) - 0.4| = 0.6; bin 7: |1 - 0.7| = 0.3
    # ECE = (0.9 + 0.6 + 0.3) / 5 = 0.36
    ece = expected_calibration_error([0.0, 0.1, 0.2, 0.2, 0.7], [0, 1, 0, 1, 1],
                                     kind="probability")
    assert ece == pytest.approx(0.36, abs=1e-12)


def test_ece_right_edge_belongs_to_the_lower_bin():
    # 0.1 in bin 1: |1 - 0.1| = 0.9; 0.15 in bin 2: |0 - 0.15| = 0.15 -> 1.05 / 2 = 0.525.
    # (0.1 in bin 2 would give |1 - 0.25| / 2 = 0.375.)
    ece = expected_calibration_error([0.1, 0.15], [1, 0], kind="probability")
    assert ece == pytest.approx(0.525, abs=1e-12)


def test_ece_hand_example_confidence_kind():
    # conf = 0.9, 0.8, 0.7, 0.5 in bins 9, 8, 7, 5; acc = 1, 0, 1, 0.5 (p = 0.5 is a coin flip)
    # ECE = (0.1 + 0.8 + 0.3 + 0) / 4 = 0.3
    ece = expected_calibration_error([0.9, 0.8, 0.3, 0.5], [1, 0, 0, 1])
    assert ece == pytest.approx(0.3, abs=1e-12)


@pytest.mark.parametrize("kind", ["confidence", "probability"])
@pytest.mark.parametrize("k_bins", [1, 4, 10, 15])
def test_ece_matches_loop_reference_with_values_on_every_edge(kind, k_bins):
    rng = np.random.default_rng(k_bins)
    edges = np.arange(0, k_bins + 1) / k_bins  # every edge k/K, 0 and 1 included
    p = np.concatenate([edges, rng.uniform(size=40), [0.5]])
    y = rng.integers(0, 2, size=p.size)
    got = expected_calibration_error(p, y, n_bins=k_bins, kind=kind)
    assert got == pytest.approx(reference_ece(p, y, k_bins, kind), abs=1e-12)


def test_ece_empty_bins_and_one_class_give_numbers_not_nan():
    p = np.array([0.05, 0.3, 0.95])
    # one class (all B): each bin's gap is sum(1 - p) / N; bins 2-9 mostly empty
    ece = expected_calibration_error(p, [1, 1, 1], kind="probability")
    assert ece == pytest.approx(np.mean(1 - p), abs=1e-12)
    assert np.isfinite(expected_calibration_error(p, [0, 0, 0]))
    # perfectly calibrated degenerate judge: ECE 0
    assert expected_calibration_error([0.0, 1.0], [0, 1]) == 0.0


def test_ece_confidence_kind_is_swap_symmetric():
    rng = np.random.default_rng(1)
    p = rng.integers(0, 65, size=200) / 64  # dyadic: 1 - p is exact
    y = rng.integers(0, 2, size=200)
    assert expected_calibration_error(p, y) == pytest.approx(
        expected_calibration_error(1 - p, 1 - y), abs=1e-12)


def test_metrics_are_batch_aware():
    rng = np.random.default_rng(2)
    p, y = rng.uniform(size=(3, 50)), rng.integers(0, 2, size=(3, 50))
    rows = expected_calibration_error(p, y)
    assert rows.shape == (3,)
    assert rows == pytest.approx([expected_calibration_error(p[i], y[i]) for i in range(3)])
    assert brier_score(p, y) == pytest.approx([brier_score(p[i], y[i]) for i in range(3)])
    labels = np.array(["A", "tie", "B"], dtype=object)
    a, b = labels[rng.integers(0, 3, (3, 50))], labels[rng.integers(0, 3, (3, 50))]
    prf = macro_prf(a, b)
    assert prf.f1 == pytest.approx([macro_prf(a[i], b[i]).f1 for i in range(3)])


def test_ece_and_brier_are_fast_on_a_million_predictions():
    rng = np.random.default_rng(3)
    p, y = rng.uniform(size=1_000_000), rng.integers(0, 2, size=1_000_000)
    start = time.perf_counter()
    expected_calibration_error(p, y)
    brier_score(p, y)
    mse_to_phat(p, p[::-1])
    # measured ~0.1 s on the 2-core CI box; the bound only catches a non-vectorised rewrite
    assert time.perf_counter() - start < 5.0


# ---------------------------------------------------------- Brier, MSE, labels
def test_brier_and_mse_hand_examples():
    # (0.1^2 + 0.2^2 + 0.6^2) / 3 = (0.01 + 0.04 + 0.36) / 3
    assert brier_score([0.9, 0.2, 0.6], [1, 0, 0]) == pytest.approx(0.41 / 3)
    assert brier_score([0.9, 0.2, 0.6], ["B", "A", "A"]) == pytest.approx(0.41 / 3)
    # ((0.5 - 2/3)^2 + (0.9 - 1/3)^2) / 2 = (1/36 + 0.321111...) / 2
    assert mse_to_phat([0.5, 0.9], [2 / 3, 1 / 3]) == pytest.approx(
        ((0.5 - 2 / 3) ** 2 + (0.9 - 1 / 3) ** 2) / 2)


def test_predicted_label_thresholds():
    assert predicted_label([0.0, 0.49, 0.5, 0.51, 1.0]).tolist() == ["A", "A", "tie", "B", "B"]
    assert predicted_label([0.45, 0.55, 0.56], tie_band=0.05).tolist() == ["tie", "tie", "B"]


@pytest.mark.parametrize("bad", [[0.5, np.nan], [0.5, 1.2], [-0.1], []])
def test_probabilities_are_validated(bad):
    with pytest.raises(DataValidationError, match="prob"):
        brier_score(bad, [1] * len(bad))


def test_labels_are_validated():
    with pytest.raises(DataValidationError, match="tie"):
        brier_score([0.5, 0.5], ["A", "tie"])
    with pytest.raises(DataValidationError, match="label"):
        expected_calibration_error([0.5], [2])
    with pytest.raises(DataValidationError, match="same items"):
        brier_score([0.5, 0.5], [1])
    with pytest.raises(DataValidationError, match="n_bins"):
        expected_calibration_error([0.5], [1], n_bins=0)
    with pytest.raises(DataValidationError, match="outside labels"):
        agreement(["A", "b"], ["A", "B"])


# ------------------------------------------------------ agreement, macro P/R/F1
def test_agreement_and_macro_prf_hand_example():
    pred = ["A", "A", "B", "B", "tie", "B"]
    true = ["A", "B", "B", "tie", "tie", "B"]
    # agreement: positions 0, 2, 4, 5 -> 4/6
    assert agreement(pred, true) == pytest.approx(4 / 6)
    # class A: TP 1, FP 1, FN 0 -> P 1/2, R 1,   F1 2/3
    # class tie: TP 1, FP 0, FN 1 -> P 1,   R 1/2, F1 2/3
    # class B: TP 2, FP 1, FN 1 -> P 2/3, R 2/3, F1 2/3
    prf = macro_prf(pred, true)
    assert prf.precision == pytest.approx((1 / 2 + 1 + 2 / 3) / 3)
    assert prf.recall == pytest.approx((1 + 1 / 2 + 2 / 3) / 3)
    assert prf.f1 == pytest.approx(2 / 3)


def test_macro_prf_zero_division_convention():
    # never predicts tie and tie never true: tie's P, R and F1 are 0/0 -> 0, still averaged
    prf = macro_prf(["A", "B"], ["A", "B"])
    assert tuple(prf) == pytest.approx((2 / 3, 2 / 3, 2 / 3))
    prf1 = macro_prf(["A", "B"], ["A", "B"], zero_division=1.0)
    assert tuple(prf1) == pytest.approx((1.0, 1.0, 1.0))


def test_macro_prf_matches_scikit_learn():
    from sklearn import metrics  # dev extra: a missing scikit-learn fails, never skips
    rng = np.random.default_rng(4)
    labels = np.array(["A", "tie", "B"], dtype=object)
    for _ in range(20):
        n = int(rng.integers(1, 30))
        pred = labels[rng.choice(3, n, p=[0.5, 0.1, 0.4])]
        true = labels[rng.choice(3, n, p=[0.4, 0.2, 0.4])]
        ref = metrics.precision_recall_fscore_support(
            true, pred, labels=list(labels), average="macro", zero_division=0)
        assert tuple(macro_prf(pred, true)) == pytest.approx(ref[:3], abs=1e-12)


# --------------------------------------------------------------- positional bias
def test_symmetry_deviation_and_consistency_hand_example():
    p_orig = [0.8, 0.7, 0.5, 0.3]  # P(B better), original order
    p_swap = [0.4, 0.6, 0.5, 0.9]  # P(A better), swapped prompt
    # Delta = 0.2, 0.3, 0.0, 0.2 ; E|Delta| = 0.7 / 4
    assert symmetry_deviation(p_orig, p_swap) == pytest.approx([0.2, 0.3, 0.0, 0.2])
    assert absolute_symmetry_deviation(p_orig, p_swap) == pytest.approx(0.175)
    # verdicts: B/B (0.4 < .5 -> B), B/A, tie/tie, A/A -> 3 of 4 consistent
    assert swap_consistency(p_orig, p_swap) == pytest.approx(0.75)
    # with a tie band of 0.15 (ties in [0.35, 0.65]): B/tie, B/tie, tie/tie, A/A -> 2 of 4
    assert swap_consistency(p_orig, p_swap, tie_band=0.15) == pytest.approx(0.5)
    assert swap_consistency([0.6], [0.6], tie_band=0.15) == 1.0  # tie and tie
    # deviations of both signs: the mean of |Delta|, not |mean Delta| (Section 5.2)
    assert absolute_symmetry_deviation([0.7, 0.2], [0.6, 0.6]) == pytest.approx(0.25)
    assert symmetry_deviation([0.7, 0.2], [0.6, 0.6]) == pytest.approx([0.3, -0.2])


def test_unbiased_judge_has_zero_deviation_and_full_consistency():
    p = np.array([0.1, 0.3, 0.9])
    assert absolute_symmetry_deviation(p, 1 - p) == pytest.approx(0.0)
    assert swap_consistency(p, 1 - p) == 1.0
    with pytest.raises(DataValidationError, match="original"):
        symmetry_deviation([0.5, 0.5], [0.5])


# ------------------------------------------------------------------- bootstrap
def test_bootstrap_uses_the_documented_resamples():
    p = np.array([0.9, 0.2, 0.6, 0.4, 0.7])
    y = np.array([1, 0, 1, 1, 0])
    ci = bootstrap_interval(brier_score, p, y, n_boot=50, ci_prob=0.8, random_seed=7)
    idx = np.random.default_rng(7).integers(0, 5, size=(50, 5))
    draws = [np.mean((y[i] - p[i]) ** 2) for i in idx]
    assert ci.estimate == pytest.approx(np.mean((y - p) ** 2))
    assert (ci.lower, ci.upper) == pytest.approx(tuple(np.quantile(draws, [0.1, 0.9])))
    loop = bootstrap_interval(brier_score, p, y, n_boot=50, ci_prob=0.8, random_seed=7,
                              batched=False)
    assert (loop.lower, loop.upper) == pytest.approx((ci.lower, ci.upper))


def test_compare_judges_uses_the_documented_paired_resamples():
    # the interval's level and the share of positive resamples, by hand: both judges are
    # scored on the same resampled items (the documented default_rng(seed).integers draws)
    p_a = np.array([0.9, 0.2, 0.6, 0.4, 0.7, 0.55])
    p_b = np.array([0.6, 0.5, 0.9, 0.1, 0.4, 0.5])
    y = np.array([1, 0, 1, 1, 0, 1])
    d = compare_judges(brier_score, p_a, p_b, y, n_boot=60, ci_prob=0.8, random_seed=3)
    idx = np.random.default_rng(3).integers(0, 6, size=(60, 6))
    draws = np.array([np.mean((y[i] - p_a[i]) ** 2) - np.mean((y[i] - p_b[i]) ** 2)
                      for i in idx])
    assert 0.2 < np.mean(draws > 0) < 0.8  # both signs occur: a sign slip would show
    assert d.estimate == pytest.approx(np.mean((y - p_a) ** 2) - np.mean((y - p_b) ** 2))
    assert (d.lower, d.upper) == pytest.approx(tuple(np.quantile(draws, [0.1, 0.9])))
    assert d.share_positive == pytest.approx(np.mean(draws > 0))


def test_bootstrap_width_matches_the_binomial_standard_error():
    y = np.random.default_rng(5).binomial(1, 0.3, size=400).astype(float)
    ci = bootstrap_interval(lambda x: np.mean(x, axis=-1), y, n_boot=2000)
    se = np.sqrt(y.mean() * (1 - y.mean()) / y.size)
    assert ci.upper - ci.lower == pytest.approx(2 * 1.96 * se, rel=0.15)


def test_compare_judges_is_paired():
    rng = np.random.default_rng(6)
    y = rng.integers(0, 2, size=300)
    a = np.clip(y * 0.6 + 0.2 + rng.normal(0, 0.1, 300), 0, 1)
    same = compare_judges(brier_score, a, a, y, n_boot=200)
    assert (same.estimate, same.lower, same.upper) == (0.0, 0.0, 0.0)
    b = np.clip(a + 0.05, 0, 1)
    d = compare_judges(brier_score, a, b, y, n_boot=400)
    assert d.estimate == pytest.approx(brier_score(a, y) - brier_score(b, y))
    # the paired interval is much narrower than the two separate intervals combined
    ia = bootstrap_interval(brier_score, a, y, n_boot=400)
    ib = bootstrap_interval(brier_score, b, y, n_boot=400)
    assert d.upper - d.lower < 0.5 * ((ia.upper - ia.lower) + (ib.upper - ib.lower))


def test_bootstrap_argument_checks():
    with pytest.raises(DataValidationError, match="ci_prob"):
        bootstrap_interval(brier_score, [0.5], [1], ci_prob=95)
    with pytest.raises(DataValidationError, match="n_boot"):
        bootstrap_interval(brier_score, [0.5], [1], n_boot=0)
    with pytest.raises(DataValidationError, match="one length"):
        bootstrap_interval(brier_score, [0.5, 0.5], [1])
    with pytest.raises(DataValidationError, match="batched=False"):
        bootstrap_interval(lambda p, y: float(np.mean(p)), [0.5, 0.4], [1, 0], n_boot=5)


# ----------------------------------------------------------------- metric table
def test_reference_labels_hand_example():
    p_hat, major = reference_labels(np.array([[0, 0, 3], [2, 0, 1], [1, 1, 1], [1, 2, 0]]))
    assert p_hat == pytest.approx([1.0, 1 / 3, 0.5, 1 / 3])
    assert major.tolist() == ["B", "A", "tie", "tie"]


@pytest.fixture(scope="module")
def tiny_study():
    # items: x (B B A), y (A A A), z (A tie B: majority tie), w (B B B)
    annotations = pd.DataFrame({
        "item": ["x"] * 3 + ["y"] * 3 + ["z"] * 3 + ["w"] * 3,
        "annotator": ["h1", "h2", "h3"] * 4,
        "label": ["B", "B", "A", "A", "A", "A", "A", "tie", "B", "B", "B", "B"],
    })
    outputs = pd.DataFrame({
        "judge": ["good"] * 4 + ["hard"] * 4,
        "item": ["x", "y", "z", "w"] * 2,
        "prob": [0.7, 0.2, 0.5, 0.9, 1.0, 0.0, 1.0, 1.0],
        "prob_swapped": [0.3, 0.8, 0.5, 0.2, 1.0, 1.0, 0.0, np.nan],
    })
    return outputs, annotations


def test_metric_table_hand_example(tiny_study):
    outputs, annotations = tiny_study
    table = metric_table(outputs, annotations, n_boot=200)
    assert table["judge"].unique().tolist() == ["good", "hard"]
    assert table["metric"].tolist()[:9] == list(TABLE_METRICS)
    good = table[table.judge == "good"].set_index("metric")["estimate"]
    # p_hat = 2/3, 0, 1/2, 1 ; squared errors (0.7-2/3)^2, 0.04, 0, 0.01
    assert good["mse"] == pytest.approx(((0.7 - 2 / 3) ** 2 + 0.04 + 0.01) / 4)
    assert good["agreement"] == 1.0 and good["f1"] == 1.0
    # calibration skips z (majority tie): p = 0.7, 0.2, 0.9 vs y = 1, 0, 1
    assert good["brier"] == pytest.approx((0.09 + 0.04 + 0.01) / 3)
    # conf 0.7, 0.8, 0.9, all correct: (0.3 + 0.2 + 0.1) / 3
    assert good["ece"] == pytest.approx(0.2)
    # Delta = 0, 0, 0, 0.1 ; verdicts agree on all four
    assert good["abs_symmetry_deviation"] == pytest.approx(0.025)
    assert good["consistency"] == 1.0
    hard = table[table.judge == "hard"].set_index("metric")
    # verdicts B, A, B, B vs majority B, A, tie, B: 3/4; w has no swapped output
    assert hard.loc["agreement", "estimate"] == pytest.approx(0.75)
    assert hard.loc["consistency", "n_items"] == 3
    assert hard.loc["ece", "n_items"] == 3
    # Delta = 1, 0, 0 -> 1/3; verdicts B/A (inconsistent), A/A, B/B -> 2/3
    assert hard.loc["abs_symmetry_deviation", "estimate"] == pytest.approx(1 / 3)
    assert hard.loc["consistency", "estimate"] == pytest.approx(2 / 3)
    assert (table.lower <= table.estimate + 1e-12).all()
    assert (table.estimate <= table.upper + 1e-12).all()


def test_metric_table_needs_annotations_for_every_item(tiny_study):
    outputs, annotations = tiny_study
    extra = pd.concat([outputs, pd.DataFrame({"judge": ["good"], "item": ["new"],
                                              "prob": [0.5]})])
    with pytest.raises(DataValidationError, match="zero annotations"):
        metric_table(extra, annotations, n_boot=10)


# ------------------------------------------------------------------- win rate
def test_predicted_win_rate_hand_example_and_orientation():
    prob = [0.6, 0.8, 0.3, 0.1, 0.7]
    human = [1.0, 2 / 3, 0.0, 1 / 3, 1.0]
    sys_a = ["g1", "g1", "g1.1", "g1", "x"]
    sys_b = ["g1.1", "g1.1", "g1", "g1.1", "y"]
    out = predicted_win_rate(prob, human, system_a=sys_a, system_b=sys_b, n_boot=200)
    assert out[["system_a", "system_b"]].values.tolist() == [["g1", "g1.1"], ["x", "y"]]
    first = out.iloc[0]
    # row 3 is (g1.1, g1): turned around to 0.7 (judge) and 1.0 (human)
    assert first["n_items"] == 4
    assert first["judge_win_rate"] == pytest.approx((0.6 + 0.8 + 0.7 + 0.1) / 4)
    assert first["human_win_rate"] == pytest.approx((1 + 2 / 3 + 1 + 1 / 3) / 4)
    assert first["difference"] == pytest.approx(2.2 / 4 - 3 / 4)
    # the intervals: the documented resamples of the pair's prompts (seed 0), paired for
    # the difference, 95% percentile limits
    p, h = np.array([0.6, 0.8, 0.7, 0.1]), np.array([1.0, 2 / 3, 1.0, 1 / 3])
    idx = np.random.default_rng(0).integers(0, 4, size=(200, 4))
    for col, draws in (("judge", p[idx].mean(1)), ("human", h[idx].mean(1)),
                       ("difference", p[idx].mean(1) - h[idx].mean(1))):
        assert (first[f"{col}_lower"], first[f"{col}_upper"]) == pytest.approx(
            tuple(np.quantile(draws, [0.025, 0.975])))


def test_metric_table_reproduces_pandalm_upstream_accuracy():
    """PandaLM-7B's hard verdicts as degenerate probabilities (A -> 0, tie -> 1/2, B -> 1):
    agreement with the human majority is upstream compute_metrics.py's accuracy, 0.6677."""
    from bayesjudge.datasets.pandalm import load_pandalm

    d = load_pandalm()
    name = {1: "A", -1: "B", 0: "tie"}
    annotations = pd.concat([
        pd.DataFrame({"item": d["item"], "annotator": f"h{k}",
                      "label": d[f"annotator_{k}"].map(name)}) for k in (1, 2, 3)])
    outputs = pd.DataFrame({"item": d["item"],
                            "prob": d["pandalm7b"].map({1: 0.0, -1: 1.0, 0: 0.5}).astype(float)})
    table = metric_table(outputs, annotations, n_boot=20).set_index("metric")
    assert round(table.loc["agreement", "estimate"], 4) == 0.6677
    assert table.loc["agreement", "n_items"] == 999


# ------------------------------------------------------------------ properties
@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.integers(0, 1)), min_size=1, max_size=40),
       st.integers(1, 20))
def test_ece_properties(pairs, k_bins):
    """ECE lies in [0, 1]; the probability form lies between |mean(y) - mean(p)| (equality
    for K = 1) and mean |y - p| (triangle inequality within and across bins)."""
    p = np.array([a for a, _ in pairs])
    y = np.array([b for _, b in pairs])
    for kind in ("confidence", "probability"):
        assert 0.0 <= expected_calibration_error(p, y, k_bins, kind=kind) <= 1.0
    ece = expected_calibration_error(p, y, k_bins, kind="probability")
    assert abs(y.mean() - p.mean()) - 1e-12 <= ece <= np.mean(np.abs(y - p)) + 1e-12
    assert expected_calibration_error(p, y, 1, kind="probability") == pytest.approx(
        abs(y.mean() - p.mean()), abs=1e-12)
    assert 0.0 <= brier_score(p, y) <= 1.0


def test_zero_width_bootstrap_intervals_are_flagged_once_per_table():
    """One item (or a metric constant on every item) gives an interval of zero width that
    measures nothing: bootstrap_interval, compare_judges, metric_table and
    predicted_win_rate say so, a table in one warning naming its rows."""
    outputs = pd.DataFrame({"item": ["q1"], "prob": [0.7]})
    labels = pd.DataFrame({"item": ["q1"], "label": ["B"]})
    with pytest.warns(UserWarning, match=r"7 bootstrap interval\(s\) have zero width "
                                         r"\('\(one judge\)' mse on 1 item, "
                                         r"'\(one judge\)' agreement") as rec:
        table = metric_table(outputs, labels)
    assert len([w for w in rec if "zero width" in str(w.message)]) == 1
    assert (table["lower"] == table["upper"]).all()
    with pytest.warns(UserWarning, match=r"zero width \(the metric on 3 items\)"):
        bootstrap_interval(brier_score, [1.0, 1.0, 1.0], [1, 1, 1])  # 0 on every resample
    with pytest.warns(UserWarning, match=r"zero width \(the difference on 2 items\)"):
        compare_judges(brier_score, [0.9, 0.2], [0.9, 0.2], [1, 0])
    with pytest.warns(UserWarning, match="'x' vs 'y' judge on 1 prompt"):
        predicted_win_rate([0.6], [1.0], system_a=["x"], system_b=["y"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # intervals of positive width: no warning
        bootstrap_interval(brier_score, [0.9, 0.2, 0.6, 0.4], [1, 0, 1, 1])
        metric_table(pd.DataFrame({"item": list("abcdef"), "prob": [.9, .2, .6, .4, .7, .1]}),
                     pd.DataFrame({"item": list("abcdef"), "label": list("BABBAA")}))
