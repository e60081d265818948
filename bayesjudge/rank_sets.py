"""Simultaneous rank sets from posterior rank draws.

With posterior probability >= ``ci_prob`` every item's rank lies in its set at
once (a joint credible region over the whole ranking), as opposed to marginal
rank intervals, each of which holds its own item's rank with that probability.
"""

from __future__ import annotations

import numpy as np

__all__ = ["simultaneous_rank_sets"]


def _bounds(ranks: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    lower = np.quantile(ranks, (1 - level) / 2, axis=0, method="lower")
    upper = np.quantile(ranks, (1 + level) / 2, axis=0, method="higher")
    return lower.astype(np.int64), upper.astype(np.int64)


def _joint(ranks: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> float:
    return float(np.mean(np.all((ranks >= lower) & (ranks <= upper), axis=1)))


def simultaneous_rank_sets(rank_draws: np.ndarray, ci_prob: float) -> tuple[np.ndarray, np.ndarray]:
    """Rank intervals that hold every item's rank at once with probability >= ``ci_prob``.

    The marginal equal-tailed rank intervals at level gamma are widened (gamma raised
    by bisection from ``ci_prob`` towards 1) until the share of draws whose whole
    ranking lies inside all intervals reaches ``ci_prob``; gamma = 1 gives the draws'
    min / max ranks, which hold every draw.

    Parameters
    ----------
    rank_draws : numpy.ndarray, shape (n_draws, n_items)
        Ranks 1..n per draw.
    ci_prob : float
        Joint posterior probability of the sets, in (0, 1).

    Returns
    -------
    (lower, upper) : tuple of int arrays, shape (n_items,)
    """
    ranks = np.asarray(rank_draws)
    if ranks.ndim != 2 or not len(ranks):
        raise ValueError(f"rank_draws must be (n_draws, n_items) with n_draws >= 1; got shape "
                         f"{ranks.shape}.")
    if not 0 < ci_prob < 1:
        raise ValueError(f"ci_prob must lie in (0, 1), got {ci_prob!r}.")
    lo, hi = float(ci_prob), 1.0
    best = _bounds(ranks, hi)
    if _joint(ranks, *_bounds(ranks, lo)) >= ci_prob:
        return _bounds(ranks, lo)
    for _ in range(40):  # coverage is monotone in gamma: bisect to the smallest that holds
        mid = 0.5 * (lo + hi)
        bounds = _bounds(ranks, mid)
        if _joint(ranks, *bounds) >= ci_prob:
            hi, best = mid, bounds
        else:
            lo = mid
    return best
