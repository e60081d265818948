"""TemperatureScaling: MAP with flat priors against independent scipy fits of the same NLL."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, special

from bayesjudge import DataValidationError, PreferenceDistribution, Prior, alignment_error
from bayesjudge.datasets.simulate_autorater import simulate_autorater
from bayesjudge.engine import ConvergenceWarning
from bayesjudge.models.preference.temperature import TemperatureScaling

NUTS = {"method": "nuts", "chains": 2, "draws": 300, "tune": 300}


@pytest.fixture(scope="module")
def sim():
    return simulate_autorater(250, 3, population_mean=0.55, concentration=3.0,
                              temperature=2.5, bias=0.4, noise_sd=0.3, swapped=True,
                              random_seed=21)


def _hard_labels(sim, seed=0):
    """One annotator's label per item (1 = B better), ties impossible here."""
    first = sim.annotations.groupby("item", sort=False).first().reset_index()
    return pd.DataFrame({"item": first["item"], "label": (first["label"] == "B").astype(int)})


def _counts(sim):
    k = sim.annotations.assign(b=sim.annotations["label"].eq("B")).groupby("item", sort=False)
    return k["b"].sum().to_numpy(float), k["b"].size().to_numpy(float)


def _scipy_fit(x, s, n, bias: bool):
    """Binomial NLL of sigmoid((x - b)/T) in (log T, b), minimised by scipy (reference)."""

    def nll(theta):
        z = (x - (theta[1] if bias else 0.0)) * np.exp(-theta[0])
        return np.sum(s * np.logaddexp(0, -z) + (n - s) * np.logaddexp(0, z))

    res = optimize.minimize(nll, np.zeros(2 if bias else 1), method="BFGS",
                            options={"gtol": 1e-10})
    return np.exp(res.x[0]), (res.x[1] if bias else 0.0)


@pytest.mark.parametrize("bias", [False, True])
def test_hard_label_map_is_the_nll_fit(sim, bias):
    labels = _hard_labels(sim)
    outputs = sim.outputs[["item", "prob"]]
    fit = TemperatureScaling(bias=bias, priors="flat").fit(outputs, labels)
    x = special.logit(outputs["prob"].to_numpy())
    t_ref, b_ref = _scipy_fit(x, labels["label"].to_numpy(float), np.ones(len(x)), bias)
    np.testing.assert_allclose(fit.map_["temperature"], t_ref, rtol=1e-6)
    if bias:
        np.testing.assert_allclose(fit.map_["bias"], b_ref, atol=1e-6)


def test_hard_labels_as_a_b_and_tie_read_as_the_command_line_reads_them(sim):
    """item,label with A / B (the CLI's --labels file) is the 0 / 1 fit; a tie-labelled
    item is left out with a warning, as tie annotations are."""
    labels = _hard_labels(sim)
    outputs = sim.outputs[["item", "prob"]]
    ref = TemperatureScaling(priors="flat").fit(outputs, labels).map_["temperature"]
    letters = labels.assign(label=labels["label"].map({0: "a", 1: " B "}))
    fit = TemperatureScaling(priors="flat").fit(outputs, letters)
    np.testing.assert_allclose(fit.map_["temperature"], ref, rtol=1e-9)
    tied = letters.assign(label=letters["label"].where(letters.index != 0, "tie"))
    with pytest.warns(UserWarning, match="1 judged item\\(s\\) have only tie"):
        left_out = TemperatureScaling(priors="flat").fit(outputs, tied)
    without = TemperatureScaling(priors="flat").fit(outputs.iloc[1:], labels.iloc[1:])
    np.testing.assert_allclose(left_out.map_["temperature"], without.map_["temperature"],
                               rtol=1e-9)
    with pytest.raises(DataValidationError, match="labels has no annotator column but "
                                                  "repeats an item"):
        TemperatureScaling().fit(outputs, pd.concat([letters, letters.iloc[:1]]))


