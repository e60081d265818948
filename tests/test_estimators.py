"""Tests of bayesjudge.estimators against independent computations.

References used: pure-Python transcriptions of eqs. (5)-(9), the matrix form of
Appendix B.3 (numpy.linalg.solve), a finite-difference delta method, simulation,
scipy minimisation of the interval length (Prop. 5.2), root finding (Prop. 6.1),
and the numbers printed in the paper (0.75 threshold, 1/2 + 1/(2 sqrt 2)).
"""

from __future__ import annotations

import math
import warnings
from statistics import NormalDist

import numpy as np
import pytest
from scipy.optimize import brentq, minimize_scalar

from bayesjudge.data import DataValidationError
from bayesjudge.estimators import (
    BoundaryWarning,
    allocate_calibration,
    as_counts,
    calibration_only_estimate,
    check_alpha,
    conditional_calibration_estimate,
    conditional_calibration_rates,
    difference_estimate,
    judge_beats_human,
    lang_reiczigel_interval,
    lang_reiczigel_rates,
    naive_estimate,
    rogan_gladen,
    rogan_gladen_rates,
    rogan_gladen_variance,
    table1_estimates,
    validate_count_table,
    wald_interval,
    wilson_interval,
)

Z95 = NormalDist().inv_cdf(0.975)  # from the standard library, not scipy


# --------------------------------------------------------------------------- references


def rg_reference(x, n, tp, m1, tn, m0):
    """Eq. (5), scalar pure Python."""
    p, q0, q1 = x / n, tn / m0, tp / m1
    return (p + q0 - 1) / (q0 + q1 - 1)


def lr_reference(x, n, tp, m1, tn, m0, alpha=0.05):
    """Eqs. (6)-(8) transcribed line by line, scalar pure Python."""
    z = NormalDist().inv_cdf(1 - alpha / 2)
    p_hat, q0_hat, q1_hat = x / n, tn / m0, tp / m1
    n_t, m0_t, m1_t = n + z**2, m0 + 2, m1 + 2
    p_t = (n * p_hat + z**2 / 2) / (n + z**2)
    q0_t = (m0 * q0_hat + 1) / (m0 + 2)
    q1_t = (m1 * q1_hat + 1) / (m1 + 2)
    th_t = (p_t + q0_t - 1) / (q0_t + q1_t - 1)
    d_th = 2 * z**2 * (-(1 - th_t) * q0_t * (1 - q0_t) / m0_t + th_t * q1_t * (1 - q1_t) / m1_t)
    var = (
        p_t * (1 - p_t) / n_t
        + (1 - th_t) ** 2 * q0_t * (1 - q0_t) / m0_t
        + th_t**2 * q1_t * (1 - q1_t) / m1_t
    ) / (q0_t + q1_t - 1) ** 2
    lo, hi = th_t + d_th - z * math.sqrt(var), th_t + d_th + z * math.sqrt(var)
    return max(0.0, min(1.0, lo)), max(0.0, min(1.0, hi))


def appendix_c_interval(p, q0, q1, n, m0, m1, alpha=0.05, fixed=False):
    """The paper's Appendix C ``confidence_interval`` verbatim; ``fixed`` applies eq. (6)."""
    z = NormalDist().inv_cdf(1 - alpha / 2)
    p, q0, q1 = (n * p + z**2 / 2) / (n + z**2), (m0 * q0 + 1) / (m0 + 2), (m1 * q1 + 1) / (m1 + 2)
    n, m0, m1 = n + z**2, m0 + 2, m1 + 2
    th = (p + q0 - 1) / (q0 + q1 - 1)
    dth = 2 * z**2 * (-(1 - th) * q0 * (1 - q0) / m0 + th * q1 * (1 - q1) / m1)
    youden = (q0 + q1 - 1) ** 2 if fixed else (q0 + q1 - 1)
    num = p * (1 - p) / n + (1 - th) ** 2 * q0 * (1 - q0) / m0 + th**2 * q1 * (1 - q1) / m1
    se = math.sqrt(num / youden)
    upper = th + dth + z * se if fixed else th - dth + z * se
    return max(0.0, min(1.0, th + dth - z * se)), max(0.0, min(1.0, upper))


