"""Tests of bayesjudge.experiments.misclassification.monte_carlo.

The importance sampler is checked against brute-force 3-D grid integration of
the same posterior; the Monte Carlo studies against closed-form expectations
(naive bias, label-shift biases) and the nominal coverage.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest
from scipy.stats import beta as beta_dist
from scipy.stats import binom

from bayesjudge import Prior
from bayesjudge.data import DataValidationError
from bayesjudge.experiments.misclassification.monte_carlo import (
    distribution_shift_study,
    misclassification_monte_carlo,
)
from bayesjudge.experiments.misclassification.tasks import monte_carlo_chunk, replication_chunks
from bayesjudge.models.misclassification import posterior as misclassification_posterior
from bayesjudge.models.misclassification.posterior import bayes_posterior_theta

Q0, Q1 = 0.7, 0.9


UNIFORM = {"theta": (1.0, 1.0), "q0": (1.0, 1.0), "q1": (1.0, 1.0)}


def grid_posterior(x, n, tp, m1, tn, m0, ab=UNIFORM, g_theta=400, g_q=120, ci_prob=0.95):
    """Posterior of theta by midpoint-rule integration over a (theta, q0, q1) grid.

    ``ab`` holds the Beta (a, b) of theta, q0 and q1 as plain tuples, independent of
    the package's Prior type.
    """
    th = (np.arange(g_theta) + 0.5) / g_theta
    q = (np.arange(g_q) + 0.5) / g_q
    log_q0 = beta_dist.logpdf(q, *ab["q0"]) + binom.logpmf(tn, m0, q)
    log_q1 = beta_dist.logpdf(q, *ab["q1"]) + binom.logpmf(tp, m1, q)
    p = th[:, None, None] * q[None, None, :] + (1 - th[:, None, None]) * (1 - q[None, :, None])
    log_joint = (
        beta_dist.logpdf(th, *ab["theta"])[:, None, None]
        + log_q0[None, :, None]
        + log_q1[None, None, :]
        + binom.logpmf(x, n, p)
    )
    marginal = np.exp(log_joint - log_joint.max()).sum(axis=(1, 2))
    marginal /= marginal.sum()
    edges = np.linspace(0, 1, g_theta + 1)
    cdf = np.concatenate([[0.0], np.cumsum(marginal)])
    tail = (1 - ci_prob) / 2
    lower, upper = np.interp([tail, 1 - tail], cdf, edges)
    top = np.argsort(marginal)[::-1]
    keep = top[: np.searchsorted(np.cumsum(marginal[top]), ci_prob) + 1]
    return {
        "mean": float(th @ marginal),
        "lower": lower,
        "upper": upper,
        "hpd_lower": edges[keep.min()],
        "hpd_upper": edges[keep.max() + 1],
    }


CASES = {
    "interior": (22, 40, 10, 12, 9, 12),
    "boundary": (8, 40, 11, 12, 8, 12),  # p_hat < 1 - q0_hat: theta_hat < 0, posterior peaks at 0
}


@pytest.fixture(scope="module")
def batched_uniform():
    counts = np.array(list(CASES.values())).T
    return bayes_posterior_theta(*counts, n_draws=400_000, rng=np.random.default_rng(3))


@pytest.mark.parametrize("k, case", list(enumerate(CASES)))
def test_posterior_matches_grid_integration(batched_uniform, k, case):
    ref = grid_posterior(*CASES[case])
    got = {f: getattr(batched_uniform, f)[k] for f in ref}
    assert got["mean"] == pytest.approx(ref["mean"], abs=0.003)
    for field in ("lower", "upper", "hpd_lower", "hpd_upper"):
        assert got[field] == pytest.approx(ref[field], abs=0.01), field


def test_posterior_boundary_case_hpd_starts_at_zero(batched_uniform):
    assert batched_uniform.hpd_lower[1] == 0.0
    assert batched_uniform.lower[1] > 0.0  # an equal-tailed interval never reaches the edge


def test_posterior_matches_grid_with_informative_priors():
    ab = {"theta": (2.0, 5.0), "q0": (8.0, 2.0), "q1": (9.0, 1.5)}
    priors = {
        "accuracy": Prior("Beta", alpha=2.0, beta=5.0),
        "specificity": Prior("Beta", alpha=8.0, beta=2.0),
        "sensitivity": Prior("Beta", alpha=9.0, beta=1.5),
    }
    data = CASES["interior"]
    ref = grid_posterior(*data, ab=ab)
    got = bayes_posterior_theta(*data, priors=priors, n_draws=400_000, rng=5)
    assert got.mean == pytest.approx(ref["mean"], abs=0.003)
    assert (got.lower, got.upper) == pytest.approx((ref["lower"], ref["upper"]), abs=0.01)
    # and the prior matters: the uniform-prior answer is far away
    assert abs(bayes_posterior_theta(*data, n_draws=50_000, rng=5).mean - got.mean) > 0.03


def test_posterior_vectorised_shapes_and_reproducible():
    x = np.array([[300, 480, 700]])
    tn = np.array([[65], [75]])
    post = bayes_posterior_theta(x, 1000, 90, 100, tn, 100, n_draws=500, rng=0)
    assert post.mean.shape == (2, 3)
    assert np.all((post.lower < post.mean) & (post.mean < post.upper))
    again = bayes_posterior_theta(
        x, 1000, 90, 100, tn, 100, n_draws=500, rng=np.random.default_rng(0)
    )
    np.testing.assert_array_equal(post.upper, again.upper)
    scalar = bayes_posterior_theta(480, 1000, 90, 100, 70, 100, n_draws=500, rng=0)
    assert isinstance(scalar.mean, float)


def test_posterior_redraws_low_ess_replications():
    # q0_hat = 0.59 and p_hat = 0.27 put theta_hat at -0.3: few Beta proposals land in [0, 1]
    post = bayes_posterior_theta(270, 1000, 87, 100, 59, 100, n_draws=500, rng=1)
    assert post.ess >= 50
    capped = bayes_posterior_theta(270, 1000, 87, 100, 59, 100, n_draws=500, rng=1, max_draws=500)
    assert capped.ess < 50
    if capped.ess == 0:  # no proposal draw in [0, 1] at all
        assert np.isnan([capped.mean, capped.lower, capped.hpd_upper]).all()


def test_posterior_input_errors():
    with pytest.raises(DataValidationError, match=r"tp must not exceed m1.*tp=12, m1=10"):
        bayes_posterior_theta(5, 10, 12, 10, 5, 10)
    with pytest.raises(DataValidationError, match="ci_prob must lie in"):
        bayes_posterior_theta(5, 10, 8, 10, 5, 10, ci_prob=95)


def test_posterior_missing_prior_keys_are_uniform():
    data = CASES["interior"]
    uniform = bayes_posterior_theta(*data, n_draws=2000, rng=4)
    explicit = {k: Prior("Beta", alpha=1, beta=1) for k in ("accuracy", "specificity")}
    same = bayes_posterior_theta(*data, priors=explicit, n_draws=2000, rng=4)
    assert same == uniform
    only_q0 = {"specificity": Prior("Beta", alpha=8, beta=2)}
    ab = misclassification_posterior.beta_parameters(only_q0)
    assert ab == {"accuracy": (1.0, 1.0), "specificity": (8.0, 2.0), "sensitivity": (1.0, 1.0)}


@pytest.mark.parametrize(
    "priors, match",
    [
        ({"theta": Prior("Beta", alpha=2, beta=5)}, r"unknown key\(s\) \['theta'\].*accuracy"),
        ({"accuracy": Prior("Normal", mu=0, sigma=1)}, r"priors\['accuracy'\] must be a Beta"),
        ({"sensitivity": (2.0, 5.0)}, r"priors\['sensitivity'\] must be a Beta.*\(2\.0, 5\.0\)"),
        ({"accuracy": Prior("Beta", mu=0.3, sigma=0.1)}, r"must give alpha and beta.*mu"),
        ({"specificity": Prior("Beta", alpha=0, beta=1)}, r"positive finite alpha and beta"),
        ([("accuracy", Prior("Beta", alpha=1, beta=1))], r"priors must be a mapping"),
    ],
)
def test_posterior_prior_errors_name_key_value_and_fix(priors, match):
    with pytest.raises(DataValidationError, match=match) as info:
        bayes_posterior_theta(*CASES["interior"], priors=priors, n_draws=100)
    assert "Fix" in str(info.value)


def test_studies_validate_priors_and_alpha_before_simulating():
    bad = {"accuracy": Prior("Normal", mu=0, sigma=1)}
    with pytest.raises(DataValidationError, match=r"priors\['accuracy'\] must be a Beta"):
        misclassification_monte_carlo(n_rep=10, priors=bad)
    with pytest.raises(DataValidationError, match=r"alpha is 1 - level.*alpha=0\.05"):
        misclassification_monte_carlo(n_rep=10, alpha=0.95)


# --------------------------------------------------------------------------- Section 8.1


@pytest.fixture(scope="module")
def small_study():
    return misclassification_monte_carlo(
        thetas=[0.0, 0.1, 0.5, 0.75, 0.9], n_rep=3000, n_draws=300,
        random_seed=np.random.default_rng(42),
    )


def _cell(df, theta, allocation, method, column):
    sel = df[(df.theta == theta) & (df.allocation == allocation) & (df.method == method)]
    assert len(sel) == 1
    return float(sel[column].iloc[0])


def test_study_is_tidy(small_study):
    assert set(small_study.method) == {
        "naive_wald", "lang_reiczigel", "bayes_equal_tailed", "bayes_hpd"
    }
    assert len(small_study) == 5 * 2 * 4
    assert small_study.n_valid.eq(3000).all()
    assert np.allclose(small_study.mean_m0 + small_study.mean_m1, 200)


@pytest.mark.parametrize("theta", [0.1, 0.5, 0.9])
def test_study_coverage_near_nominal(small_study, theta):
    for allocation in ("equal", "adaptive"):
        assert 0.93 <= _cell(small_study, theta, allocation, "lang_reiczigel", "coverage") <= 0.975
        bayes = _cell(small_study, theta, allocation, "bayes_equal_tailed", "coverage")
        assert 0.93 <= bayes <= 0.985
    assert _cell(small_study, theta, "equal", "naive_wald", "coverage") < 0.05


def test_study_biases(small_study):
    for theta in (0.1, 0.5, 0.75, 0.9):
        p = theta * Q1 + (1 - theta) * (1 - Q0)
        naive_bias = _cell(small_study, theta, "equal", "naive_wald", "bias")
        assert naive_bias == pytest.approx(p - theta, abs=0.003)
        assert abs(_cell(small_study, theta, "equal", "lang_reiczigel", "bias")) < 0.01
    # the naive estimator is unbiased exactly at (1 - q0)/(2 - q0 - q1) = 0.75 (Section 1)
    assert abs(_cell(small_study, 0.75, "equal", "naive_wald", "bias")) < 0.003
    # clipping at 0 pushes the adjusted estimate up when theta = 0
    assert _cell(small_study, 0.0, "equal", "lang_reiczigel", "bias") > 0.01


def test_study_adaptive_allocation_shortens_intervals(small_study):
    for theta in (0.1, 0.9):
        adaptive = _cell(small_study, theta, "adaptive", "lang_reiczigel", "mean_length")
        equal = _cell(small_study, theta, "equal", "lang_reiczigel", "mean_length")
        assert adaptive < 0.97 * equal
    # low p_hat -> more negatives
    assert _cell(small_study, 0.1, "adaptive", "lang_reiczigel", "mean_m0") > 120
    # HPD can reach theta = 0
    assert _cell(small_study, 0.0, "adaptive", "bayes_hpd", "coverage") > 0.5


def test_study_frequentist_part_is_fast_and_seeded():
    start = time.perf_counter()
    df = misclassification_monte_carlo(n_rep=10_000, bayes=False, random_seed=7)
    assert time.perf_counter() - start < 10
    assert len(df) == 21 * 2 * 2
    cov = df[df.method == "lang_reiczigel"].coverage
    assert cov.between(0.94, 0.975).all()
    again = misclassification_monte_carlo(n_rep=10_000, bayes=False, random_seed=7)
    pd.testing.assert_frame_equal(df, again)


def test_study_argument_errors():
    with pytest.raises(DataValidationError, match="allocations must be"):
        misclassification_monte_carlo(allocations=("random",), n_rep=10)
    with pytest.raises(DataValidationError, match="thetas, q0 and q1 must lie in"):
        misclassification_monte_carlo(thetas=[1.5], n_rep=10)


@pytest.mark.slow
def test_full_section_8_1_study():
    df = misclassification_monte_carlo(n_rep=10_000, random_seed=2026)
    lr = df[df.method == "lang_reiczigel"]
    assert lr.coverage.between(0.94, 0.975).all()
    eti = df[(df.method == "bayes_equal_tailed") & df.theta.between(0.04, 0.96)]
    assert eti.coverage.between(0.94, 0.985).all()
    wide = lr.pivot(index="theta", columns="allocation", values="mean_length")
    assert (wide.adaptive < wide.equal).mean() > 0.8


# --------------------------------------------------------------------------- Section 7


def test_distribution_shift_biases_match_closed_forms():
    df = distribution_shift_study(theta_q=[0.25, 0.5, 0.75], n_rep=4000, random_seed=9)
    youden = Q0 + Q1 - 1
    p_test = 0.5 * Q1 + 0.5 * (1 - Q0)
    for theta_q in (0.25, 0.5, 0.75):
        row = df[df.theta_q == theta_q].set_index("estimator").bias
        ppv = theta_q * Q1 / (theta_q * Q1 + (1 - theta_q) * (1 - Q0))
        false_omission = theta_q * (1 - Q1) / (theta_q * (1 - Q1) + (1 - theta_q) * Q0)
        expected = {
            "naive": p_test - 0.5,
            "calibration_only": theta_q - 0.5,
            "difference": (1 - youden) * (theta_q - 0.5),
            "conditional_calibration": ppv * p_test + false_omission * (1 - p_test) - 0.5,
        }
        for name, value in expected.items():
            assert row[name] == pytest.approx(value, abs=0.006), (name, theta_q)
        assert abs(row["misclassification_adjusted"]) < 0.01
    shifted = df[df.theta_q == 0.25].set_index("estimator").bias
    assert abs(shifted["conditional_calibration"]) > 0.1 and abs(shifted["difference"]) > 0.05
    assert df.shift_ratio.tolist()[::5] == pytest.approx([0.5, 1.0, 1.5])


# --------------------------------------------------------------------------- executors


def test_chunks_are_fixed_by_n_rep_and_carry_their_own_seeds():
    tasks = replication_chunks(2, 6000, 5)
    # theta-major, 2,500 replications per chunk, the remainder last; seeds distinct
    assert [(k, size) for k, size, _ in tasks] == [(0, 2500), (0, 2500), (0, 1000),
                                                    (1, 2500), (1, 2500), (1, 1000)]
    assert len({seed for *_, seed in tasks}) == 6
    assert replication_chunks(2, 6000, 5) == tasks
    assert replication_chunks(1, 10, 5) == [(0, 10, tasks[0][2])]


def test_a_chunk_is_simulated_from_its_own_seed_only():
    # one chunk's test set is Bin(n, p) drawn first from default_rng(seed): an independent
    # rebuild of the naive estimate and its Wald limits from that seed
    shared = dict(thetas=np.array([0.3]), q0=Q0, q1=Q1, n=1000, m=200, m_pilot=10, alpha=0.05,
                  allocations=("equal",), bayes=False, n_draws=100, priors=None)
    out = monte_carlo_chunk((0, 50, 123), **shared)
    p = 0.3 * Q1 + 0.7 * (1 - Q0)
    x = np.random.default_rng(123).binomial(1000, p, size=50)
    p_hat = x / 1000
    half = 1.959963984540054 * np.sqrt(p_hat * (1 - p_hat) / 1000)
    est, lower, upper = out["naive"]
    np.testing.assert_allclose(est, p_hat)
    np.testing.assert_allclose(lower, np.clip(p_hat - half, 0, 1), atol=1e-12)
    np.testing.assert_allclose(upper, np.clip(p_hat + half, 0, 1), atol=1e-12)
    again = monte_carlo_chunk((0, 50, 123), **shared)
    np.testing.assert_array_equal(again["allocations"]["equal"]["methods"]["lang_reiczigel"][0],
                                  out["allocations"]["equal"]["methods"]["lang_reiczigel"][0])


MC_SMALL = dict(thetas=[0.2, 0.8], n_rep=6000, n_draws=100, random_seed=11)
SHIFT_SMALL = dict(theta_q=[0.3, 0.6], n_rep=6000, random_seed=12)


@pytest.fixture(scope="module")
def in_process():
    return (misclassification_monte_carlo(**MC_SMALL),
            distribution_shift_study(**SHIFT_SMALL))


def test_studies_equal_in_process_and_joblib(in_process, capsys):
    mc = misclassification_monte_carlo(**MC_SMALL, executor="joblib", progressbar=True)
    assert "6/6" in capsys.readouterr().err  # tasks done / total: 2 thetas x 3 chunks
    pd.testing.assert_frame_equal(mc, in_process[0])
    shift = distribution_shift_study(**SHIFT_SMALL, executor="joblib")
    pd.testing.assert_frame_equal(shift, in_process[1])


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_studies_do_not_depend_on_the_number_of_workers(in_process, n_jobs):
    joblib = pytest.importorskip("joblib")
    parallel = joblib.Parallel(n_jobs=n_jobs, return_as="generator_unordered")
    pd.testing.assert_frame_equal(
        misclassification_monte_carlo(**MC_SMALL, executor=parallel), in_process[0])
    pd.testing.assert_frame_equal(
        distribution_shift_study(**SHIFT_SMALL, executor=parallel), in_process[1])


@pytest.mark.parametrize("bad", ["threads", 4])
def test_studies_reject_an_unknown_executor_before_simulating(bad):
    start = time.perf_counter()
    with pytest.raises(ValueError, match=r"executor must be None .*got"):
        misclassification_monte_carlo(n_rep=10_000_000, executor=bad)
    with pytest.raises(ValueError, match=r"executor must be None .*got"):
        distribution_shift_study(n_rep=10_000_000, executor=bad)
    assert time.perf_counter() - start < 1  # nothing was simulated
