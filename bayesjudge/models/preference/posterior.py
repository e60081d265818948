"""Closed-form posterior pieces of the preference-distribution model (numpy / scipy only).

Given the population hyperparameters, an item's preference distribution p*(x)
(Li, Li, Huang et al. (2025), "Judging with Confidence: Calibrating Autoraters to
Preference Distributions", arXiv:2510.00263, section 2.1) has a conjugate
posterior: with a Dirichlet(alpha) population over (A, tie, B) and counts
k = (k_A, k_tie, k_B) of m annotators, pi | k ~ Dirichlet(alpha + k), so each
component is Beta(alpha_j + k_j, sum(alpha) + m - alpha_j - k_j) (the binary
model is the two-category case, Beta(mu kappa + k_B, (1 - mu) kappa + k_A)).
The marginal of the counts is Dirichlet-multinomial (Beta-binomial with two
categories). Posterior summaries over the hyperparameter posterior are
mixtures of these Betas, evaluated per distinct count pattern.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from bayesjudge.data import show_values
from bayesjudge.engine import warn_user

__all__ = [
    "beta_mixture_quantiles",
    "beta_raw_moments",
    "dirichlet_multinomial_logpmf",
    "log_multinomial_coefficient",
    "unique_rows",
]


def unique_rows(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct count patterns and, per row, the index of its pattern."""
    patterns, inverse = np.unique(counts, axis=0, return_inverse=True)
    return patterns, inverse.ravel()


def log_multinomial_coefficient(counts: np.ndarray) -> np.ndarray:
    """log( m! / prod_j k_j! ) of each row of ``counts`` (last axis = categories)."""
    counts = np.asarray(counts, dtype=float)
    return special.gammaln(counts.sum(-1) + 1) - special.gammaln(counts + 1).sum(-1)


def dirichlet_multinomial_logpmf(counts: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """Dirichlet-multinomial log pmf of count vectors (Beta-binomial with 2 categories).

    ``log C(m; k) + lgamma(A) - lgamma(m + A) + sum_j [lgamma(k_j + a_j) - lgamma(a_j)]``,
    ``A = sum_j a_j``; ``counts`` and ``alpha`` broadcast on the last axis.
    """
    counts = np.asarray(counts, dtype=float)
    alpha = np.asarray(alpha, dtype=float)
    total = alpha.sum(-1)
    m = counts.sum(-1)
    return (log_multinomial_coefficient(counts) + special.gammaln(total)
            - special.gammaln(m + total)
            + (special.gammaln(counts + alpha) - special.gammaln(alpha)).sum(-1))


def beta_raw_moments(a: np.ndarray, b: np.ndarray, order: int = 4) -> list[np.ndarray]:
    """E[X^r], r = 0..order, of X ~ Beta(a, b): prod_{s<r} (a + s) / (a + b + s)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    out = [np.ones(np.broadcast(a, b).shape)]
    for s in range(order):
        out.append(out[-1] * (a + s) / (a + b + s))
    return out


def beta_mixture_quantiles(
    a: np.ndarray, b: np.ndarray, probs: tuple[float, ...], *, tol: float = 1e-10
) -> np.ndarray:
    """Quantiles of equal-weight mixtures of Beta(a[..., s], b[..., s]) over the last axis.

    One mixture per leading index (a distinct count pattern); the components are
    the conditional posteriors at the hyperparameter draws. Solved by bisection
    on the mixture CDF (exact up to ``tol``); with one component it is
    ``scipy.stats.beta.ppf``. A parameter of 0 is the limit point mass at 0 (a
    = 0) or 1 (b = 0).

    Returns
    -------
    ndarray, shape (len(probs), *a.shape[:-1])
    """
    a, b = np.broadcast_arrays(np.asarray(a, float), np.asarray(b, float))
    if a.shape[-1] == 1:
        from scipy import stats  # imported here: scipy.stats costs ~1 s at import

        with np.errstate(invalid="ignore"):
            q = np.stack([stats.beta.ppf(p, a[..., 0], b[..., 0]) for p in probs])
        q = np.where(a[..., 0] == 0, 0.0, q)
        return np.where(b[..., 0] == 0, 1.0, q)
    out = []
    for p in probs:
        lo = np.zeros(a.shape[:-1])
        hi = np.ones(a.shape[:-1])
        while np.max(hi - lo) > tol:
            mid = 0.5 * (lo + hi)
            cdf = special.betainc(a, b, mid[..., None]).mean(-1)
            below = cdf < p
            lo = np.where(below, mid, lo)
            hi = np.where(below, hi, mid)
        out.append(0.5 * (lo + hi))
    return np.stack(out)


def warn_degenerate_intervals(table, names: list[str]) -> None:
    """Warn naming the items whose ``p_<name>`` interval has zero width (MAP
    hyperparameters at an edge: mu or kappa driven to 0 or infinity, the Beta quantiles
    underflowing to one number). An estimate outside a narrow or skewed equal-tailed
    interval is no sign of it: a Beta's mean can lie outside its central interval."""
    bad = np.zeros(len(table), dtype=bool)
    for name in names:
        lo, hi = (table[f"p_{name}{s}"].to_numpy(float) for s in ("_lower", "_upper"))
        bad |= hi - lo <= 0
    if bad.any():
        warn_user(
            f"predict: the p* intervals of {bad.sum()} item(s) "
            f"({show_values(table['item'][bad].tolist())}) have zero width: the MAP "
            f"hyperparameters sit at an edge of their range (every annotation agrees, or too "
            f"few items to learn the population), so these empirical-Bayes intervals say "
            f"nothing. Fix: refit with method='nuts'.")