def random_tables(size, seed=0):
    rng = np.random.default_rng(seed)
    n = rng.integers(20, 3000, size)
    m1 = rng.integers(5, 400, size)
    m0 = rng.integers(5, 400, size)
    q0 = rng.uniform(0.6, 0.99, size)
    q1 = rng.uniform(0.6, 0.99, size)
    theta = rng.uniform(0, 1, size)
    x = rng.binomial(n, theta * q1 + (1 - theta) * (1 - q0))
    tp = rng.binomial(m1, q1)
    tn = rng.binomial(m0, q0)
    keep = (tn / m0 + tp / m1 > 1.05) & ((tn + 1) / (m0 + 2) + (tp + 1) / (m1 + 2) > 1.05)
    return tuple(a[keep] for a in (x, n, tp, m1, tn, m0))


# --------------------------------------------------------------------------- eq. (5)


def test_rogan_gladen_matches_scalar_formula_and_clips():
    for args in zip(*random_tables(60), strict=True):
        args = tuple(int(a) for a in args)
        ref = rg_reference(*args)
        assert rogan_gladen(*args, clip=False) == pytest.approx(ref, abs=1e-12)
        assert rogan_gladen(*args) == pytest.approx(min(1.0, max(0.0, ref)), abs=1e-12)
    # 480/1000 judged positive, q0 = 0.7, q1 = 0.9: (0.48 + 0.7 - 1) / 0.6 = 0.3
    assert rogan_gladen(480, 1000, 90, 100, 70, 100) == pytest.approx(0.3)
    assert rogan_gladen(250, 1000, 90, 100, 70, 100, clip=False) == pytest.approx(-0.05 / 0.6)
    assert rogan_gladen(250, 1000, 90, 100, 70, 100) == 0.0


def test_rogan_gladen_broadcasts():
    x = np.array([[300], [480], [700]])
    tn = np.array([60, 70, 80, 90])
    out = rogan_gladen(x, 1000, 90, 100, tn, 100, clip=False)
    assert out.shape == (3, 4)
    assert out[1, 1] == pytest.approx(0.3)
    assert out[2, 3] == pytest.approx(rg_reference(700, 1000, 90, 100, 90, 100))
    assert isinstance(rogan_gladen(480, 1000, 90, 100, 70, 100), float)


def test_misclassification_adjusted_is_inverse_confusion_matrix():
    """Appendix B.3: (Pr_Q(Z_hat | Z))^{-1} E_P[Z_hat], first component, equals eq. (5)."""
    for x, n, tp, m1, tn, m0 in zip(*random_tables(40, seed=3), strict=True):
        q0, q1, p = tn / m0, tp / m1, x / n
        confusion = np.array([[q1, 1 - q0], [1 - q1, q0]])
        solved = np.linalg.solve(confusion, [p, 1 - p])
        assert rogan_gladen(x, n, tp, m1, tn, m0, clip=False) == pytest.approx(solved[0], abs=1e-10)
        assert solved.sum() == pytest.approx(1.0)


# --------------------------------------------------------------------------- eq. (9)


def test_variance_matches_finite_difference_delta_method():
    x, n, tp, m1, tn, m0 = 420, 900, 170, 200, 130, 180
    p, q0, q1 = x / n, tn / m0, tp / m1

    def theta(v):
        return (v[0] + v[1] - 1) / (v[1] + v[2] - 1)

    v = np.array([p, q0, q1])
    h = 1e-6
    grad = np.array([(theta(v + h * e) - theta(v - h * e)) / (2 * h) for e in np.eye(3)])
    cov = np.diag([p * (1 - p) / n, q0 * (1 - q0) / m0, q1 * (1 - q1) / m1])
    assert rogan_gladen_variance(x, n, tp, m1, tn, m0) == pytest.approx(grad @ cov @ grad, rel=1e-6)


def test_variance_matches_simulated_variance_at_large_samples():
    rng = np.random.default_rng(11)
    theta, q0, q1, n, m0, m1, reps = 0.3, 0.7, 0.9, 20_000, 4_000, 4_000, 20_000
    p = theta * q1 + (1 - theta) * (1 - q0)
    x = rng.binomial(n, p, reps)
    tn = rng.binomial(m0, q0, reps)
    tp = rng.binomial(m1, q1, reps)
    simulated = np.var(rogan_gladen(x, n, tp, m1, tn, m0, clip=False), ddof=1)
    plug_in = rogan_gladen_variance(x, n, tp, m1, tn, m0)
    at_truth = (
        p * (1 - p) / n
        + (1 - theta) ** 2 * q0 * (1 - q0) / m0
        + theta**2 * q1 * (1 - q1) / m1
    ) / (q0 + q1 - 1) ** 2
    assert simulated == pytest.approx(at_truth, rel=0.05)  # sampling s.e. of the variance ~1%
    assert np.mean(plug_in) == pytest.approx(at_truth, rel=0.02)