@pytest.mark.parametrize("bias", [False, True])
def test_annotation_count_map_is_the_binomial_fit(sim, bias):
    outputs = sim.outputs[["item", "prob"]]
    fit = TemperatureScaling(bias=bias, priors="flat").fit(outputs, sim.annotations)
    s, n = _counts(sim)
    t_ref, b_ref = _scipy_fit(special.logit(outputs["prob"].to_numpy()), s, n, bias)
    np.testing.assert_allclose(fit.map_["temperature"], t_ref, rtol=1e-6)
    if bias:
        np.testing.assert_allclose(fit.map_["bias"], b_ref, atol=1e-6)


def test_swap_aware_fit_is_the_joint_binomial_fit(sim):
    fit = TemperatureScaling(bias=True, priors="flat").fit(sim.outputs, sim.annotations)
    s, n = _counts(sim)
    x = special.logit(sim.outputs["prob"].to_numpy())
    xs = special.logit(sim.outputs["prob_swapped"].to_numpy())
    # the swapped prompt's P(A better) is calibrated against the A count n - s
    t_ref, b_ref = _scipy_fit(np.r_[x, xs], np.r_[s, n - s], np.r_[n, n], True)
    np.testing.assert_allclose(fit.map_["temperature"], t_ref, rtol=1e-6)
    np.testing.assert_allclose(fit.map_["bias"], b_ref, atol=1e-6)
    # the swap identifies the positional bias (truth 0.4, with logit noise 0.3)
    assert 0.2 < float(fit.map_["bias"]) < 0.6


def test_one_order_rows_use_only_their_original(sim):
    out = sim.outputs.copy()
    out.loc[out.index[::2], "prob_swapped"] = np.nan
    fit = TemperatureScaling(bias=True, priors="flat").fit(out, sim.annotations)
    s, n = _counts(sim)
    has = out["prob_swapped"].notna().to_numpy()
    x = special.logit(out["prob"].to_numpy())
    xs = special.logit(out["prob_swapped"].to_numpy()[has])
    t_ref, _ = _scipy_fit(np.r_[x, xs], np.r_[s, (n - s)[has]], np.r_[n, n[has]], True)
    np.testing.assert_allclose(fit.map_["temperature"], t_ref, rtol=1e-6)
    pred = fit.predict(out)
    assert pred["prob_swapped_calibrated"].isna().sum() == (~has).sum()


def test_transform_and_predict_apply_the_map(sim):
    fit = TemperatureScaling(bias=True).fit(sim.outputs, sim.annotations)
    t, b = float(fit.map_["temperature"]), float(fit.map_["bias"])
    p = np.array([0.01, 0.3, 0.5, 0.97])
    np.testing.assert_allclose(fit.transform(p), special.expit((special.logit(p) - b) / t))
    rev = sim.outputs.iloc[::-1]
    pred = fit.predict(rev)
    assert pred["item"].tolist() == rev["item"].tolist()
    np.testing.assert_allclose(pred["prob_calibrated"], fit.transform(rev["prob"]))
    np.testing.assert_allclose(pred["prob_swapped_calibrated"],
                               special.expit((special.logit(rev["prob_swapped"]) - b) / t))
    with pytest.raises(DataValidationError, match="prob"):
        fit.transform([0.5, 1.5])


def test_nuts_intervals_from_the_draws(sim):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit = TemperatureScaling(bias=True, random_seed=4).fit(sim.outputs, sim.annotations,
                                                               **NUTS)
    pred = fit.predict(sim.outputs.head(5), ci_prob=0.9)
    post = fit.idata_["posterior"].to_dataset()
    t = post["temperature"].values.ravel()
    b = post["bias"].values.ravel()
    draws = special.expit((special.logit(sim.outputs["prob"].iloc[2]) - b) / t)
    row = pred.iloc[2]
    assert np.isclose(row["prob_calibrated"], draws.mean())
    assert np.isclose(row["prob_calibrated_lower"], np.quantile(draws, 0.05))
    assert np.isclose(row["prob_calibrated_upper"], np.quantile(draws, 0.95))
    summary = fit.summarize()
    assert set(summary.index) == {"temperature", "bias"}


