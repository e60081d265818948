"""Monte Carlo studies of misclassification-adjusted reporting, and an exact posterior.

Reproduces the simulations of ``misclassification_adjusted_reporting.txt``:
Section 8.1 / Figure 6 (bias of the naive and Rogan-Gladen estimators, coverage
of the naive Wald and Lang-Reiczigel intervals, interval length under equal
versus Algorithm 1 allocation) and Section 7 / Figure 5 / Appendix D (bias of
the Table 1 estimators under label shift between test and calibration sets).
It adds the Bayesian answer to the same model: an exact, vectorised
importance sampler for the posterior of theta whose credible-interval coverage
is reported next to the frequentist intervals. Every replication is an array
element; only the short grids of theta values and chunks of replications are
looped over. One ``random_seed`` (int or numpy Generator) drives everything.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from scipy.special import xlog1py, xlogy
from scipy.stats import norm

from bayesjudge.data import DataValidationError
from bayesjudge.estimators import (
    _as_counts,
    _check_at_most,
    _conditional_calibration_core,
    _lang_reiczigel_core,
    _rogan_gladen_core,
    allocate_calibration,
)

__all__ = [
    "BetaPriors",
    "PosteriorSummary",
    "bayes_posterior_theta",
    "distribution_shift_study",
    "misclassification_monte_carlo",
]

Allocation = Literal["equal", "adaptive"]
Seed = int | np.random.Generator | None

# Bound on the elements of one (replications x draws) work array, ~16 MB of float64.
_CHUNK_ELEMENTS = 2**21


# --------------------------------------------------------------------------- exact posterior


@dataclass(frozen=True)
class BetaPriors:
    """Independent Beta(a, b) priors of the misclassification model.

    Attributes
    ----------
    theta, q0, q1 : tuple of float
        ``(a, b)`` for the accuracy theta, the specificity q0 and the sensitivity q1.
        The default is uniform on all three.
    """

    theta: tuple[float, float] = (1.0, 1.0)
    q0: tuple[float, float] = (1.0, 1.0)
    q1: tuple[float, float] = (1.0, 1.0)

    def __post_init__(self) -> None:
        for name in ("theta", "q0", "q1"):
            ab = getattr(self, name)
            if len(ab) != 2 or not all(np.isfinite(v) and v > 0 for v in ab):
                raise DataValidationError(
                    f"BetaPriors.{name} must be a pair (a, b) of positive numbers, got {ab!r}. Fix: e.g. (1.0, 1.0)."
                )


@dataclass(frozen=True)
class PosteriorSummary:
    """Posterior summaries of theta, one element per replication.

    Attributes
    ----------
    mean : float or ndarray
        Posterior mean.
    lower, upper : float or ndarray
        Equal-tailed credible interval (weighted quantiles).
    hpd_lower, hpd_upper : float or ndarray
        Highest-posterior-density interval of the same probability. When the shortest
        window of draws starts at the smallest draw (ends at the largest), the density
        is highest at the edge and the interval is extended to 0 (to 1), the support
        bound; the equal-tailed interval can never contain theta = 0 or 1.
    ess : float or ndarray
        Kish effective sample size of the importance weights.
    """

    mean: float | NDArray[np.float64]
    lower: float | NDArray[np.float64]
    upper: float | NDArray[np.float64]
    hpd_lower: float | NDArray[np.float64]
    hpd_upper: float | NDArray[np.float64]
    ess: float | NDArray[np.float64]


def _row_searchsorted(cum: NDArray, targets: NDArray) -> NDArray[np.intp]:
    """Per-row ``searchsorted(cum[r], targets[r], 'left')`` in one call.

    Rows of ``cum`` lie in [0, 1] (plus round-off) and ascend, so adding 4 * row
    makes the flattened array ascending and one global search serves all rows.
    """
    rows, width = cum.shape
    offset = 4.0 * np.arange(rows)[:, None]
    flat = np.searchsorted((cum + offset).ravel(), (targets + offset).ravel(), side="left")
    return flat.reshape(targets.shape) - np.arange(rows)[:, None] * width


def _summarise(theta: NDArray, w: NDArray, ci_prob: float) -> tuple[NDArray, ...]:
    """Weighted mean, equal-tailed and HPD limits, ESS of rows of draws ``theta``."""
    rows, d = theta.shape
    total = w.sum(axis=1)
    safe_total = np.where(total > 0, total, 1.0)[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = (w * theta).sum(axis=1) / total
        ess = np.where(total > 0, total**2 / (w**2).sum(axis=1), 0.0)
    # Zero-weight draws (theta outside [0, 1]) sort last, so only the first ~(1 - ci_prob)
    # of the mass can start an HPD window and the window search stays short.
    key = np.where(w > 0, theta, np.inf)
    flat = np.argsort(key, axis=1) + (np.arange(rows) * d)[:, None]
    ts, ws = key.ravel()[flat], w.ravel()[flat] / safe_total
    cum = np.cumsum(ws, axis=1)
    before = cum - ws
    r = np.arange(rows)
    tail = (1 - ci_prob) / 2
    ends = np.minimum(_row_searchsorted(cum, np.tile([tail, 1 - tail], (rows, 1))), d - 1)
    lower, upper = ts[r, ends[:, 0]], ts[r, ends[:, 1]]
    # HPD: for each admissible start i, the first end j holding ci_prob; keep the narrowest.
    k = max(1, int((before <= 1 - ci_prob).sum(axis=1).max()))
    j = _row_searchsorted(cum, before[:, :k] + ci_prob)
    fits = (j < d) & (ws[:, :k] > 0)
    with np.errstate(invalid="ignore"):  # inf - inf where a start has zero weight; masked by fits
        width = np.where(fits, np.take_along_axis(ts, np.minimum(j, d - 1), axis=1) - ts[:, :k], np.inf)
    i_best = np.argmin(width, axis=1)
    j_best = np.minimum(j[r, i_best], d - 1)
    hpd_lower = np.where(before[r, i_best] <= 0, 0.0, ts[r, i_best])
    hpd_upper = np.where(cum[r, j_best] >= 1 - 1e-12, 1.0, ts[r, j_best])
    out = [mean, lower, upper, hpd_lower, hpd_upper, ess]
    for x in out[1:5]:
        x[~(total > 0)] = np.nan
    return tuple(out)


def bayes_posterior_theta(
    judged_pos: ArrayLike,
    n: ArrayLike,
    tp: ArrayLike,
    m1: ArrayLike,
    tn: ArrayLike,
    m0: ArrayLike,
    prior: BetaPriors | None = None,
    n_draws: int = 4000,
    ci_prob: float = 0.95,
    rng: Seed = None,
    max_draws: int = 2**20,
) -> PosteriorSummary:
    r"""Exact posterior of theta by self-normalised importance sampling, vectorised.

    Model: :math:`\theta\sim\text{Beta}(a_t,b_t)`, :math:`q_0\sim\text{Beta}(a_0,b_0)`,
    :math:`q_1\sim\text{Beta}(a_1,b_1)`, :math:`tn\sim\text{Bin}(m_0,q_0)`,
    :math:`tp\sim\text{Bin}(m_1,q_1)`, :math:`x\sim\text{Bin}(n,p)` with
    :math:`p = \theta q_1 + (1-\theta)(1-q_0)` (Section 5.1) and ``x = judged_pos``.

    Derivation. Change variables :math:`(\theta,q_0,q_1)\to(p,q_0,q_1)`; with
    :math:`J = q_0+q_1-1`, :math:`\partial p/\partial\theta = J`, so the posterior density
    in the new coordinates is

    .. math:: \pi(p,q_0,q_1\mid\text{data}) \propto
       \underbrace{q_0^{a_0+tn-1}(1-q_0)^{b_0+m_0-tn-1}}_{\text{Beta}(a_0+tn,\,b_0+m_0-tn)}
       \underbrace{q_1^{a_1+tp-1}(1-q_1)^{b_1+m_1-tp-1}}_{\text{Beta}(a_1+tp,\,b_1+m_1-tp)}
       \underbrace{p^{x}(1-p)^{n-x}}_{\text{Beta}(x+1,\,n-x+1)}
       \cdot\frac{\pi_\theta(\theta)\,\mathbf 1[0\le\theta\le1]}{|J|},\quad
       \theta = \frac{p+q_0-1}{J}.

    Drawing :math:`(q_0,q_1,p)` from the three Beta factors (the proposal) leaves the
    importance weight :math:`w = \mathbf 1[0\le\theta\le1]\,\pi_\theta(\theta)/|J|`. The
    indicator also enforces :math:`p\in[\min(1-q_0,q_1),\max(1-q_0,q_1)]`, the image of
    :math:`\theta\in[0,1]`. Self-normalising the weights makes the estimates consistent
    as ``n_draws`` grows, with no approximation of the model.

    Parameters
    ----------
    judged_pos, n, tp, m1, tn, m0 : array_like of int
        Counts as in :func:`bayesjudge.estimators.rogan_gladen`, broadcast together;
        empty classes (``m0 == 0``) are allowed, the prior then carries q0.
    prior : BetaPriors, optional
        Beta priors; uniform on theta, q0 and q1 by default.
    n_draws : int, default 4000
        Importance draws per replication.
    ci_prob : float, default 0.95
        Probability of the credible intervals.
    rng : int or numpy.random.Generator, optional
        Seed or generator for the draws.
    max_draws : int, default 2**20
        Cap for the redraws of replications whose effective sample size falls below
        ``n_draws / 10``; these are rerun with 4, 16, 64, ... times ``n_draws`` draws. This
        happens when the data conflict with :math:`\theta\in[0,1]` (e.g. the Rogan-Gladen
        estimate is below 0), so that few proposal draws land in [0, 1]. Replications
        with no draw in [0, 1] even then get NaN summaries and ``ess == 0``.

    Returns
    -------
    PosteriorSummary
        Arrays with the broadcast shape of the counts (floats for scalar counts).

    Notes
    -----
    Replications with identical counts share their Beta proposal draws (sampling is the
    bottleneck of a Monte Carlo study); each replication's estimate is still the exact
    sampler above, only the Monte Carlo errors of such replications are dependent. The
    redraws of low-ESS replications keep the same proposal, so the estimator is unchanged;
    only its Monte Carlo error shrinks.

    Examples
    --------
    >>> post = bayes_posterior_theta(480, 1000, 90, 100, 70, 100, rng=0)
    >>> bool(post.lower < post.mean < post.upper)
    True
    """
    prior = BetaPriors() if prior is None else prior
    if not 0 < ci_prob < 1:
        raise DataValidationError(f"ci_prob must lie in (0, 1), got {ci_prob}. Fix: e.g. ci_prob=0.95.")
    if int(n_draws) != n_draws or n_draws < 2:
        raise DataValidationError(f"n_draws must be an integer >= 2, got {n_draws!r}. Fix: e.g. n_draws=4000.")
    a = _as_counts(judged_pos=judged_pos, n=n, tp=tp, m1=m1, tn=tn, m0=m0)
    _check_at_most("judged_pos", "n", a, "judged_pos is the number of the n test items the judge called 'correct'.")
    _check_at_most("tp", "m1", a, "tp is the number of the m1 human-'correct' items the judge called 'correct'.")
    _check_at_most("tn", "m0", a, "tn is the number of the m0 human-'incorrect' items the judge called 'incorrect'.")
    if int(max_draws) != max_draws or max_draws < n_draws:
        raise DataValidationError(f"max_draws must be an integer >= n_draws, got {max_draws!r}. Fix: e.g. 2**20.")
    rng = np.random.default_rng(rng)
    shape = np.broadcast_shapes(*(v.shape for v in a.values()))
    counts = np.stack([np.broadcast_to(a[k], shape).ravel() for k in ("judged_pos", "n", "tp", "m1", "tn", "m0")])
    out = np.full((6, counts.shape[1]), np.nan)
    rows, draws = np.arange(counts.shape[1]), int(n_draws)
    # Where the data pull the unconstrained estimate outside [0, 1] (theta near 0 or 1) few
    # proposal draws land in [0, 1]; only those rows are redrawn, with 4x the draws each round.
    while rows.size:
        chunk = max(1, _CHUNK_ELEMENTS // draws)
        for s in range(0, rows.size, chunk):
            idx = rows[s : s + chunk]
            out[:, idx] = _posterior_rows(counts[:, idx], prior, draws, ci_prob, rng)
        rows = rows[~(out[5, rows] >= n_draws / 10)]
        draws *= 4
        if draws > max_draws:
            break
    return PosteriorSummary(*(f.reshape(shape)[()] if shape else float(f[0]) for f in out))


def _posterior_rows(
    counts: NDArray, prior: BetaPriors, draws: int, ci_prob: float, rng: np.random.Generator
) -> NDArray:
    """Importance-sample the rows of ``counts`` (x, n, tp, m1, tn, m0); stacked summaries."""
    x, n, tp, m1, tn, m0 = counts
    (a0, b0), (a1, b1), (at, bt) = prior.q0, prior.q1, prior.theta
    q0 = _beta_rows(a0 + tn, b0 + m0 - tn, draws, rng)
    q1 = _beta_rows(a1 + tp, b1 + m1 - tp, draws, rng)
    p = _beta_rows(x + 1, n - x + 1, draws, rng)
    youden = q0 + q1 - 1
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        theta = (p + q0 - 1) / youden
        inside = (theta >= 0) & (theta <= 1)
        w = np.where(inside, 1.0 / np.abs(youden), 0.0)
        if (at, bt) != (1.0, 1.0):
            w = np.where(inside, w * np.exp(xlogy(at - 1, theta) + xlog1py(bt - 1, -theta)), 0.0)
    w[~np.isfinite(w)] = 0.0  # a prior pole hit exactly at theta = 0 or 1 has probability zero
    return np.stack(_summarise(theta, w, ci_prob))


def _beta_rows(a: NDArray, b: NDArray, draws: int, rng: np.random.Generator) -> NDArray:
    """``draws`` Beta(a[r], b[r]) variates per row r.

    Rows with the same (a, b) share one bank of draws: counts repeat heavily across
    Monte Carlo replications, and Beta sampling is the bottleneck. Each row still gets
    iid draws from its own proposal (its estimate stays exact); only the Monte Carlo
    errors of rows with equal counts are dependent.
    """
    pairs, inv = np.unique(np.stack([a, b], axis=1), axis=0, return_inverse=True)
    return rng.beta(pairs[:, :1], pairs[:, 1:], size=(len(pairs), draws))[inv.ravel()]


# --------------------------------------------------------------------------- Section 8.1


def _coverage_rows(
    truth: float, est: NDArray, lower: NDArray, upper: NDArray, **keys: object
) -> dict[str, object]:
    valid = np.isfinite(est) & np.isfinite(lower) & np.isfinite(upper)
    err = est[valid] - truth
    covered = (lower[valid] <= truth) & (truth <= upper[valid])
    return {
        **keys,
        "bias": err.mean(),
        "rmse": np.sqrt((err**2).mean()),
        "coverage": covered.mean(),
        "mean_length": (upper[valid] - lower[valid]).mean(),
        "n_valid": int(valid.sum()),
    }


def misclassification_monte_carlo(
    *,
    q0: float = 0.7,
    q1: float = 0.9,
    thetas: ArrayLike | None = None,
    n: int = 1000,
    m: int = 200,
    m_pilot: int = 10,
    n_rep: int = 10_000,
    alpha: float = 0.05,
    allocations: tuple[Allocation, ...] = ("equal", "adaptive"),
    bayes: bool = True,
    n_draws: int = 500,
    prior: BetaPriors | None = None,
    random_seed: Seed = None,
) -> pd.DataFrame:
    r"""Monte Carlo study of Section 8.1 (Figure 6), plus the Bayesian posterior.

    For each theta: ``judged_pos ~ Bin(n, p)`` with :math:`p = \theta q_1 + (1-\theta)(1-q_0)`;
    a calibration set of ``m`` human labels, split either equally (:math:`m_0 = m_1`) or by
    Algorithm 1 (a pilot of ``m_pilot`` per class, kept in the set, then
    :func:`~bayesjudge.estimators.allocate_calibration` from :math:`\hat p` and the pilot);
    ``tn ~ Bin(m0, q0)``, ``tp ~ Bin(m1, q1)``. Both allocations share the test data.

    Parameters
    ----------
    q0, q1 : float, default 0.7, 0.9
        True specificity and sensitivity of the judge.
    thetas : array_like, optional
        True accuracies; default the paper's 21 values 0, 0.05, ..., 1.
    n, m, m_pilot : int, default 1000, 200, 10
        Test-set size, calibration budget, pilot items per class.
    n_rep : int, default 10000
        Replications per theta.
    alpha : float, default 0.05
        One minus the confidence / credible level.
    allocations : tuple of {"equal", "adaptive"}
        Calibration designs to run.
    bayes : bool, default True
        Also compute the posterior of :func:`bayes_posterior_theta` for every replication
        (the expensive part: ``n_rep * len(thetas) * len(allocations) * n_draws`` draws).
    n_draws : int, default 500
        Importance draws per replication for the posterior (more for replications with
        low effective sample size, see :func:`bayes_posterior_theta`). The Monte Carlo
        jitter of the interval limits costs under 0.2 points of coverage at 500 draws.
    prior : BetaPriors, optional
        Priors for the posterior; uniform by default.
    random_seed : int or numpy.random.Generator, optional
        Seed or generator for all simulation and sampling.

    Returns
    -------
    pandas.DataFrame
        Tidy: one row per ``theta`` x ``allocation`` x ``method`` with ``method`` in
        ``naive_wald`` (:math:`\hat p` and its Wald interval; it ignores the calibration
        set, so its rows repeat across allocations), ``lang_reiczigel`` (clipped
        :math:`\hat\theta`, eq. 5, and the interval of eq. 6), ``bayes_equal_tailed`` and
        ``bayes_hpd`` (posterior mean and credible intervals), and columns ``bias``,
        ``rmse`` (of the point estimate), ``coverage``, ``mean_length``, ``n_valid``
        (replications where the method is defined, e.g. not :math:`\hat q_0 + \hat q_1 \le 1`),
        ``mean_m0``, ``mean_m1``.
    """
    thetas = np.linspace(0.0, 1.0, 21) if thetas is None else np.asarray(thetas, dtype=np.float64)
    if not (np.all((thetas >= 0) & (thetas <= 1)) and 0 <= q0 <= 1 and 0 <= q1 <= 1):
        raise DataValidationError(
            f"thetas, q0 and q1 must lie in [0, 1]; got thetas={thetas}, q0={q0}, q1={q1}. Fix: pass probabilities."
        )
    unknown = set(allocations) - {"equal", "adaptive"}
    if unknown:
        raise DataValidationError(f"allocations must be 'equal' or 'adaptive', got {sorted(unknown)}. Fix: e.g. ('equal',).")
    if int(n_rep) != n_rep or n_rep < 1:
        raise DataValidationError(f"n_rep must be a positive integer, got {n_rep!r}. Fix: e.g. n_rep=10_000.")
    _as_counts(n=n, m=m, m_pilot=m_pilot)
    if not 0 < alpha < 1:
        raise DataValidationError(f"alpha must lie in (0, 1), got {alpha}. Fix: e.g. alpha=0.05.")
    rng = np.random.default_rng(random_seed)
    z = float(norm.ppf(1 - alpha / 2))
    shape = (len(thetas), int(n_rep))
    th = thetas[:, None]
    x = rng.binomial(n, th * q1 + (1 - th) * (1 - q0), size=shape).astype(np.float64)
    p_hat = x / n
    half = z * np.sqrt(p_hat * (1 - p_hat) / n)
    naive = (p_hat, np.clip(p_hat - half, 0, 1), np.clip(p_hat + half, 0, 1))

    rows = []
    for allocation in allocations:
        if allocation == "equal":
            m1 = np.full(shape, m // 2)
            m0 = m - m1
            tn = rng.binomial(m0, q0)
            tp = rng.binomial(m1, q1)
        else:
            tn_pilot = rng.binomial(m_pilot, q0, size=shape)
            tp_pilot = rng.binomial(m_pilot, q1, size=shape)
            m0, m1 = allocate_calibration(m, p_hat, tn_pilot / m_pilot, tp_pilot / m_pilot, m_pilot)
            # Algorithm 1 keeps the pilot items: only the remainder of each class is new.
            tn = tn_pilot + rng.binomial(m0 - m_pilot, q0)
            tp = tp_pilot + rng.binomial(m1 - m_pilot, q1)
        m0, m1, tn, tp = (np.asarray(v, dtype=np.float64) for v in (m0, m1, tn, tp))
        q0_hat, q1_hat = tn / m0, tp / m1
        identifiable = q0_hat + q1_hat > 1
        theta_hat = np.where(identifiable, np.clip(_rogan_gladen_core(p_hat, q0_hat, q1_hat), 0, 1), np.nan)
        _, lo, hi, q0_t, q1_t = _lang_reiczigel_core(x, n, tp, m1, tn, m0, z)
        ok_t = q0_t + q1_t > 1
        methods = {
            "naive_wald": naive,
            "lang_reiczigel": (theta_hat, np.where(ok_t, lo, np.nan), np.where(ok_t, hi, np.nan)),
        }
        if bayes:
            post = bayes_posterior_theta(x, n, tp, m1, tn, m0, prior=prior, n_draws=n_draws, ci_prob=1 - alpha, rng=rng)
            methods["bayes_equal_tailed"] = (post.mean, post.lower, post.upper)
            methods["bayes_hpd"] = (post.mean, post.hpd_lower, post.hpd_upper)
        for k, theta in enumerate(thetas):
            for method, (est, lower, upper) in methods.items():
                row = _coverage_rows(theta, est[k], lower[k], upper[k], theta=theta, allocation=allocation, method=method)
                rows.append({**row, "mean_m0": m0[k].mean(), "mean_m1": m1[k].mean()})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- Section 7


def distribution_shift_study(
    *,
    theta_p: float = 0.5,
    theta_q: ArrayLike | None = None,
    q0: float = 0.7,
    q1: float = 0.9,
    n: int = 1000,
    m: int = 200,
    n_rep: int = 10_000,
    random_seed: Seed = None,
) -> pd.DataFrame:
    r"""Label-shift study of Section 7 (Figure 5, Appendix D) with the Table 1 estimators.

    The judge behaves identically on both sets (:math:`\Pr(\hat Z\mid Z)` fixed by q0, q1);
    the test set has accuracy ``theta_p`` and the calibration set ``theta_q``:
    ``judged_pos ~ Bin(n, p_P)``, ``m1 ~ Bin(m, theta_q)``, ``m0 = m - m1``,
    ``tp ~ Bin(m1, q1)``, ``tn ~ Bin(m0, q0)``.

    Parameters
    ----------
    theta_p : float, default 0.5
        Test-set accuracy :math:`\theta_P`.
    theta_q : array_like, optional
        Calibration-set accuracies :math:`\theta_Q`; default 11 values in [0.25, 0.75]
        (shift ratio :math:`\theta_Q/\theta_P` from 0.5 to 1.5).
    q0, q1 : float, default 0.7, 0.9
        Specificity and sensitivity of the judge.
    n, m : int, default 1000, 200
        Test and calibration set sizes.
    n_rep : int, default 10000
        Replications per :math:`\theta_Q`.
    random_seed : int or numpy.random.Generator, optional

    Returns
    -------
    pandas.DataFrame
        Tidy: one row per ``theta_q`` x ``estimator`` (``naive``, ``calibration_only``,
        ``difference``, ``conditional_calibration``, ``misclassification_adjusted`` — the
        unclipped eq. 5, as in Table 1), with ``shift_ratio``, ``mean``, ``bias``
        (mean minus ``theta_p``), ``sd`` and ``n_valid`` (replications where the
        estimator is defined).
    """
    theta_q = np.linspace(0.25, 0.75, 11) if theta_q is None else np.asarray(theta_q, dtype=np.float64)
    if not (np.all((theta_q >= 0) & (theta_q <= 1)) and 0 <= theta_p <= 1 and 0 <= q0 <= 1 and 0 <= q1 <= 1):
        raise DataValidationError(
            f"theta_p, theta_q, q0 and q1 must lie in [0, 1]; got theta_p={theta_p}, theta_q={theta_q}, "
            f"q0={q0}, q1={q1}. Fix: pass probabilities."
        )
    if int(n_rep) != n_rep or n_rep < 1:
        raise DataValidationError(f"n_rep must be a positive integer, got {n_rep!r}. Fix: e.g. n_rep=10_000.")
    _as_counts(n=n, m=m)
    rng = np.random.default_rng(random_seed)
    shape = (len(theta_q), int(n_rep))
    p_hat = rng.binomial(n, theta_p * q1 + (1 - theta_p) * (1 - q0), size=shape) / n
    m1 = rng.binomial(m, theta_q[:, None], size=shape).astype(np.float64)
    m0 = m - m1
    tp = rng.binomial(m1.astype(np.int64), q1).astype(np.float64)
    tn = rng.binomial(m0.astype(np.int64), q0).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        q0_hat, q1_hat = tn / m0, tp / m1
        estimates = {
            "naive": p_hat,
            "calibration_only": m1 / m,
            "difference": p_hat + ((m1 - tp) - (m0 - tn)) / m,
            "conditional_calibration": _conditional_calibration_core(p_hat, tp, m1, tn, m0),
            "misclassification_adjusted": np.where(
                q0_hat + q1_hat > 1, _rogan_gladen_core(p_hat, q0_hat, q1_hat), np.nan
            ),
        }
    rows = []
    for k, tq in enumerate(theta_q):
        for name, est in estimates.items():
            e = est[k][np.isfinite(est[k])]
            rows.append(
                {
                    "theta_q": tq,
                    "shift_ratio": tq / theta_p if theta_p > 0 else np.nan,
                    "estimator": name,
                    "mean": e.mean(),
                    "bias": e.mean() - theta_p,
                    "sd": e.std(ddof=1),
                    "n_valid": e.size,
                }
            )
    return pd.DataFrame(rows)
