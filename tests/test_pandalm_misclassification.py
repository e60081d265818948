"""The Section 8.2 protocol on PandaLM.

Shapes, naive bias vs its closed form, coverage bookkeeping.
"""

import warnings

import numpy as np
import pandas as pd
import pytest

from bayesjudge import Prior
from bayesjudge.data import DataValidationError, validate_judgment_counts
from bayesjudge.datasets import load_pandalm
from bayesjudge.engine import ConvergenceWarning
from bayesjudge.experiments.misclassification.pandalm import pandalm_misclassification_study
from bayesjudge.experiments.misclassification.pandalm_data import (
    pandalm_calibration_masks,
    pandalm_split_counts,
    pandalm_win_rate_truth,
    study_judgments,
)
from bayesjudge.experiments.misclassification.result import METHODS
from bayesjudge.models.misclassification.hierarchical import HierarchicalMisclassificationModel

N_SPLITS, N_HIER = 6, 2


@pytest.fixture(scope="module")
def pandalm():
    return load_pandalm()


@pytest.fixture(scope="module")
def study(pandalm):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return pandalm_misclassification_study(
            n_splits=N_SPLITS, hierarchical_splits=N_HIER, n_draws=1000, draws=200, tune=200,
            chains=2, data=pandalm, random_seed=3,
        )


@pytest.fixture(scope="module")
def closed_form(pandalm):
    """Closed-form methods only, many splits (vectorised, well under a second)."""
    return pandalm_misclassification_study(
        n_splits=1000, bayes=False, hierarchical_splits=0, data=pandalm, random_seed=4
    )


def _by_hand(pandalm: pd.DataFrame) -> pd.DataFrame:
    """Truth, q0, q1 per (judge, system) straight from the raw ternary columns."""
    rows = []
    for judge in ("gpt35", "pandalm7b"):
        ok = pandalm[pandalm[judge].notna()]
        for system in sorted(set(ok.model_1) | set(ok.model_2)):
            z, zh = [], []
            for side, sign in (("model_1", 1), ("model_2", -1)):
                part = ok[ok[side] == system]
                z += list(part["human_majority"].astype(int) == sign)
                zh += list(part[judge].astype(int) == sign)
            z, zh = np.array(z), np.array(zh)
            rows.append({"judge": judge, "system": system, "theta": z.mean(),
                         "q0": (~zh[~z]).mean(), "q1": zh[z].mean(), "n_items": z.size})
    return pd.DataFrame(rows)


def test_truth_table_matches_raw_data(pandalm):
    truth = pandalm_win_rate_truth(data=pandalm)
    ref = _by_hand(pandalm)
    np.testing.assert_array_equal(truth["n_items"], ref["n_items"])
    np.testing.assert_allclose(truth[["truth", "q0", "q1"]], ref[["theta", "q0", "q1"]], atol=1e-12)
    # Section 5.1: E[p] - theta = (1 - q0) - (2 - q0 - q1) theta, exactly on the full data
    np.testing.assert_allclose(
        truth["expected_naive_bias"], truth["judge_rate"] - truth["truth"], atol=1e-12
    )
    assert truth.query("judge == 'gpt35'")["n_items"].sum() == 2 * (999 - 25)  # 25 unparsable


def test_shapes_and_split_counts(study, pandalm):
    k = 5
    rep = study.replications
    per_method = rep.groupby(["judge", "method"]).size()
    for judge in ("gpt35", "pandalm7b"):
        for method in METHODS:
            expected = (N_HIER if method == "hierarchical" else N_SPLITS) * k
            assert per_method[(judge, method)] == expected
    assert len(study.counts) == 2 * N_SPLITS * k
    assert len(study.diagnostics) == 2 * N_HIER
    # every row of a system is either a test row or a calibration row
    c = study.counts.merge(study.truth[["judge", "system", "n_items"]], on=["judge", "system"])
    np.testing.assert_array_equal(c["n"] + c["m0"] + c["m1"], c["n_items"])
    # 10% of the 999 items calibrate; each item calibrates both of its systems
    pl = study.counts.query("judge == 'pandalm7b'").groupby("split")[["m0", "m1"]].sum().sum(axis=1)
    assert (pl == 2 * 100).all()