# --------------------------------------------------------------------------- eqs. (6)-(8)


def test_lang_reiczigel_matches_transcribed_equations():
    tables = random_tables(80, seed=5)
    ci = lang_reiczigel_interval(*tables)
    for k, args in enumerate(zip(*tables, strict=True)):
        lo, hi = lr_reference(*(int(a) for a in args))
        assert ci.lower[k] == pytest.approx(lo, abs=1e-12)
        assert ci.upper[k] == pytest.approx(hi, abs=1e-12)
    ci90 = lang_reiczigel_interval(480, 1000, 90, 100, 70, 100, alpha=0.1)
    ref90 = lr_reference(480, 1000, 90, 100, 70, 100, alpha=0.1)
    assert (ci90.lower, ci90.upper) == pytest.approx(ref90, abs=1e-12)


def test_lang_reiczigel_fields_and_shift():
    ci = lang_reiczigel_interval(480, 1000, 90, 100, 70, 100)
    assert ci.estimate == pytest.approx(0.3)
    assert (ci.q0, ci.q1) == (0.7, 0.9)
    # the interval is centred at theta~ + d theta~, not at the point estimate
    assert (ci.lower + ci.upper) / 2 == pytest.approx(ci.center)
    assert ci.center != pytest.approx(ci.estimate, abs=1e-3)
    # truncation to [0, 1]
    low = lang_reiczigel_interval(280, 1000, 90, 100, 70, 100)
    assert low.lower == 0.0 and low.center < 0


def test_appendix_c_code_differs_from_eq6_in_exactly_two_places():
    """Appendix C divides by (q0 + q1 - 1) unsquared and subtracts d theta from the upper limit."""
    for x, n, tp, m1, tn, m0 in zip(*random_tables(30, seed=8), strict=True):
        ci = lang_reiczigel_interval(x, n, tp, m1, tn, m0)
        args = (x / n, tn / m0, tp / m1, n, m0, m1)
        fixed = appendix_c_interval(*args, fixed=True)
        assert (ci.lower, ci.upper) == pytest.approx(fixed, abs=1e-12)
    # at q0 = 0.7, q1 = 0.9 the paper's code gives a visibly narrower interval
    ci = lang_reiczigel_interval(480, 1000, 90, 100, 70, 100)
    paper_code = appendix_c_interval(0.48, 0.7, 0.9, 1000, 100, 100)
    assert paper_code[1] - paper_code[0] < 0.85 * (ci.upper - ci.lower)


@pytest.mark.filterwarnings("ignore::bayesjudge.estimators.BoundaryWarning")
def test_lang_reiczigel_coverage_at_a_few_thetas():
    rng = np.random.default_rng(2024)
    q0, q1, n, m0, m1, reps = 0.7, 0.9, 1000, 100, 100, 4000
    for theta in (0.1, 0.5, 0.9):
        x = rng.binomial(n, theta * q1 + (1 - theta) * (1 - q0), reps)
        tn, tp = rng.binomial(m0, q0, reps), rng.binomial(m1, q1, reps)
        ci = lang_reiczigel_interval(x, n, tp, m1, tn, m0)
        coverage = np.mean((ci.lower <= theta) & (theta <= ci.upper))
        assert 0.935 <= coverage <= 0.975, (theta, coverage)
        naive = wald_interval(x, n)
        assert np.mean((naive.lower <= theta) & (theta <= naive.upper)) < 0.05


def test_wald_interval_by_hand():
    ci = wald_interval(480, 1000)
    half = Z95 * math.sqrt(0.48 * 0.52 / 1000)
    assert (ci.estimate, ci.lower, ci.upper) == pytest.approx((0.48, 0.48 - half, 0.48 + half))
    assert wald_interval(0, 10).lower == 0.0


# --------------------------------------------------------------------------- Algorithm 1


def test_allocation_hand_computed():
    # q0~ = (7 + 1)/12, q1~ = (9 + 1)/12, kappa = (4/12)/(2/12) = 2,
    # m1* = round(200 / (1 + 1.5 * sqrt 2)) = round(64.07) = 64, m0 = 136
    assert allocate_calibration(200, 0.4, 0.7, 0.9, 10) == (136, 64)


