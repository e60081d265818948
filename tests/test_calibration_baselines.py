"""Post-hoc correctors (contextual calibration, Zhao et al. 2021; batch calibration,
Zhou et al. 2024; as used by Li, Li, Huang et al. 2025, arXiv:2510.00263, Section 5.1):
the matrix form W p renormalised written out with numpy, and recovery of a known
miscalibration on simulated judges."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit, logit

from bayesjudge.baselines import BatchCalibration, ContextualCalibration
from bayesjudge.data import DataValidationError


def w_times_p(prob, class_prior):
    """diag(class_prior)^-1 (1 - p, p), renormalised; returns the B entry."""
    w = np.diag(1.0 / np.array([1 - class_prior, class_prior]))
    vec = w @ np.vstack([1 - np.asarray(prob), np.asarray(prob)])
    return vec[1] / vec.sum(axis=0)


def test_contextual_calibration_is_w_p_renormalised():
    probes = [0.8, 0.6]  # e.g. "N/A" and "" as both responses: mean q = 0.7
    cc = ContextualCalibration().fit(probes)
    assert cc.prior_ == pytest.approx(0.7)
    assert cc.weights_ == pytest.approx([1 / 0.3, 1 / 0.7])
    p = np.array([0.0, 0.1, 0.5, 0.7, 0.95, 1.0])
    assert cc.transform(p) == pytest.approx(w_times_p(p, 0.7))
    assert cc.transform([0.7]) == pytest.approx([0.5])  # the probe itself goes to 1/2


def test_contextual_calibration_recovers_a_logit_bias():
    """Judge: logit p = logit p* + beta; the content-free probe (p* = 1/2) reads sigmoid(beta)."""
    rng = np.random.default_rng(0)
    p_star = rng.beta(2, 2, size=1000)
    beta = 1.3
    judge = expit(logit(p_star) + beta)
    cc = ContextualCalibration().fit([expit(beta)])
    assert cc.transform(judge) == pytest.approx(p_star, abs=1e-9)


def test_batch_calibration_probability_space_is_division_by_the_batch_mean():
    p = np.array([0.6, 0.9, 0.7, 0.2, 0.85])
    bc = BatchCalibration().fit(p)
    assert bc.bias_ == pytest.approx(p.mean())
    assert bc.n_batch_ == 5
    assert bc.transform(p) == pytest.approx(w_times_p(p, p.mean()))
    assert BatchCalibration().fit_transform(p) == pytest.approx(bc.transform(p))


@pytest.fixture(scope="module")
def biased_judge():
    """p* with logits symmetric around 0 and a judge that adds a known bias beta = 1."""
    rng = np.random.default_rng(1)
    z = rng.normal(0.0, 1.5, size=20_000)
    return expit(z), expit(z + 1.0), 1.0


def test_batch_calibration_logit_space_recovers_a_known_bias(biased_judge):
    p_star, judge, beta = biased_judge
    bc = BatchCalibration(space="logit").fit(judge)
    # mean of z is ~N(0, 1.5^2 / 20000): standard error 0.011
    assert bc.logit_shift_ == pytest.approx(beta, abs=0.04)
    fixed = bc.transform(judge)
    assert np.mean(logit(fixed)) == pytest.approx(0.0, abs=1e-9)
    assert np.max(np.abs(logit(fixed) - logit(p_star))) < 0.04


def test_batch_calibration_probability_space_removes_most_of_the_bias(biased_judge):
    p_star, judge, beta = biased_judge
    fixed = BatchCalibration().fit_transform(judge)
    before = np.mean(logit(judge) - logit(p_star))
    after = np.mean(logit(fixed) - logit(p_star))
    assert before == pytest.approx(beta)
    # the logit of the batch mean shrinks beta (measured: shift 0.70, residual bias 0.30,
    # squared error to p* down to 9.5%): probability space removes most, not all, of a
    # logit bias -- the logit mode above removes it
    assert abs(after) < 0.4 * beta
    assert np.mean((fixed - p_star) ** 2) < 0.2 * np.mean((judge - p_star) ** 2)


@pytest.mark.parametrize("bad", [[0.5, np.nan], [0.5, 1.01], [-0.2], [], ["0.5"]])
def test_correctors_validate_probabilities(bad):
    with pytest.raises(DataValidationError, match="prob"):
        BatchCalibration().fit(bad)
    with pytest.raises(DataValidationError, match="content_free_prob"):
        ContextualCalibration().fit(bad)
    fitted = BatchCalibration().fit([0.3, 0.6])
    with pytest.raises(DataValidationError, match="`prob`"):
        fitted.transform(bad)


def test_correctors_reject_degenerate_fits_and_unfitted_use():
    with pytest.raises(DataValidationError, match="0 < q < 1"):
        ContextualCalibration().fit([1.0])
    with pytest.raises(DataValidationError, match="strictly"):
        BatchCalibration().fit([0.0, 0.0])
    with pytest.raises(DataValidationError, match="not fitted"):
        ContextualCalibration().transform([0.5])
    with pytest.raises(DataValidationError, match="not fitted"):
        BatchCalibration().transform([0.5])
    with pytest.raises(DataValidationError, match="space"):
        BatchCalibration(space="logits").fit([0.5])
    # exact 0/1 have no finite logit: logit space refuses them (no clipping constant)
    with pytest.raises(DataValidationError, match="exact 0/1"):
        BatchCalibration(space="logit").fit([0.0, 1.0, 1.0])


def test_correctors_are_vectorised_on_a_million_predictions():
    p = np.random.default_rng(2).uniform(size=1_000_000)
    out = BatchCalibration().fit_transform(p)
    assert out.shape == p.shape and np.isfinite(out).all()
