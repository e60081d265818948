"""Cumulative-logit (ordered-logistic) pieces of the graded-verdict model ``OrdinalBT``.

McCullagh (1980), "Regression models for ordinal data", JRSS B 42:109-142 (the
proportional-odds model), on the Bradley-Terry margin of Qian, Sun, Gales & Knill
(2026), arXiv:2602.16610 (eq. 13): with ordered cut points
theta_1 < ... < theta_{K-1} and margin x,

.. math::

    P(Y \\ge k) = \\sigma(x - \\theta_k), \\qquad
    P(Y = k) = \\sigma(x - \\theta_k) - \\sigma(x - \\theta_{k+1})
             = \\sigma(x - \\theta_k)\\,\\sigma(\\theta_{k+1} - x)\\,
               (1 - e^{-(\\theta_{k+1} - \\theta_k)})

(theta_0 = -inf, theta_K = +inf), the product form keeping every level's log
probability accurate far in the tails. The same formula exists in pytensor (the
graph) and numpy (pointwise log-likelihood, predictions);
``tests/test_ordinal.py`` checks both against scipy.
"""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt

__all__ = ["cutpoints_pt", "n_gaps", "ordinal_log_probs", "ordinal_log_probs_pt"]


def n_gaps(n_levels: int, symmetric: bool) -> int:
    """Positive gap parameters of the cut points (symmetric: the positive half only)."""
    return (n_levels - 1) // 2 if symmetric else n_levels - 2


def ordinal_log_probs(x: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """log P(Y = k), k = 0..K-1, on a new last axis (numpy).

    ``x`` has shape (...), ``theta`` (..., K-1) (broadcast against ``x[..., None]``).
    """
    x = np.asarray(x, float)
    theta = np.asarray(theta, float)
    a = x[..., None] - theta
    lower = -np.logaddexp(0.0, -a)  # log sigma(x - theta_k) = log P(Y >= k)
    upper = -np.logaddexp(0.0, a)  # log sigma(theta_k - x) = log P(Y < k)
    k = theta.shape[-1] + 1
    out = np.empty(a.shape[:-1] + (k,))
    out[..., 0] = upper[..., 0]
    out[..., -1] = lower[..., -1]
    if k > 2:
        gap = np.diff(np.broadcast_to(theta, a.shape), axis=-1)
        with np.errstate(divide="ignore"):
            out[..., 1:-1] = lower[..., :-1] + upper[..., 1:] + np.log(-np.expm1(-gap))
    return out


def ordinal_log_probs_pt(x, theta, n_levels: int):
    """:func:`ordinal_log_probs` in pytensor: x (cells,), theta (cells, K-1) -> (cells, K)."""
    a = x[:, None] - theta
    lower = -pt.softplus(-a)
    upper = -pt.softplus(a)
    zeros = pt.zeros_like(x)[:, None]
    if n_levels == 2:
        return pt.concatenate([upper, lower], axis=1)
    # a gap below 1e-12 only on the optimiser's way to an unused level's boundary
    gap = pt.maximum(a[:, :-1] - a[:, 1:], 1e-12)  # theta_{k+1} - theta_k, per cell
    mid = pt.log(-pt.expm1(-gap))
    return (pt.concatenate([upper, zeros], axis=1) + pt.concatenate([zeros, lower], axis=1)
            + pt.concatenate([zeros, mid, zeros], axis=1))


def cutpoints_pt(gaps, location, n_levels: int, symmetric: bool):
    """Cut points (..., K-1) from the gap parameters (..., n_gaps) and the location (...).

    Symmetric: the positive cut points are the cumulative sums of the gaps, mirrored
    about 0 (an even K has a middle cut point 0). Free: 0 and the cumulative sums of
    the gaps, centred to mean 0, plus ``location`` (None: 0). ``gaps`` None: K = 2.
    """
    xp = pt
    if symmetric:
        if gaps is None:  # K = 2: the cut point 0 (Bradley-Terry)
            return xp.zeros((1,))
        c = xp.cumsum(gaps, axis=-1)
        parts = [-c[..., ::-1], c]
        if n_levels % 2 == 0:
            parts.insert(1, xp.zeros_like(c[..., :1]))
        return xp.concatenate(parts, axis=-1)
    if gaps is None:  # K = 2, one cut point: its location
        theta = xp.zeros((1,)) if location is None else location[..., None]
        return theta
    c = xp.cumsum(gaps, axis=-1)
    raw = xp.concatenate([xp.zeros_like(c[..., :1]), c], axis=-1)
    theta = raw - raw.mean(axis=-1, keepdims=True)
    return theta if location is None else theta + location[..., None]