def _length(m0, m, p, q0, q1):
    """Eq. (6) length with n -> infinity at fixed adjusted q0~, q1~ (Prop. B.2 objective)."""
    m0_t, m1_t = m0 + 2, m - m0 + 2
    th = (p + q0 - 1) / (q0 + q1 - 1)
    var = (1 - th) ** 2 * q0 * (1 - q0) / m0_t + th**2 * q1 * (1 - q1) / m1_t
    return 2 * Z95 * math.sqrt(var / (q0 + q1 - 1) ** 2)


@pytest.mark.parametrize("q0_pilot, q1_pilot", [(0.96, 0.99), (0.99, 0.96), (0.98, 0.98)])
@pytest.mark.parametrize("p_hat", [0.3, 0.5, 0.8])
def test_allocation_near_numerical_optimum_when_q_near_one(q0_pilot, q1_pilot, p_hat):
    m, m_pilot = 1000, 98
    q0 = (m_pilot * q0_pilot + 1) / (m_pilot + 2)
    q1 = (m_pilot * q1_pilot + 1) / (m_pilot + 2)
    best = minimize_scalar(_length, bounds=(1, m - 1), args=(m, p_hat, q0, q1),
                           method="bounded", options={"xatol": 1e-6})
    m0, m1 = allocate_calibration(m, p_hat, q0_pilot, q1_pilot, m_pilot)
    assert m0 + m1 == m
    assert _length(m0, m, p_hat, q0, q1) <= 1.005 * best.fun
    assert _length(m0, m, p_hat, q0, q1) <= _length(m / 2, m, p_hat, q0, q1) + 1e-12
    # the exact AM-GM ratio of Appendix B.2 (before the q -> 1 approximation) is the optimum
    ratio = abs(q1 - p_hat) / abs(p_hat + q0 - 1) * math.sqrt(q0 * (1 - q0) / (q1 * (1 - q1)))
    assert best.x + 2 == pytest.approx(ratio * (m - best.x + 2), rel=1e-4)


def test_allocation_edges_and_pilot_floor():
    assert allocate_calibration(200, 0.0, 0.7, 0.9, 10) == (190, 10)
    assert allocate_calibration(200, 1.0, 0.7, 0.9, 10) == (10, 190)
    # a perfect pilot keeps kappa finite thanks to the Laplace smoothing of step 3
    m0, m1 = allocate_calibration(200, 0.5, 0.7, 1.0, 10)
    kappa = (1 - 8 / 12) / (1 - 11 / 12)
    assert m1 == round(200 / (1 + math.sqrt(kappa)))
    rng = np.random.default_rng(0)
    p = rng.uniform(0, 1, 500)
    m0, m1 = allocate_calibration(100, p, rng.uniform(0, 1, 500), rng.uniform(0, 1, 500), 20)
    assert m0.shape == (500,) and np.all(m0 + m1 == 100)
    assert np.all((m0 >= 20) & (m1 >= 20))
    assert np.all(np.diff(allocate_calibration(200, np.sort(p), 0.8, 0.8, 10)[1]) >= 0)


# --------------------------------------------------------------------------- Prop. 6.1


def test_prop61_interval_is_where_eq9_variance_crosses_human_variance():
    m = 300
    for q in (0.88, 0.9, 0.95, 0.99):

        def gap(theta, q=q):
            # eq. (9) with n -> infinity, m1 = m theta, m0 = m (1 - theta)
            var_judge = (
                (1 - theta) ** 2 * q * (1 - q) / (m * (1 - theta))
                + theta**2 * q * (1 - q) / (m * theta)
            ) / (2 * q - 1) ** 2
            return var_judge - theta * (1 - theta) / m

        lo, hi = brentq(gap, 1e-9, 0.5), brentq(gap, 0.5, 1 - 1e-9)
        res = judge_beats_human(0.5, q, m)
        assert (res.theta_lower, res.theta_upper) == pytest.approx((lo, hi), abs=1e-9)
        assert judge_beats_human(lo + 0.01, q, m).judge_preferred
        assert not judge_beats_human(lo - 0.01, q, m).judge_preferred


def test_prop61_threshold_printed_in_paper():
    threshold = 0.5 + 1 / (2 * math.sqrt(2))  # 0.8536
    below = judge_beats_human(np.linspace(0, 1, 11), threshold - 1e-3, 100)
    assert not np.any(below.judge_preferred) and np.isnan(below.theta_lower).all()
    above = judge_beats_human(0.5, threshold + 1e-3, 100)
    assert above.judge_preferred and above.theta_lower < 0.5 < above.theta_upper
    perfect = judge_beats_human(0.0, 1.0, 100)
    assert (perfect.theta_lower, perfect.theta_upper, perfect.var_judge) == (0.0, 1.0, 0.0)