def test_bad_calibration_inputs_raise(sim):
    outputs = sim.outputs[["item", "prob"]]
    labels = _hard_labels(sim)
    with pytest.raises(DataValidationError, match="only one class"):
        TemperatureScaling().fit(outputs, labels.assign(label=1))
    with pytest.raises(DataValidationError, match="zero annotations"):
        TemperatureScaling().fit(pd.concat([outputs, pd.DataFrame({"item": ["new"],
                                                                   "prob": [0.5]})]), labels)
    with pytest.raises(DataValidationError, match="labels.label"):
        TemperatureScaling().fit(outputs, labels.assign(label=2))
    two = pd.concat([outputs.assign(judge="g"), outputs.assign(judge="h")])
    with pytest.raises(DataValidationError, match="one TemperatureScaling per judge"):
        TemperatureScaling().fit(two, labels)
    with pytest.raises(ValueError, match="bias must be"):
        TemperatureScaling(bias="yes").fit(outputs, labels)


def _rounded_judge(n_items=1500, temperature=2.0, share=0.3, seed=7):
    """Hard labels of a judge with logit = T logit p* (so the true map is T), and its
    outputs of the largest |logit| (a share of them) rounded to exact 0 / 1, as a
    log-probability judge reports them."""
    rng = np.random.default_rng(seed)
    p_star = rng.beta(2, 2, size=n_items)
    logit = temperature * special.logit(p_star)
    prob = special.expit(logit)
    rounded = np.abs(logit) >= np.quantile(np.abs(logit), 1 - share)
    prob[rounded] = (logit[rounded] > 0).astype(float)
    items = [f"q{i:04d}" for i in range(n_items)]
    labels = (rng.random(n_items) < p_star).astype(int)
    return (pd.DataFrame({"item": items, "prob": prob}),
            pd.DataFrame({"item": items, "label": labels}), p_star, rounded)


def test_certainties_are_their_own_category_and_leave_the_temperature_alone():
    outputs, labels, p_star, rounded = _rounded_judge()
    assert abs(rounded.mean() - 0.3) < 0.01
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit = TemperatureScaling(random_seed=1).fit(outputs, labels, **NUTS)
    summary = fit.summarize()
    lo, hi = summary.loc["temperature", ["eti95_lb", "eti95_ub"]]
    assert lo < 2.0 < hi  # clipped at 1e-4 / 1e-6 / 1e-12 (before): T 4.3, 6.6, 13.8
    # T and b are fitted on the finite outputs alone: the scipy NLL fit of those rows
    finite = ~rounded
    flat = TemperatureScaling(priors="flat").fit(outputs, labels)
    t_ref, _ = _scipy_fit(special.logit(outputs["prob"].to_numpy()[finite]),
                          labels["label"].to_numpy(float)[finite], np.ones(finite.sum()), False)
    np.testing.assert_allclose(flat.map_["temperature"], t_ref, rtol=1e-6)
    # the certainty of 1: exact Beta(1 + s, 1 + n - s) posterior (conjugate)
    ones = outputs["prob"].to_numpy() == 1
    s, n = labels["label"].to_numpy()[ones].sum(), ones.sum()
    assert set(summary.index) == {"temperature", "calibrated_one", "calibrated_zero"}
    np.testing.assert_allclose(flat.map_["calibrated_one"], s / n, rtol=1e-12)  # the MLE
    draws = fit.idata_["posterior"]["calibrated_one"].values.ravel()
    sd = np.sqrt((1 + s) * (1 + n - s) / (2 + n) ** 2 / (3 + n))
    assert abs(draws.mean() - (1 + s) / (2 + n)) < 5 * sd / np.sqrt(draws.size)
    pred = fit.predict(outputs.iloc[np.flatnonzero(ones)[:2]])
    np.testing.assert_allclose(pred["prob_calibrated"], draws.mean(), rtol=1e-12)
    assert np.isfinite(fit.idata_["log_likelihood"]["successes"].values).all()


