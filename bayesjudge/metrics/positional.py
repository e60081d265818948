"""Positional bias of a probabilistic judge: swap consistency and symmetry deviation.

Implements Section 5.2 of Z. Li, X. Li, C. Huang et al. (2025), "Judging with
Confidence: Calibrating Autoraters to Preference Distributions", arXiv:2510.00263.
Each item is judged twice: :math:`p_{orig}` predicts :math:`\\Pr[B \\succ A \\mid x]`
from the original prompt and :math:`p_{swap}` predicts :math:`\\Pr[A \\succ B \\mid x]`
from the prompt with the two responses swapped (in the judge outputs table:
``prob`` and ``prob_swapped``). Both are the probability that the response shown
*second* is better, so an order-blind judge has :math:`p_{orig} + p_{swap} = 1`.
Functions are vectorised and batch-aware like :mod:`bayesjudge.metrics.calibration`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from bayesjudge.data import DataValidationError
from bayesjudge.metrics.calibration import Metric, as_probabilities, same_index

__all__ = ["absolute_symmetry_deviation", "swap_consistency", "symmetry_deviation"]


def _pair(p_orig: ArrayLike, p_swap: ArrayLike):
    same_index(p_orig, p_swap, names=("p_orig", "p_swap"))
    a = as_probabilities(p_orig, "p_orig")
    b = as_probabilities(p_swap, "p_swap")
    if a.shape[-1] != b.shape[-1]:
        raise DataValidationError(
            f"`p_orig` and `p_swap` must describe the same items in the same order; they have "
            f"{a.shape[-1]} and {b.shape[-1]} items. Every swapped prediction needs its original."
        )
    return np.broadcast_arrays(a, b)


def symmetry_deviation(p_orig: ArrayLike, p_swap: ArrayLike) -> NDArray[np.float64]:
    """Per-item symmetry deviation :math:`\\Delta_{SD} = p_{orig} + p_{swap} - 1` (Section 5.2).

    In [-1, 1]: 0 is swap-symmetric, a positive value is a bias toward the response
    in position B (the second one), a negative value toward position A.

    Examples
    --------
    >>> symmetry_deviation([0.7, 0.5], [0.6, 0.5]).round(2).tolist()
    [0.3, 0.0]
    """
    a, b = _pair(p_orig, p_swap)
    return a + b - 1.0


def absolute_symmetry_deviation(p_orig: ArrayLike, p_swap: ArrayLike) -> Metric:
    """Expected absolute symmetry deviation :math:`\\frac1N\\sum_i |p_{orig,i} + p_{swap,i} - 1|`.

    Examples
    --------
    >>> round(absolute_symmetry_deviation([0.7, 0.2], [0.6, 0.6]), 2)
    0.25
    """
    value = np.abs(symmetry_deviation(p_orig, p_swap)).mean(axis=-1)
    return float(value) if np.ndim(value) == 0 else value


def swap_consistency(p_orig: ArrayLike, p_swap: ArrayLike, tie_band: float = 0.0) -> Metric:
    """Share of items with the same verdict in both orders (Zheng et al. 2023; Section 5.2).

    The original verdict is B when :math:`p_{orig} > 1/2 + \\delta`, A when
    :math:`p_{orig} < 1/2 - \\delta`, tie otherwise. The swapped prompt shows A second,
    so its verdict, in the original names, is A when :math:`p_{swap} > 1/2 + \\delta`,
    B when :math:`p_{swap} < 1/2 - \\delta`, tie otherwise (:math:`\\delta` =
    ``tie_band``, as :func:`~bayesjudge.metrics.predicted_label`). Two ties agree.

    Examples
    --------
    >>> swap_consistency([0.9, 0.9, 0.5], [0.2, 0.8, 0.5])
    0.6666666666666666
    """
    a, b = _pair(p_orig, p_swap)
    if not 0.0 <= tie_band < 0.5:
        raise DataValidationError(f"tie_band must lie in [0, 0.5), got {tie_band!r}.")
    hi, lo = 0.5 + tie_band, 0.5 - tie_band
    verdict_orig = np.where(a > hi, 1, np.where(a < lo, -1, 0))  # +1 = B better
    verdict_swap = np.where(b > hi, -1, np.where(b < lo, 1, 0))  # p_swap is P(A better)
    value = np.mean(verdict_orig == verdict_swap, axis=-1)
    return float(value) if np.ndim(value) == 0 else value