def test_prop61_against_simulation():
    rng = np.random.default_rng(7)
    q, m, reps = 0.95, 400, 20_000
    for theta, judge_wins in ((0.5, True), (0.04, False)):
        m1 = rng.binomial(m, theta, reps)
        keep = (m1 > 0) & (m1 < m)
        m1 = m1[keep]
        tp, tn = rng.binomial(m1, q), rng.binomial(m - m1, q)
        p = theta * q + (1 - theta) * (1 - q)  # n -> infinity: p_hat = p
        theta_hat = (p + tn / (m - m1) - 1) / (tn / (m - m1) + tp / m1 - 1)
        res = judge_beats_human(theta, q, m)
        assert res.judge_preferred == judge_wins
        assert (np.var(theta_hat) < np.var(m1 / m)) == judge_wins
        assert np.var(theta_hat) == pytest.approx(res.var_judge, rel=0.1)


# --------------------------------------------------------------------------- Table 1


def test_table1_estimators_by_hand():
    # x = 48 of 100; calibration: 18 of 20 positives and 14 of 20 negatives judged right
    est = table1_estimates(48, 100, 18, 20, 14, 20)
    assert est["naive"] == pytest.approx(0.48)
    assert est["calibration_only"] == pytest.approx(0.5)
    assert est["difference"] == pytest.approx(0.48 + (2 - 6) / 40)
    assert est["conditional_calibration"] == pytest.approx(18 / 24 * 0.48 + 2 / 16 * 0.52)
    assert est["misclassification_adjusted"] == pytest.approx((0.48 + 0.7 - 1) / 0.6)


def test_table1_estimators_from_item_level_data():
    """Compute (ii)-(iv) from raw (z, z_hat) calibration items with generic formulas."""
    rng = np.random.default_rng(1)
    z = rng.random(300) < 0.4
    z_hat = np.where(z, rng.random(300) < 0.85, rng.random(300) < 0.25)
    judged = rng.random(1000) < 0.45
    x, n = int(judged.sum()), 1000
    tp, m1 = int((z & z_hat).sum()), int(z.sum())
    tn, m0 = int((~z & ~z_hat).sum()), int((~z).sum())
    p_hat = judged.mean()
    assert calibration_only_estimate(m1, m0) == pytest.approx(z.mean())
    expected = p_hat + np.mean(z.astype(int) - z_hat)
    assert difference_estimate(x, n, tp, m1, tn, m0) == pytest.approx(expected)
    calib = np.array([
        [z[z_hat].mean(), z[~z_hat].mean()],
        [1 - z[z_hat].mean(), 1 - z[~z_hat].mean()],
    ])
    expected = (calib @ [p_hat, 1 - p_hat])[0]
    assert conditional_calibration_estimate(x, n, tp, m1, tn, m0) == pytest.approx(expected)
    assert naive_estimate(x, n) == pytest.approx(p_hat)


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "args, match",
    [
        ((-1, 100, 9, 10, 7, 10), r"judged_pos must be a non-negative count.*judged_pos=-1"),
        ((50, 100, -2, 10, 7, 10), r"tp must be a non-negative count"),
        ((101, 100, 9, 10, 7, 10), r"judged_pos must not exceed n.*judged_pos=101, n=100"),
        ((50, 100, 11, 10, 7, 10), r"tp must not exceed m1.*tp=11, m1=10"),
        ((50, 100, 9, 10, 12, 10), r"tn must not exceed m0.*tn=12, m0=10"),
        ((50, 100, 9, 10, 0, 0), r"m0 must be positive.*m0=0.*Fix: label at least one"),
        ((50, 100, 0, 0, 7, 10), r"m1 must be positive"),
        ((50, 0, 9, 10, 7, 10), r"n must be positive"),
        ((50.5, 100, 9, 10, 7, 10), r"judged_pos must be an integer count.*50\.5.*not proportions"),
        ((50, 100, 0.9, 10, 7, 10), r"tp must be an integer count"),
        ((50, 100, 3, 10, 7, 10), r"q0 \+ q1 <= 1.*q0=0\.7, q1=0\.3.*non-identifiable"),
        ((50, 100, 3, 10, 7, 10), r"undefined at q0 \+ q1 = 1"),
        ((50, 100, 5, 10, 5, 10), r"q0 \+ q1 <= 1.*q0=0\.5, q1=0\.5"),
        (("a", 100, 9, 10, 7, 10), r"judged_pos must be a count.*dtype"),
    ],
)
@pytest.mark.parametrize("func", [rogan_gladen, rogan_gladen_variance, lang_reiczigel_interval])
def test_bad_counts_raise(func, args, match):
    with pytest.raises(DataValidationError, match=match):
        func(*args)