def test_split_counts_against_masks(pandalm):
    masks = pandalm_calibration_masks(len(pandalm), 3, 0.1, random_seed=0)
    assert masks.shape == (3, 999) and (masks.sum(axis=1) == 100).all()
    table = study_judgments("gpt35", pandalm)
    systems, counts = pandalm_split_counts(table, pandalm["item"].to_numpy(), masks)
    r, s = 2, systems.index("opt-7b")
    rows = table[table.system == "opt-7b"]
    cal = rows[rows["item"].isin(pandalm["item"][masks[r]])]
    test = rows[~rows["item"].isin(pandalm["item"][masks[r]])]
    assert counts["judged_pos"][r, s] == test["judge_label"].sum()
    assert counts["n"][r, s] == len(test)
    assert counts["tp"][r, s] == ((cal.human_label == 1) & (cal.judge_label == 1)).sum()
    assert counts["tn"][r, s] == ((cal.human_label == 0) & (cal.judge_label == 0)).sum()
    assert counts["m1"][r, s] == (cal.human_label == 1).sum()


def test_naive_bias_matches_closed_form_expectation(closed_form, pandalm):
    """Mean naive bias over splits ~ (1 - q0) - (2 - q0 - q1) theta, q's from the raw data."""
    ref = _by_hand(pandalm)
    expected = (1 - ref.q0) - (2 - ref.q0 - ref.q1) * ref.theta
    got = closed_form.summary().query("method == 'naive_wald'")
    np.testing.assert_array_equal(
        got[["judge", "system"]].to_numpy(), ref[["judge", "system"]].to_numpy()
    )
    # each split's test set is 90% of the rows: p_hat sd ~0.008, so its mean over 1000
    # splits ~0.0003
    np.testing.assert_allclose(got["bias"], expected, atol=0.002)


def test_adjusted_is_less_biased_than_naive_for_gpt35(closed_form):
    s = closed_form.summary().query("judge == 'gpt35'")
    naive = s.query("method == 'naive_wald'")["bias"].abs().mean()
    adjusted = s.query("method == 'lang_reiczigel'")["bias"].abs().mean()
    assert adjusted < naive
    assert naive > 0.02  # GPT-3.5 overstates the win rates of bloom-7b and opt-7b by 4-5 points


def test_coverage_and_same_splits_for_every_method(study):
    summary = study.summary()
    assert summary["coverage"].between(0, 1).all()
    assert (summary["mean_length"] > 0).all()
    assert set(summary["method"]) == set(METHODS)
    by_method = study.replications.groupby(["judge", "method"])["split"]
    splits = by_method.agg(lambda s: tuple(sorted(set(s))))
    for (judge, method), ids in splits.items():
        assert ids == tuple(range(N_HIER if method == "hierarchical" else N_SPLITS))
    common = study.summary(common_splits=True)
    assert (common["n_splits"] == N_HIER).all()
    # the truth is the same number for every method and split of a (judge, system)
    assert (study.replications.groupby(["judge", "system"])["truth"].nunique() == 1).all()
    # intervals are ordered where defined
    rep = study.replications.dropna()
    assert (rep["lower"] <= rep["upper"]).all()


def test_hierarchical_refit_sees_each_splits_counts(pandalm):
    """The study refits one compiled hierarchical model per split; each fit uses its own counts.

    The mirrored counts (judged_pos -> n - judged_pos) move every judged rate; the posterior
    mean of the judged rate p_k must follow the test counts of the fit (n ~ 360 per system).
    """
    masks = pandalm_calibration_masks(len(pandalm), 1, 0.1, random_seed=1)
    table = study_judgments("pandalm7b", pandalm)
    systems, c = pandalm_split_counts(table, pandalm["item"].to_numpy(), masks)
    base = {k: v[0] for k, v in c.items()}
    mirrored = {**base, "judged_pos": base["n"] - base["judged_pos"]}
    for counts in (base, mirrored):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model = HierarchicalMisclassificationModel(random_seed=0).fit(
                validate_judgment_counts(**counts, systems=systems),
                method="nuts", draws=200, tune=200, chains=2,
            )
        table = model.predict().query("quantity == 'judged_rate'").set_index("system")
        rate = table.loc[systems, "mean"]
        np.testing.assert_allclose(rate, counts["judged_pos"] / counts["n"], atol=0.04)


def test_argument_errors(pandalm):
    with pytest.raises(DataValidationError, match="judges"):
        pandalm_misclassification_study(judges=["gpt4"], data=pandalm)
    with pytest.raises(DataValidationError, match="calibration_fraction"):
        pandalm_misclassification_study(
            calibration_fraction=1.5, bayes=False, hierarchical_splits=0, data=pandalm
        )
    with pytest.raises(DataValidationError, match=r"alpha is 1 - level"):
        pandalm_misclassification_study(alpha=0.95, data=pandalm)
    with pytest.raises(DataValidationError, match=r"priors\['accuracy'\] must be a Beta prior"):
        pandalm_misclassification_study(priors={"accuracy": Prior("Normal", mu=0, sigma=1)},
                                        data=pandalm)
