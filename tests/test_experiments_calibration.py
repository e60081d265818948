"""Calibration-split protocol and leave-one-rater-out.

Section 5 of Dadkhahi, Trabelsi, Riley, Juraska, Mirzazadeh et al. (2025),
"Distribution-Calibrated Inference Time Compute for Thinking LLM-as-a-Judge",
arXiv:2512.03019.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import bayesjudge.engine.compiled as inference
from bayesjudge import DataValidationError, DavidsonAggregator
from bayesjudge.baselines import ci_self_consistency, majority_vote, rounded_median
from bayesjudge.data import validate_labels, validate_votes
from bayesjudge.datasets import simulate_davidson_votes
from bayesjudge.engine import FitError
from bayesjudge.experiments import (
    calibration_splits,
    leave_one_rater_out,
    rounded_median_from_counts,
    split_protocol,
)
from bayesjudge.experiments.calibration.leave_one_out import _loo_gold


@pytest.fixture(scope="module")
def simulated():
    # Labels are drawn from the Davidson model given the votes, so its Bayes
    # action is the optimal decision and must beat majority vote on MAE.
    return simulate_davidson_votes(600, 12, beta=2.0, eta0=-0.5, random_seed=3)


@pytest.fixture(scope="module")
def protocol(simulated):
    votes, labels = simulated
    return split_protocol(votes, labels, n_splits=12, calibration_fraction=0.1,
                          random_seed=7, progressbar=False)


# --------------------------------------------------------------------------- splits


def test_splits_sizes_disjoint_and_cover():
    splits = calibration_splits(1000, 0.05, n_splits=20, random_seed=1)
    assert len(splits) == 20
    for cal, ev in splits:
        assert len(cal) == 50 and len(ev) == 950
        assert np.intersect1d(cal, ev).size == 0
        assert np.array_equal(np.union1d(cal, ev), np.arange(1000))
        assert np.all(np.diff(cal) > 0) and np.all(np.diff(ev) > 0)
    # splits differ from each other
    assert len({tuple(s.calibration) for s in splits}) == 20


def test_splits_reproducible_and_no_global_rng():
    np.random.seed(0)
    a = calibration_splits(300, 0.1, n_splits=5, random_seed=42)
    np.random.seed(123)
    b = calibration_splits(300, 0.1, n_splits=5, random_seed=42)
    c = calibration_splits(300, 0.1, n_splits=5, random_seed=43)
    assert all(np.array_equal(x.calibration, y.calibration) for x, y in zip(a, b))
    assert not all(np.array_equal(x.calibration, y.calibration) for x, y in zip(a, c))
    gen = calibration_splits(300, 0.1, n_splits=5, random_seed=np.random.default_rng(42))
    assert all(np.array_equal(x.calibration, y.calibration) for x, y in zip(a, gen))


@pytest.mark.parametrize("fraction", [0.0, 1.0, -0.1, 0.0001])
def test_splits_reject_bad_fraction(fraction):
    with pytest.raises(ValueError, match="calibration"):
        calibration_splits(100, fraction)


# --------------------------------------------------------------------------- protocol


def test_protocol_davidson_beats_majority_vote(protocol):
    s = protocol.summary
    assert list(s.index) == ["davidson", "majority_vote"]  # sorted by MAE
    assert s.loc["davidson", "mae_mean"] < s.loc["majority_vote", "mae_mean"] - 0.05
    # and significantly so: majority vote is outside the top cluster
    assert protocol.top_cluster_mae.members.to_dict() == {"davidson": True, "majority_vote": False}
    assert (protocol.mae["davidson"] < protocol.mae["majority_vote"]).all()


def test_protocol_uses_calibration_splits_and_scores_same_items(simulated, protocol):
    votes, labels = simulated
    splits = calibration_splits(600, 0.1, n_splits=12, random_seed=7)
    assert np.array_equal(protocol.calibration, np.stack([s.calibration for s in splits]))
    assert np.array_equal(protocol.evaluation, np.stack([s.evaluation for s in splits]))
    counts = validate_votes(votes)
    gold = validate_labels(labels)
    y = gold.values
    mv = majority_vote(*counts.counts.T, tie_break="tie")
    for s in (0, 5):
        cal, ev = protocol.calibration[s], protocol.evaluation[s]
        # majority vote scored on this split's evaluation items only
        np.testing.assert_array_equal(
            protocol.abs_error["majority_vote"][s], np.abs(mv[ev] - y[ev])
        )
        # Davidson: an independent refit on the calibration items reproduces the errors
        model = DavidsonAggregator().fit(votes.iloc[cal], labels.iloc[cal])
        dec = model.predict(votes.iloc[ev])["decision"].to_numpy()
        np.testing.assert_array_equal(protocol.abs_error["davidson"][s], np.abs(dec - y[ev]))
        assert protocol.parameters.loc[s, "margin_scale"] == pytest.approx(
            float(model.map_["margin_scale"]), rel=1e-6)
    for m in protocol.methods:
        assert protocol.abs_error[m].shape == protocol.evaluation.shape
        np.testing.assert_allclose(protocol.mae[m], protocol.abs_error[m].mean(axis=1))
        np.testing.assert_allclose(protocol.pairwise_accuracy[m], protocol.correct[m].mean(axis=1))


def test_summary_intervals(protocol):
    s = protocol.summary.loc["davidson"]
    x = protocol.mae["davidson"].to_numpy()
    se = x.std(ddof=1) / np.sqrt(len(x))
    assert s["mae_mean"] == pytest.approx(x.mean())
    assert s["mae_se_lower"] == pytest.approx(x.mean() - 1.96 * se)
    assert s["mae_se_upper"] == pytest.approx(x.mean() + 1.96 * se)
    assert s["mae_percentile_lower"] == pytest.approx(np.percentile(x, 2.5))
    assert s["mae_percentile_upper"] == pytest.approx(np.percentile(x, 97.5))
    # the interval of one split's score is wider than that of the mean
    percentile_width = s["mae_percentile_upper"] - s["mae_percentile_lower"]
    assert percentile_width > s["mae_se_upper"] - s["mae_se_lower"]
    assert protocol.n_failed == 0 and protocol.n_splits == 12
    assert "davidson" in repr(protocol)


def test_no_recompilation_across_splits(simulated, protocol):
    votes, labels = simulated
    built = []
    real_engine = inference.Engine

    class CountingEngine(real_engine):
        def __init__(self, model):
            built.append(1)
            super().__init__(model)

    n_before = len(inference._ENGINES)
    inference.Engine = CountingEngine
    try:
        res = split_protocol(votes, labels, n_splits=8, calibration_fraction=0.1,
                             random_seed=1, progressbar=False)
    finally:
        inference.Engine = real_engine
    assert built == [] and len(inference._ENGINES) == n_before  # the fixture's engine was reused
    assert res.n_splits == 8


def test_confidence_baselines_and_rounded_median():
    rng = np.random.default_rng(0)
    n_items = 300
    vote = rng.choice([-1, 0, 1], size=(n_items, 2), p=[0.4, 0.2, 0.4])
    label = np.where(rng.random(n_items) < 0.7, vote[:, 0], rng.choice([-1, 0, 1], n_items))
    votes = pd.DataFrame({
        "item": np.repeat(np.arange(n_items), 2),
        "vote": vote.ravel(),
        "confidence": rng.uniform(0.3, 1.0, 2 * n_items),
    })
    labels = pd.DataFrame({"item": np.arange(n_items), "label": label})
    res = split_protocol(votes, labels, n_splits=3, calibration_fraction=0.2, progressbar=False)
    assert res.methods == ["davidson", "majority_vote", "soft_sc", "ci_sc", "rounded_median"]
    ev = res.evaluation[1]
    ci = ci_self_consistency(votes).to_numpy()
    np.testing.assert_array_equal(res.abs_error["ci_sc"][1], np.abs(ci[ev] - label[ev]))
    rm = rounded_median(vote)
    np.testing.assert_array_equal(res.abs_error["rounded_median"][1], np.abs(rm[ev] - label[ev]))
    with pytest.raises(DataValidationError, match="confidence"):
        split_protocol(votes.drop(columns="confidence"), labels, methods=["davidson", "ci_sc"],
                       n_splits=2, progressbar=False)
    with pytest.raises(ValueError, match="unknown method"):
        split_protocol(votes, labels, methods=["davidson", "oracle"], n_splits=2, progressbar=False)


def test_rounded_median_from_counts_matches_baseline():
    rng = np.random.default_rng(1)
    for n in (1, 2, 3, 4, 7):
        votes = rng.choice([-1, 0, 1], size=(200, n))
        counts = np.stack([(votes == 1).sum(1), (votes == 0).sum(1), (votes == -1).sum(1)], 1)
        np.testing.assert_array_equal(rounded_median_from_counts(counts), rounded_median(votes))


# --------------------------------------------------------------------------- failures


def _rare_ties(n_items=200, seed=0):
    """Votes/labels where 5% of labels are ties, so small calibration sets often lack one."""
    votes, labels = simulate_davidson_votes(n_items, 6, beta=2.0, eta0=-2.0, random_seed=seed)
    return votes, labels


def test_failures_resampled_recorded_and_warned():
    votes, labels = _rare_ties()
    assert (labels.label == 0).sum() == 10
    with pytest.warns(UserWarning, match="redrawn"):
        res = split_protocol(votes, labels, n_splits=10, calibration_fraction=0.1,
                             random_seed=0, progressbar=False)
    assert res.n_failed > 0 and res.n_skipped == 0
    assert set(res.failures["error"]) == {"DataValidationError"}
    assert set(res.failures["action"]) == {"resampled"}
    assert res.n_splits == 10  # every split was scored, on a redrawn calibration set
    y = labels.label.to_numpy()
    for cal in res.calibration:
        assert set(y[cal]) == {-1, 0, 1}
    plain = calibration_splits(200, 0.1, n_splits=10, random_seed=0)
    redrawn = set(res.failures["split"])
    for s, split in enumerate(plain):
        assert np.array_equal(res.calibration[s], split.calibration) == (s not in redrawn)


def test_failures_skipped_recorded_and_warned():
    votes, labels = _rare_ties()
    with pytest.warns(UserWarning, match="left out"):
        res = split_protocol(votes, labels, n_splits=10, calibration_fraction=0.1,
                             random_seed=0, progressbar=False, on_failure="skip")
    assert res.n_skipped == res.n_failed > 0
    assert res.n_splits == 10 - res.n_skipped
    assert set(res.mae.index).isdisjoint(res.failures["split"])
    for m in res.methods:  # every method loses the same splits
        assert res.abs_error[m].shape[0] == res.n_splits


def test_systematic_failure_raises():
    votes, labels = _rare_ties()
    no_ties = labels.label != 0
    with pytest.raises(FitError, match="calibration"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        split_protocol(votes[no_ties.to_numpy()], labels[no_ties], n_splits=2,
                       max_resamples=2, progressbar=False)


# --------------------------------------------------------------------------- leave one rater out


def test_loo_gold_tie_rule():
    ratings = pd.DataFrame({
        "item":  [0, 0, 0, 1, 1, 1, 2, 2, 3, 3, 3, 4],
        "rater": ["a", "b", "c", "a", "b", "c", "a", "c", "a", "b", "c", "a"],
        "label": [1, 1, -1, 1, -1, 0, 0, 1, -1, -1, 0, 1],
    })
    gold = _loo_gold(ratings, "a", min_other_raters=1)
    # item 0: b, c = 1, -1 -> shared top -> 0; item 1: -1, 0 -> 0; item 2: only c = 1 -> 1;
    # item 3: -1, 0 -> 0; item 4: nobody else -> dropped
    assert gold.to_dict("list") == {
        "item": [0, 1, 2, 3], "label": [0, 0, 1, 0], "rater_label": [1, 1, 0, -1]
    }
    gold = _loo_gold(ratings, "c", min_other_raters=2)
    # item 0: a, b = 1, 1 -> 1; item 1: 1, -1 -> 0; item 3: -1, -1 -> -1; item 2 has 1 other
    assert gold.to_dict("list") == {
        "item": [0, 1, 3], "label": [1, 0, -1], "rater_label": [-1, 0, 0]
    }


def test_leave_one_rater_out_hand_computed():
    # 90 items with truth y (30 each of -1, 0, +1); the judge's 12 votes all equal y, so
    # every calibrated split decides every item correctly (PA 1). Raters a, b, c always
    # say y; rater d always says something else. Leaving a, b or c out, the others'
    # majority is y (2 of 3), so those raters score PA 1 and the judge cannot beat them
    # (Win? needs >); leaving d out, the gold is y and d scores 0.
    y = np.repeat([-1, 0, 1], 30)
    items = np.arange(90)
    votes = pd.DataFrame({"item": items, "n_pos": 12 * (y == 1), "n_tie": 12 * (y == 0),
                          "n_neg": 12 * (y == -1)})
    wrong = np.where(y == 1, -1, 1)
    ratings = pd.concat(
        [pd.DataFrame({"item": items, "rater": r, "label": y}) for r in "abc"]
        + [pd.DataFrame({"item": items, "rater": "d", "label": wrong})],
        ignore_index=True,
    )
    out = leave_one_rater_out(votes, ratings, calibration_fraction=0.3, n_splits=4,
                              random_seed=0, progressbar=False)
    assert list(out.index) == ["a", "b", "c", "d"]
    assert out["n_items"].tolist() == [90] * 4 and out["n_evaluation"].tolist() == [63] * 4
    np.testing.assert_allclose(out["human_pa"], [1, 1, 1, 0])
    np.testing.assert_allclose(out["davidson_pa"], 1.0)
    np.testing.assert_allclose(out["majority_vote_pa"], 1.0)
    assert out["win"].tolist() == [False, False, False, True]
    assert out.attrs["wins"] == "1/4"
    assert (out["n_failed_fits"] == 0).all()


def test_leave_one_rater_out_validates():
    ratings = pd.DataFrame({"item": [0, 0], "rater": ["a", "a"], "label": [1, 1]})
    votes = pd.DataFrame({"item": [0], "n_pos": [1], "n_tie": [0], "n_neg": [0]})
    with pytest.raises(DataValidationError, match="duplicated"):
        leave_one_rater_out(votes, ratings, progressbar=False)
    with pytest.raises(DataValidationError, match="label"):
        bad_label = ratings.assign(label=[3, 1], rater=["a", "b"])
        leave_one_rater_out(votes, bad_label, progressbar=False)


@pytest.mark.slow
def test_joblib_executor_matches_in_process(simulated, protocol):
    votes, labels = simulated
    res = split_protocol(votes, labels, n_splits=12, calibration_fraction=0.1,
                         random_seed=7, progressbar=False, executor="joblib")
    pd.testing.assert_frame_equal(res.mae, protocol.mae)
    np.testing.assert_array_equal(res.evaluation, protocol.evaluation)


def test_unique_rows_matches_numpy():
    # DavidsonAggregator._prepare collapses count rows with this fast path (see
    # benchmarks/README.md); it must give np.unique(axis=0)'s patterns and inverse.
    from bayesjudge.models.davidson.aggregator import _unique_rows

    rng = np.random.default_rng(3)
    for n_votes in (1, 2, 12, 500):
        counts = rng.multinomial(n_votes, [0.4, 0.2, 0.4], size=300)
        patterns, inverse = _unique_rows(counts)
        ref_patterns, ref_inverse = np.unique(counts, axis=0, return_inverse=True)
        np.testing.assert_array_equal(patterns, ref_patterns)
        np.testing.assert_array_equal(inverse, ref_inverse.ravel())
        np.testing.assert_array_equal(patterns[inverse], counts)