def test_error_lists_offending_entries_of_arrays():
    with pytest.raises(DataValidationError, match=r"tp=12, m1=10 \(index \(2,\)\)"):
        rogan_gladen([1, 2, 3], 10, [9, 9, 12], 10, 8, 10)


def test_interval_checks_identifiability_on_adjusted_estimates():
    # q0_hat + q1_hat = 1/1 + 2/10 = 1.2 > 1, but the smoothing of eq. (7) gives
    # q0~ + q1~ = 2/3 + 3/12 < 1: the point estimate exists, the interval does not.
    assert rogan_gladen(5, 10, 2, 10, 1, 1, clip=False) == pytest.approx((0.5 + 1 - 1) / 0.2)
    match = r"adjusted q0 = \(tn \+ 1\)/\(m0 \+ 2\).*q0=0\.6667, q1=0\.25"
    with pytest.raises(DataValidationError, match=match):
        lang_reiczigel_interval(5, 10, 2, 10, 1, 1)


def test_alpha_and_allocation_arguments_validated():
    with pytest.raises(DataValidationError, match="alpha must lie in"):
        lang_reiczigel_interval(480, 1000, 90, 100, 70, 100, alpha=1.5)
    match = r"2 \* m_pilot must not exceed the budget m.*m=30, m_pilot=20"
    with pytest.raises(DataValidationError, match=match):
        allocate_calibration(30, 0.5, 0.7, 0.9, 20)
    with pytest.raises(DataValidationError, match="m_pilot must be positive"):
        allocate_calibration(30, 0.5, 0.7, 0.9, 0)
    match = r"q0_pilot must be a proportion in \[0, 1\].*q0_pilot=7.*not a count"
    with pytest.raises(DataValidationError, match=match):
        allocate_calibration(200, 0.5, 7, 0.9, 10)
    with pytest.raises(DataValidationError, match=r"p_hat must be a proportion"):
        allocate_calibration(200, 1.2, 0.7, 0.9, 10)
    with pytest.raises(DataValidationError, match=r"m must be an integer count"):
        allocate_calibration(200.5, 0.5, 0.7, 0.9, 10)
    with pytest.raises(DataValidationError, match=r"q must lie in \(1/2, 1\].*not identifiable"):
        judge_beats_human(0.5, 0.5, 100)
    with pytest.raises(DataValidationError, match=r"theta must lie in \[0, 1\]"):
        judge_beats_human(1.5, 0.9, 100)
    with pytest.raises(DataValidationError, match=r"Pr_Q\(Z \| Z_hat = 'correct'\) is undefined"):
        conditional_calibration_estimate(5, 10, 0, 10, 10, 10)


# --------------------------------------------------------------------------- alpha is 1 - level


@pytest.mark.parametrize("alpha", [0.95, 0.9, 0.5, 0.0, 1.0, -0.05, 1.5, True, "0.05"])
def test_alpha_at_or_above_one_half_is_refused(alpha):
    # Regression: alpha=0.95 used to return a 5% interval that excluded its own estimate.
    for call in (
        lambda: lang_reiczigel_interval(480, 1000, 90, 100, 70, 100, alpha=alpha),
        lambda: lang_reiczigel_rates(0.48, 0.7, 0.9, 1000, 100, 100, alpha=alpha),
        lambda: wald_interval(480, 1000, alpha=alpha),
        lambda: check_alpha(alpha),
    ):
        with pytest.raises(DataValidationError, match=r"alpha is 1 - level: for a 95% interval "
                           r"pass alpha=0\.05"):
            call()


def test_alpha_error_names_the_confusion():
    with pytest.raises(DataValidationError, match=r"got alpha=0\.95\. It asks for a 5% interval"):
        lang_reiczigel_interval(480, 1000, 90, 100, 70, 100, alpha=0.95)
    check_alpha(0.05)
    check_alpha(0.49)


# --------------------------------------------------------------------------- zero-width intervals