def test_a_map_fit_calibrates_a_certainty_at_its_posterior_mean_not_its_mode():
    """Three exact-1 outputs, all wrong: the Beta(1, 4) mode is 0 (a calibrated probability
    of 0, infinite log loss), its mean 1/5 is the predictive P(event | output 1)."""
    rng = np.random.default_rng(0)
    p = rng.uniform(0.05, 0.95, 60).round(3)
    outputs = pd.DataFrame({"item": [f"i{k}" for k in range(60)] + ["one"],
                            "prob": list(p) + [1.0]})
    labels = pd.DataFrame({"item": list(outputs["item"][:60]) + ["one"] * 3,
                           "annotator": [f"a{k}" for k in range(60)] + ["x", "y", "z"],
                           "label": ["B" if rng.random() < q else "A" for q in p] + ["A"] * 3})
    fit = TemperatureScaling().fit(outputs, labels)
    assert fit.map_["calibrated_one"] == 0.0  # the mode, as summarize() reports it
    pred = fit.predict(outputs.tail(1))
    np.testing.assert_allclose(pred["prob_calibrated"], 1 / 5, rtol=1e-12)
    with pytest.warns(UserWarning, match="saw no such output"):  # no exact 0 in the fit
        np.testing.assert_allclose(fit.transform(np.array([1.0, 0.0])), [0.2, 0.5], rtol=1e-12)


def test_predict_keeps_repeated_rows_and_fit_refuses_them(sim):
    """predict maps each row: an item twice is two rows out (every row in, a row out); the
    fit matches outputs to labels by item, so there a repeated item is an error."""
    outputs = sim.outputs[["item", "prob"]]
    fit = TemperatureScaling().fit(outputs, sim.annotations)
    twice = pd.concat([outputs.iloc[:3], outputs.iloc[[1]]]).set_axis(["a", "b", "c", "d"])
    pred = fit.predict(twice)
    assert list(pred.index) == ["a", "b", "c", "d"]
    assert list(pred["item"]) == list(twice["item"])
    assert pred["prob_calibrated"].iloc[3] == pred["prob_calibrated"].iloc[1]
    np.testing.assert_allclose(pred["prob_calibrated"], fit.transform(twice["prob"].to_numpy()))
    with pytest.raises(DataValidationError, match="duplicated"):
        TemperatureScaling().fit(pd.concat([outputs, outputs.iloc[[0]]]), sim.annotations)


def test_certainties_unseen_in_the_fit_get_their_prior(sim):
    fit = TemperatureScaling().fit(sim.outputs[["item", "prob"]], sim.annotations)
    assert "calibrated_one" not in fit.summarize().index
    with pytest.warns(UserWarning, match="saw no such output"):
        out = fit.transform(np.array([0.0, 1.0, 0.5]))
    np.testing.assert_allclose(out, [0.5, 0.5, 0.5])  # Beta(1, 1) mean; logit 0.5 = 0


def test_only_certainties_only_ties_and_a_non_beta_prior(sim):
    outputs = sim.outputs[["item", "prob"]].assign(prob=lambda d: (d["prob"] > 0.5) * 1.0)
    with pytest.raises(DataValidationError, match="exactly 0 or 1"):
        TemperatureScaling().fit(outputs, sim.annotations)
    verdicts = outputs.assign(prob=np.where(np.arange(len(outputs)) % 5 == 0, 0.5,
                                            outputs["prob"]))  # hard verdicts with ties
    assert set(verdicts["prob"]) == {0.0, 0.5, 1.0}
    with pytest.raises(DataValidationError, match="no information on T"):
        TemperatureScaling(priors="flat").fit(verdicts, sim.annotations)
    with pytest.warns(UserWarning, match="its posterior is its prior"):
        TemperatureScaling().fit(verdicts, sim.annotations)
    outputs = sim.outputs[["item", "prob"]].copy()
    outputs.loc[outputs.index[:3], "prob"] = [0.0, 1.0, 0.5]
    with pytest.raises(ValueError, match="must be Prior\\('Beta'"):
        TemperatureScaling(priors={"calibrated_one": Prior("Uniform", lower=0, upper=1)}).fit(
            outputs, sim.annotations)


