"""PandaLM / WMT23 preference tables, the autorater simulator, and recovery studies (slow)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import special
from stochastic import within_posterior

from bayesjudge.data import validate_annotations, validate_judge_outputs
from bayesjudge.datasets import (
    load_pandalm,
    pandalm_annotations,
    pandalm_judge_outputs,
    simulate_autorater,
    wmt23_annotations,
)
from bayesjudge.engine import ConvergenceWarning
from bayesjudge.models.preference import PreferenceDistribution, TemperatureScaling
from bayesjudge.models.preference.alignment import alignment_error


@pytest.fixture(scope="module")
def pandalm():
    return load_pandalm()


# ------------------------------------------------------------------ PandaLM
def test_pandalm_annotations_shape_and_orientation(pandalm):
    ann = pandalm_annotations(pandalm)
    ac = validate_annotations(ann)
    assert len(ac) == 999 and (ac.m == 3).all() and len(ann) == 2997
    assert ac.items.tolist() == pandalm["item"].tolist()
    # A = response1 (+1 upstream code 1), B = response2: counts match the raw annotators
    raw = pandalm[["annotator_1", "annotator_2", "annotator_3"]].to_numpy(int)
    np.testing.assert_array_equal(ac.counts[:, 0], (raw == 1).sum(1))
    np.testing.assert_array_equal(ac.counts[:, 2], (raw == -1).sum(1))
    np.testing.assert_array_equal(ac.counts[:, 1], (raw == 0).sum(1))


def test_pandalm_judge_outputs_count_unparsable_verdicts(pandalm):
    with pytest.warns(UserWarning, match="gpt35: 25 of 999"):
        out = pandalm_judge_outputs(pandalm)
    assert out.attrs["n_unparsable"] == {"gpt35": 25, "pandalm7b": 0}
    assert len(out.attrs["unparsable_items"]["gpt35"]) == 25
    assert out.groupby("judge").size().to_dict() == {"gpt35": 974, "pandalm7b": 999}
    assert set(out["prob"]) == {0.0, 0.5, 1.0}
    validate_judge_outputs(out)
    row = out[(out.judge == "pandalm7b")].set_index("item")
    raw = pandalm.set_index("item")["pandalm7b"]
    assert (row["prob"] == raw.map({1: 0.0, -1: 1.0, 0: 0.5}).astype(float)).all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pandalm_judge_outputs(pandalm, unparsable="drop")


def test_hard_verdicts_cost_against_p_star(pandalm):
    """Section 2.2: degenerate 0/1 reports pay the full p*(1 - p*) against p*."""
    ann = pandalm_annotations(pandalm)
    fit = PreferenceDistribution().fit(ann)
    out = pandalm_judge_outputs(pandalm, unparsable="drop")
    for judge in ("gpt35", "pandalm7b"):
        res = alignment_error(out[out.judge == judge], fit)
        assert res["mse_p_hat"] > res["noise_floor"] > 0
        assert res["alignment_error_lower"] < res["alignment_error"] < res[
            "alignment_error_upper"]
        # a hard verdict stays far from p* (measured: 0.19 GPT-3.5, 0.22 PandaLM-7B, about
        # what the constant 0.5 scores), with an interval well away from 0
        assert 0.1 < res["alignment_error_lower"] and res["alignment_error_upper"] < 0.3


# ------------------------------------------------------------------ WMT23
def test_wmt23_annotations_three_raters_per_pair_and_segment():
    ann = wmt23_annotations()
    ac = validate_annotations(ann)
    assert len(ann) == 50_895 and len(ac) == 377 * 45 and (ac.m == 3).all()
    assert ac.has_ties
    first = ann.iloc[0]
    assert first["item"] == f"{first['segment']}|{first['system_a']}|{first['system_b']}"


# ------------------------------------------------------------------ simulator
def test_simulator_is_seeded_and_states_its_distortion():
    a = simulate_autorater(50, (1, 4), temperature=2.0, bias=0.7, swapped=True, random_seed=5)
    b = simulate_autorater(50, (1, 4), temperature=2.0, bias=0.7, swapped=True, random_seed=5)
    pd.testing.assert_frame_equal(a.annotations, b.annotations)
    pd.testing.assert_frame_equal(a.outputs, b.outputs)
    c = simulate_autorater(50, (1, 4), random_seed=6)
    assert not a.annotations.equals(c.annotations)
    q = a.p_star["p_b"].to_numpy()
    # inverse of TemperatureScaling's map: sigma((logit p - b)/T) = p*
    np.testing.assert_allclose(special.expit((special.logit(a.outputs["prob"]) - 0.7) / 2.0), q,
                               rtol=1e-9)
    np.testing.assert_allclose(
        special.expit((special.logit(a.outputs["prob_swapped"]) - 0.7) / 2.0), 1 - q, rtol=1e-9)
    # bias toward the second-shown response: symmetry deviation > 0 on every item
    assert ((a.outputs["prob"] + a.outputs["prob_swapped"] - 1) > 0).all()
    ac = validate_annotations(a.annotations)
    assert set(ac.m) <= {1, 2, 3, 4} and not ac.has_ties
    ties = simulate_autorater(200, 3, tie_mean=0.3, random_seed=1)
    assert validate_annotations(ties.annotations).has_ties
    with pytest.raises(ValueError, match="temperature > 0"):
        simulate_autorater(10, temperature=0)


# ------------------------------------------------------------------ recovery (slow)
def _nuts(model, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return model.fit(*args, method="nuts", chains=2, draws=500, tune=500, **kwargs)


@pytest.mark.slow
def test_preference_distribution_recovers_population_and_covers_p_star():
    sim = simulate_autorater(3000, (1, 5), population_mean=0.35, concentration=2.5,
                             random_seed=31)
    fit = _nuts(PreferenceDistribution(random_seed=1), sim.annotations)
    summary = fit.summarize()
    for name in ("population_mean", "concentration"):
        assert within_posterior(summary, name, sim.truth[name], n_checks=2), (
            name, summary.loc[name, ["mean", "sd"]].tolist(), sim.truth[name])
    pred = fit.predict()
    truth = sim.p_star["p_b"].to_numpy()
    inside = (pred["p_b_lower"] <= truth) & (truth <= pred["p_b_upper"])
    # 3000 items: binomial sd of the coverage ~0.004
    assert 0.93 < inside.mean() < 0.97, inside.mean()


@pytest.mark.slow
def test_preference_distribution_with_ties_recovers_tie_mean():
    sim = simulate_autorater(2000, 3, population_mean=0.6, concentration=4.0, tie_mean=0.2,
                             random_seed=32)
    fit = _nuts(PreferenceDistribution(random_seed=2), sim.annotations)
    summary = fit.summarize()
    for name in ("population_mean", "concentration", "tie_mean"):
        assert within_posterior(summary, name, sim.truth[name], n_checks=3), (
            name, summary.loc[name, ["mean", "sd"]].tolist(), sim.truth[name])
    pred = fit.predict()
    inside = ((pred["p_tie_lower"] <= sim.p_star["p_tie"])
              & (sim.p_star["p_tie"] <= pred["p_tie_upper"]))
    assert 0.92 < inside.mean() < 0.98, inside.mean()


@pytest.mark.slow
@pytest.mark.parametrize("swapped", [False, True])
def test_temperature_scaling_recovers_temperature_and_bias(swapped):
    sim = simulate_autorater(1500, 3, temperature=2.5, bias=0.5, swapped=swapped,
                             random_seed=33)
    fit = _nuts(TemperatureScaling(bias=True, random_seed=3), sim.outputs, sim.annotations)
    summary = fit.summarize()
    for name in ("temperature", "bias"):
        assert within_posterior(summary, name, sim.truth[name], n_checks=2), (
            name, summary.loc[name, ["mean", "sd"]].tolist(), sim.truth[name])
    pred = fit.predict(sim.outputs)
    truth = sim.p_star["p_b"].to_numpy()
    # calibrated to p*: the calibrated probability is p* up to the posterior spread
    assert np.mean(np.abs(pred["prob_calibrated"] - truth)) < 0.02