def test_zero_width_interval_warns_and_is_flagged():
    # p_hat = 0.1 is far below the false-positive rate 1 - q0_hat = 0.3: eq. (6) clips both
    # limits to 0 and the interval would print as 0.000 [0.000, 0.000].
    with pytest.warns(BoundaryWarning, match=r"boundary of \[0, 1\].*zero width.*not a valid "
                      r"uncertainty statement.*MisclassificationModel \(method=\"nuts\"\)"):
        ci = lang_reiczigel_interval(100, 1000, 90, 100, 70, 100)
    assert (ci.estimate, ci.lower, ci.upper) == (0.0, 0.0, 0.0)
    assert ci.at_boundary is True
    # mirrored at 1: p_hat far above the sensitivity q1_hat = 0.7
    with pytest.warns(BoundaryWarning):
        hi = lang_reiczigel_interval(900, 1000, 70, 100, 90, 100)
    assert (hi.estimate, hi.lower, hi.upper, hi.at_boundary) == (1.0, 1.0, 1.0, True)


def test_boundary_warning_points_at_the_caller_and_counts_inputs():
    with pytest.warns(BoundaryWarning, match=r"for 1 of 3 input\(s\).*index \(0,\)") as rec:
        ci = lang_reiczigel_interval([100, 480, 280], 1000, 90, 100, 70, 100)
    assert rec[0].filename == __file__
    np.testing.assert_array_equal(ci.at_boundary, [True, False, False])
    assert ci.at_boundary.dtype == bool
    # an estimate clipped to 0 with a non-degenerate interval is not flagged
    assert ci.estimate[2] == 0.0 and ci.upper[2] > 0


def test_interior_interval_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ci = lang_reiczigel_interval(480, 1000, 90, 100, 70, 100)
    assert ci.at_boundary is False
    assert issubclass(BoundaryWarning, UserWarning)


# --------------------------------------------------------------------------- rate level


def test_rate_level_functions_match_count_level_ones():
    tables = random_tables(50, seed=11)
    x, n, tp, m1, tn, m0 = (a.astype(float) for a in tables)
    p, q0, q1 = x / n, tn / m0, tp / m1
    np.testing.assert_allclose(
        rogan_gladen_rates(p, q0, q1), rogan_gladen(*tables, clip=False), atol=1e-12
    )
    rates = lang_reiczigel_rates(p, q0, q1, n, m0, m1)
    counts = lang_reiczigel_interval(*tables)
    for field in ("estimate", "lower", "upper", "center", "q0", "q1"):
        np.testing.assert_allclose(getattr(rates, field), getattr(counts, field), atol=1e-12)
    np.testing.assert_allclose(
        conditional_calibration_rates(p, q0, q1, m0, m1),
        conditional_calibration_estimate(*tables),
        atol=1e-12,
    )


def test_rate_level_functions_give_nan_where_undefined():
    # q0 + q1 = 1 (undefined), < 1 (not identifiable), an empty class, and a valid case
    p = np.array([0.4, 0.4, 0.4, 0.48])
    q0 = np.array([0.5, 0.3, 0.7, 0.7])
    q1 = np.array([0.5, 0.6, 0.9, 0.9])
    m0 = np.array([100, 100, 0, 100])
    theta = rogan_gladen_rates(p, q0, q1)
    assert np.isnan(theta[:2]).all() and theta[3] == pytest.approx(0.3)
    ci = lang_reiczigel_rates(p, q0, q1, 1000, m0, 100)
    assert np.isnan(ci.estimate[:3]).all() and np.isnan(ci.lower[2]) and np.isnan(ci.upper[2])
    assert ci.estimate[3] == pytest.approx(0.3)
    assert not ci.at_boundary[:3].any()
    # smoothed q0~ + q1~ <= 1 (eq. 7) leaves the estimate but not the interval
    small = lang_reiczigel_rates(0.5, 1.0, 0.2, 10, 1, 10)
    assert small.estimate == pytest.approx(1.0) and np.isnan(small.lower)
    # an empty class contributes no items to the conditional calibration estimator
    assert conditional_calibration_rates(0.5, np.nan, 0.9, 0, 100) == pytest.approx(1.0)
    # no calibration item judged 'correct' (q0 = 1, q1 = 0): Pr_Q(Z | Z_hat = 1) undefined
    assert np.isnan(conditional_calibration_rates(0.5, 1.0, 0.0, 100, 100))


