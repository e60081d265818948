"""Exact posterior of a judge's true accuracy by vectorised importance sampling.

The misclassification model of Lee, Zeng, Jeong, Sohn & Lee (2025), "How to
Correctly Report LLM-as-a-Judge Evaluations", arXiv:2511.21140 (Section 5.1),
with independent Beta priors, has a posterior of theta that an importance
sampler with Beta proposals computes exactly (up to Monte Carlo error) and fast:
every replication of a simulation study is an array element, so thousands of
posteriors cost one vectorised call. :func:`bayes_posterior_theta` is the same
posterior :class:`~bayesjudge.models.misclassification.model.MisclassificationModel`
samples by NUTS under the same priors.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import xlog1py, xlogy

from bayesjudge.constants import CI_PROB
from bayesjudge.data import DataValidationError
from bayesjudge.estimators.validation import check_ci_prob, validate_count_table
from bayesjudge.priors import Prior

__all__ = ["PARAMETERS", "PosteriorSummary", "bayes_posterior_theta", "beta_parameters"]

Seed = int | np.random.Generator | None

#: Names of the model's probabilities (as in ``MisclassificationModel``): the accuracy
#: theta, the specificity q0 and the sensitivity q1.
PARAMETERS = ("accuracy", "specificity", "sensitivity")

# Bound on the elements of one (replications x draws) work array, ~16 MB of float64.
_CHUNK_ELEMENTS = 2**21


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


def beta_parameters(priors: Mapping[str, Prior] | None) -> dict[str, tuple[float, float]]:
    """``(alpha, beta)`` of the Beta prior of each model probability.

    Parameters
    ----------
    priors : mapping of str to Prior, optional
        Keys among ``"accuracy"`` (theta), ``"specificity"`` (q0) and ``"sensitivity"``
        (q1); values ``Prior("Beta", alpha=a, beta=b)`` with positive finite ``a``, ``b``.
        Missing keys (and ``None``) mean Beta(1, 1), the uniform prior.

    Returns
    -------
    dict
        ``{"accuracy": (a, b), "specificity": (a, b), "sensitivity": (a, b)}``.

    Raises
    ------
    DataValidationError
        For unknown keys, non-Beta priors and invalid Beta parameters, naming the key,
        the bad value and the fix.

    Examples
    --------
    >>> beta_parameters({"accuracy": Prior("Beta", alpha=2, beta=5)})["accuracy"]
    (2.0, 5.0)
    """
    out = dict.fromkeys(PARAMETERS, (1.0, 1.0))
    if priors is None:
        return out
    if not isinstance(priors, Mapping):
        raise DataValidationError(
            f"priors must be a mapping of parameter name to Prior, got {priors!r}. Fix: e.g. "
            'priors={"accuracy": Prior("Beta", alpha=2, beta=5)}, or None for uniform priors.'
        )
    unknown = sorted(set(priors) - set(PARAMETERS))
    if unknown:
        raise DataValidationError(
            f"priors has unknown key(s) {unknown}; the parameters are {list(PARAMETERS)} "
            "(accuracy = theta, specificity = q0, sensitivity = q1). Fix: rename the key(s)."
        )
    fix = 'Fix: pass Prior("Beta", alpha=a, beta=b) with a, b > 0, e.g. alpha=2, beta=5.'
    for name, prior in priors.items():
        if not isinstance(prior, Prior) or prior.dist != "Beta":
            raise DataValidationError(
                f"priors[{name!r}] must be a Beta prior, got {prior!r}: the importance sampler "
                f"handles Beta priors only. {fix}"
            )
        if set(prior.params) != {"alpha", "beta"}:
            raise DataValidationError(
                f"priors[{name!r}] = {prior!r} must give alpha and beta (and nothing else), "
                f"got parameter(s) {sorted(prior.params)}. {fix}"
            )
        ab = (prior.params["alpha"], prior.params["beta"])
        try:
            ab = tuple(float(v) for v in ab)
        except (TypeError, ValueError):
            ab = (np.nan, np.nan)
        if not all(np.isfinite(v) and v > 0 for v in ab):
            raise DataValidationError(
                f"priors[{name!r}] = {prior!r} needs positive finite alpha and beta. {fix}"
            )
        out[name] = ab
    return out


def bayes_posterior_theta(
    judged_pos: ArrayLike,
    n: ArrayLike,
    tp: ArrayLike,
    m1: ArrayLike,
    tn: ArrayLike,
    m0: ArrayLike,
    priors: Mapping[str, Prior] | None = None,
    n_draws: int = 4000,
    ci_prob: float = CI_PROB,
    rng: Seed = None,
    max_draws: int = 2**20,
    share_draws: bool = True,
) -> PosteriorSummary:
    r"""Exact posterior of theta by self-normalised importance sampling, vectorised.

    Model: :math:`\theta\sim\text{Beta}(a_t,b_t)`, :math:`q_0\sim\text{Beta}(a_0,b_0)`,
    :math:`q_1\sim\text{Beta}(a_1,b_1)`, :math:`tn\sim\text{Bin}(m_0,q_0)`,
    :math:`tp\sim\text{Bin}(m_1,q_1)`, :math:`x\sim\text{Bin}(n,p)` with
    :math:`p = \theta q_1 + (1-\theta)(1-q_0)` (Lee et al., 2025, Section 5.1) and
    ``x = judged_pos``.

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
    priors : mapping of str to Prior, optional
        Beta priors by the parameter names of
        :class:`~bayesjudge.models.misclassification.model.MisclassificationModel`:
        ``"accuracy"`` (theta), ``"specificity"`` (q0), ``"sensitivity"`` (q1), e.g.
        ``{"accuracy": Prior("Beta", alpha=2, beta=5)}``. Missing keys mean Beta(1, 1);
        see :func:`beta_parameters`.
    n_draws : int, default 4000
        Importance draws per replication.
    ci_prob : float, default CI_PROB (0.95)
        Probability of the credible intervals.
    rng : int or numpy.random.Generator, optional
        Seed or generator for the draws.
    share_draws : bool, default True
        Replications with identical counts share their Beta proposal draws (see Notes).
        False gives every replication its own draws, so that the Monte Carlo errors of
        an average over replications are independent and its standard error honest
        (:func:`~bayesjudge.models.misclassification.allocation.bayesian_allocation`).
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

    Raises
    ------
    DataValidationError
        For invalid counts, priors (:func:`beta_parameters`), ``ci_prob``, ``n_draws`` or
        ``max_draws``.

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
    ab = beta_parameters(priors)
    ci_prob = check_ci_prob(ci_prob)
    if int(n_draws) != n_draws or n_draws < 2:
        raise DataValidationError(
            f"n_draws must be an integer >= 2, got {n_draws!r}. Fix: e.g. n_draws=4000."
        )
    a = validate_count_table(judged_pos, n, tp, m1, tn, m0, allow_empty=True)
    if int(max_draws) != max_draws or max_draws < n_draws:
        raise DataValidationError(
            f"max_draws must be an integer >= n_draws, got {max_draws!r}. Fix: e.g. 2**20."
        )
    rng = np.random.default_rng(rng)
    shape = np.broadcast_shapes(*(v.shape for v in a.values()))
    names = ("judged_pos", "n", "tp", "m1", "tn", "m0")
    counts = np.stack([np.broadcast_to(a[k], shape).ravel() for k in names])
    out = np.full((6, counts.shape[1]), np.nan)
    rows, draws = np.arange(counts.shape[1]), int(n_draws)
    # Where the data pull the unconstrained estimate outside [0, 1] (theta near 0 or 1) few
    # proposal draws land in [0, 1]; only those rows are redrawn, with 4x the draws each round.
    while rows.size:
        chunk = max(1, _CHUNK_ELEMENTS // draws)
        for s in range(0, rows.size, chunk):
            idx = rows[s : s + chunk]
            out[:, idx] = _posterior_rows(counts[:, idx], ab, draws, ci_prob, rng,
                                          share_draws)
        rows = rows[~(out[5, rows] >= n_draws / 10)]
        draws *= 4
        if draws > max_draws:
            break
    return PosteriorSummary(*(f.reshape(shape)[()] if shape else float(f[0]) for f in out))


def _posterior_rows(
    counts: NDArray,
    ab: dict[str, tuple[float, float]],
    draws: int,
    ci_prob: float,
    rng: np.random.Generator,
    share_draws: bool = True,
) -> NDArray:
    """Importance-sample the rows of ``counts`` (x, n, tp, m1, tn, m0); stacked summaries."""
    x, n, tp, m1, tn, m0 = counts
    (a0, b0), (a1, b1) = ab["specificity"], ab["sensitivity"]
    at, bt = ab["accuracy"]
    q0 = _beta_rows(a0 + tn, b0 + m0 - tn, draws, rng, share_draws)
    q1 = _beta_rows(a1 + tp, b1 + m1 - tp, draws, rng, share_draws)
    p = _beta_rows(x + 1, n - x + 1, draws, rng, share_draws)
    youden = q0 + q1 - 1
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        theta = (p + q0 - 1) / youden
        inside = (theta >= 0) & (theta <= 1)
        w = np.where(inside, 1.0 / np.abs(youden), 0.0)
        if (at, bt) != (1.0, 1.0):
            log_prior = xlogy(at - 1, theta) + xlog1py(bt - 1, -theta)
            w = np.where(inside, w * np.exp(log_prior), 0.0)
    w[~np.isfinite(w)] = 0.0  # a prior pole hit exactly at theta = 0 or 1 has probability zero
    return np.stack(_summarise(theta, w, ci_prob))


def _beta_rows(a: NDArray, b: NDArray, draws: int, rng: np.random.Generator,
               share: bool = True) -> NDArray:
    """``draws`` Beta(a[r], b[r]) variates per row r.

    ``share``: rows with the same (a, b) share one bank of draws: counts repeat heavily
    across Monte Carlo replications, and Beta sampling is the bottleneck. Each row still
    gets iid draws from its own proposal (its estimate stays exact); only the Monte Carlo
    errors of rows with equal counts are dependent.
    """
    if not share:
        a, b = np.broadcast_arrays(a, b)
        return rng.beta(a[:, None], b[:, None], size=(len(a), draws))
    pairs, inv = np.unique(np.stack([a, b], axis=1), axis=0, return_inverse=True)
    return rng.beta(pairs[:, :1], pairs[:, 1:], size=(len(pairs), draws))[inv.ravel()]


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
        ends_k = np.take_along_axis(ts, np.minimum(j, d - 1), axis=1)
        width = np.where(fits, ends_k - ts[:, :k], np.inf)
    i_best = np.argmin(width, axis=1)
    j_best = np.minimum(j[r, i_best], d - 1)
    hpd_lower = np.where(before[r, i_best] <= 0, 0.0, ts[r, i_best])
    hpd_upper = np.where(cum[r, j_best] >= 1 - 1e-12, 1.0, ts[r, j_best])
    out = [mean, lower, upper, hpd_lower, hpd_upper, ess]
    for x in out[1:5]:
        x[~(total > 0)] = np.nan
    return tuple(out)