def test_refits_reuse_the_compiled_engine(sim):
    from bayesjudge.engine import compiled

    labels = _hard_labels(sim)
    outputs = sim.outputs[["item", "prob"]]
    TemperatureScaling(priors="flat").fit(outputs, labels)
    n_engines = len(compiled._ENGINES)
    for k in range(3):
        half = outputs.iloc[k::3]
        TemperatureScaling(priors="flat").fit(half, labels)
    assert len(compiled._ENGINES) == n_engines


def test_a_temperature_belongs_to_its_judge(sim, tmp_path):
    """predict refuses another judge's outputs, or several judges', naming them (it mapped
    them through the fitted judge's temperature without a word), also after save / load;
    alignment_error refuses several judges (it pooled them, counting each item twice)."""
    outputs = sim.outputs.assign(judge="judge-a")
    fit = TemperatureScaling().fit(outputs, sim.annotations)
    assert fit.predict(outputs)["judge"].eq("judge-a").all()
    other = outputs.assign(judge="judge-b")
    both = pd.concat([outputs.head(3), other.head(3)], ignore_index=True)
    for table, shown in ((other, "['judge-b']"), (both, "['judge-a', 'judge-b']")):
        with pytest.raises(DataValidationError, match=rf"outputs.judge holds {re.escape(shown)}"
                           r", but this temperature was fitted on judge 'judge-a'"):
            fit.predict(table)
    fit.save(tmp_path / "t.nc")
    with pytest.raises(DataValidationError, match="fitted on judge 'judge-a'"):
        TemperatureScaling.load(tmp_path / "t.nc").predict(other)
    anonymous = TemperatureScaling().fit(sim.outputs, sim.annotations)  # no judge column
    assert len(anonymous.predict(other)) == len(other)
    with pytest.raises(DataValidationError, match="fitted on one judge"):
        anonymous.predict(both)
    population = PreferenceDistribution().fit(sim.annotations)
    with pytest.raises(DataValidationError, match=r"judge_prob.judge holds 2 judges"):
        alignment_error(both[["item", "prob", "judge"]], population)
    with pytest.warns(UserWarning, match="1 item\\(s\\); its interval"):
        one = alignment_error(outputs[["item", "prob"]].head(1), population)
    assert one["alignment_error_lower"] == -np.inf


def test_pointwise_log_likelihood_is_the_binomial_pmf_per_item(sim):
    """The LOO units: per draw and item, scipy's binom.logpmf(k_B, k_A + k_B,
    sigmoid((logit p - b) / T)) with the counts from the annotations by hand (ties left
    out), the constant log C(n, k) included, so elpd is comparable across models."""
    from scipy import stats

    outputs = sim.outputs[["item", "prob"]]
    fit = TemperatureScaling(bias=True, random_seed=2).fit(outputs, sim.annotations)
    ll = fit.idata_["log_likelihood"]["successes"].values.reshape(-1, len(outputs))
    post = fit.idata_["posterior"]
    t = post["temperature"].values.reshape(-1, 1)
    b = post["bias"].values.reshape(-1, 1)
    ann = sim.annotations
    k_b = ann[ann["label"] == "B"].groupby("item").size().reindex(outputs["item"], fill_value=0)
    k_a = ann[ann["label"] == "A"].groupby("item").size().reindex(outputs["item"], fill_value=0)
    n = (k_a + k_b).to_numpy()
    assert n.max() >= 2 and (k_b.to_numpy() % n > 0).any()  # log C(n, k) is not 0 everywhere
    p = special.expit((special.logit(outputs["prob"].to_numpy())[None] - b) / t)
    want = stats.binom.logpmf(k_b.to_numpy()[None], n[None], p)
    np.testing.assert_allclose(ll, want, rtol=1e-9, atol=1e-12)