def test_rate_level_functions_validate_their_inputs():
    with pytest.raises(DataValidationError, match=r"q0 must be a proportion in \[0, 1\].*q0=7"):
        rogan_gladen_rates(0.5, 7, 0.9)
    with pytest.raises(DataValidationError, match=r"m0 must be an integer count"):
        lang_reiczigel_rates(0.5, 0.7, 0.9, 1000, 10.5, 100)
    with pytest.raises(DataValidationError, match=r"p must be a proportion"):
        conditional_calibration_rates(-0.1, 0.7, 0.9, 100, 100)


def test_count_validators():
    assert as_counts(n=3, m=[1, 2])["m"].tolist() == [1.0, 2.0]
    with pytest.raises(DataValidationError, match=r"m must be a non-negative count.*m=-1"):
        as_counts(m=[1, -1])
    empty = validate_count_table(5, 10, 0, 0, 0, 0, allow_empty=True)
    assert empty["m0"] == 0
    with pytest.raises(DataValidationError, match=r"m1 must be positive"):
        validate_count_table(5, 10, 0, 0, 3, 4)
    with pytest.raises(DataValidationError, match=r"tn must not exceed m0.*tn=5, m0=4"):
        validate_count_table(5, 10, 0, 0, 5, 4, allow_empty=True)


# --------------------------------------------------------------------------- Wilson interval


def wilson_reference(x, n, level=0.95):
    """Wilson (1927) score interval, scalar pure Python: roots of (p_hat - p)^2 = z^2 p(1-p)/n."""
    z = NormalDist().inv_cdf(0.5 + level / 2)
    # (1 + z^2/n) p^2 - (2 p_hat + z^2/n) p + p_hat^2 = 0, solved by the quadratic formula
    p_hat = x / n
    a, b, c = 1 + z * z / n, -(2 * p_hat + z * z / n), p_hat * p_hat
    disc = math.sqrt(b * b - 4 * a * c)
    return (-b - disc) / (2 * a), (-b + disc) / (2 * a)


@pytest.mark.parametrize(
    "x, n, lower, upper",
    [  # Newcombe (1998), Statistics in Medicine 17:857-872, Table II, method 3 (score)
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0, 0.1611),
        (1, 29, 0.0061, 0.1718),
    ],
)
def test_wilson_interval_published_examples(x, n, lower, upper):
    lo, hi = wilson_interval(x, n)
    assert (round(lo, 4), round(hi, 4)) == (lower, upper)


def test_wilson_interval_matches_scalar_formula_vectorised():
    rng = np.random.default_rng(7)
    n = rng.integers(1, 500, 200)
    x = rng.integers(0, n + 1)
    for level in (0.8, 0.95, 0.99):
        lo, hi = wilson_interval(x, n, ci_prob=level)
        assert lo.shape == hi.shape == (200,)
        for k in range(200):
            ref = wilson_reference(int(x[k]), int(n[k]), level)
            assert (lo[k], hi[k]) == pytest.approx(ref, abs=1e-12)
    assert ((0 <= lo) & (lo < hi) & (hi <= 1)).all()


def test_wilson_interval_edges_default_and_errors():
    lo, hi = wilson_interval(np.array([[0], [5]]), np.array([5, 10, 20]))
    assert lo.shape == (2, 3)
    assert lo[0, 0] == 0.0 and hi[0, 0] > 0  # 0/5: lower limit 0, never zero width
    assert hi[1, 0] == 1.0 and lo[1, 0] < 1  # 5/5: upper limit 1
    assert wilson_interval(0, 0) == (0.0, 1.0)  # no trials: no information
    assert isinstance(wilson_interval(3, 10)[0], float)
    assert wilson_interval(3, 10) == wilson_interval(3, 10, ci_prob=0.95)
    with pytest.raises(DataValidationError, match=r"successes must not exceed trials.*successes=6"):
        wilson_interval(6, 5)
    with pytest.raises(DataValidationError, match=r"ci_prob must lie in \(0, 1\).*95"):
        wilson_interval(3, 10, ci_prob=95)
    with pytest.raises(DataValidationError, match=r"trials must be an integer count"):
        wilson_interval(3, 10.5)
    # an alpha where the level goes (wald_interval's convention) is refused, as
    # lang_reiczigel_interval refuses a level where its alpha goes
    with pytest.raises(DataValidationError, match=r"ci_prob must lie in \(0.5, 1\), got "
                       r"ci_prob=0.05\. It asks for a 5% interval.*ci_prob=0.95"):
        wilson_interval(7, 20, 0.05)
