"""Intervals for a single binomial proportion: Wald (the naive estimator's) and Wilson score."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import ndtri  # the normal quantile (scipy.stats costs ~1 s to import)

from bayesjudge.constants import CI_PROB
from bayesjudge.data import DataValidationError
from bayesjudge.estimators.validation import (
    Float,
    as_counts,
    as_output,
    check_at_most,
    check_ci_prob,
    validate_test_counts,
    z_quantile,
)

__all__ = ["Interval", "wald_interval", "wilson_interval"]


@dataclass(frozen=True)
class Interval:
    """A point estimate with confidence limits (fields broadcast like the inputs)."""

    estimate: Float
    lower: Float
    upper: Float


def wald_interval(judged_pos: ArrayLike, n: ArrayLike, alpha: float = 0.05) -> Interval:
    r"""Naive estimate :math:`\hat p` (eq. 2) with its Wald interval, truncated to [0, 1].

    :math:`\hat p \pm z_\alpha\sqrt{\hat p(1-\hat p)/n}`: the interval Section 8.1 reports
    for the naive estimator. It targets p, not :math:`\theta`, so it undercovers
    :math:`\theta` whenever the judge errs.

    Parameters
    ----------
    judged_pos, n : array_like of int
        Test items the judge called 'correct', out of ``n``.
    alpha : float, default 0.05
        One minus the confidence level, in (0, 0.5): ``alpha=0.05`` for a 95% interval.

    Returns
    -------
    Interval

    Raises
    ------
    DataValidationError
        For invalid counts, ``n == 0``, or ``alpha`` outside (0, 0.5).

    Examples
    --------
    >>> ci = wald_interval(480, 1000)
    >>> round(ci.lower, 4), round(ci.upper, 4)
    (0.449, 0.511)
    """
    z = z_quantile(alpha)
    a = validate_test_counts(judged_pos, n)
    p = a["judged_pos"] / a["n"]
    half = z * np.sqrt(p * (1 - p) / a["n"])
    lower, upper = np.clip(p - half, 0.0, 1.0), np.clip(p + half, 0.0, 1.0)
    return Interval(as_output(p), as_output(lower), as_output(upper))


def wilson_interval(
    successes: ArrayLike, trials: ArrayLike, ci_prob: float = CI_PROB
) -> tuple[Float, Float]:
    r"""Wilson score interval of a binomial proportion, vectorised.

    For :math:`x` successes in :math:`n` trials, :math:`\hat p = x/n` and
    :math:`z` the :math:`(1 + \text{ci\_prob})/2` normal quantile (Wilson, 1927;
    Newcombe, 1998, method 3):

    .. math:: \frac{\hat p + z^2/(2n)}{1 + z^2/n} \pm \frac{z}{1 + z^2/n}
       \sqrt{\frac{\hat p(1-\hat p)}{n} + \frac{z^2}{4n^2}}.

    Unlike the Wald interval it never has zero width and stays inside [0, 1]
    (limits are clipped only against round-off). Used for the specificity
    ``tn / m0`` and sensitivity ``tp / m1`` of a judge.

    Parameters
    ----------
    successes, trials : array_like of int
        Counts, broadcast together; ``successes <= trials``.
    ci_prob : float, default CI_PROB (0.95)
        Coverage probability of the interval, in (0.5, 1) (a level, where
        :func:`wald_interval` and the Lang-Reiczigel interval take alpha = 1 - level).

    Returns
    -------
    (lower, upper) : tuple of float or ndarray
        Limits in [0, 1], broadcast over the inputs (floats for scalar inputs). Where
        ``trials == 0`` the interval is [0, 1] (the limit of the formula as n -> 0: no
        data, no information).

    Raises
    ------
    DataValidationError
        For counts that are not non-negative integers, ``successes > trials``, or
        ``ci_prob`` outside (0.5, 1).

    References
    ----------
    Wilson, E. B. (1927). Probable inference, the law of succession, and statistical
    inference. JASA 22, 209-212. Newcombe, R. G. (1998). Two-sided confidence intervals
    for the single proportion: comparison of seven methods. Statistics in Medicine 17,
    857-872 (worked example: 81/263 gives 0.2553 to 0.3662).

    Examples
    --------
    >>> lo, hi = wilson_interval(81, 263)
    >>> round(lo, 4), round(hi, 4)
    (0.2553, 0.3662)
    """
    ci_prob = check_ci_prob(ci_prob)
    if ci_prob <= 0.5:  # as lang_reiczigel_interval's alpha check: the other convention
        raise DataValidationError(
            f"ci_prob must lie in (0.5, 1), got ci_prob={ci_prob:g}. It asks for a "
            f"{100 * ci_prob:g}% interval. ci_prob is the level: for a 95% interval pass "
            f"ci_prob=0.95 (wald_interval and lang_reiczigel_interval take alpha = 1 - level).")
    c = as_counts(successes=successes, trials=trials)
    check_at_most(
        "successes", "trials", c, "successes counts the trials with the outcome of interest."
    )
    x, n = np.broadcast_arrays(c["successes"], c["trials"])
    z2 = float(ndtri(0.5 + ci_prob / 2)) ** 2
    with np.errstate(invalid="ignore", divide="ignore"):
        p = x / n
        centre = (p + z2 / (2 * n)) / (1 + z2 / n)
        half = np.sqrt(z2) / (1 + z2 / n) * np.sqrt(p * (1 - p) / n + z2 / (4 * n**2))
    lower = np.where(n == 0, 0.0, np.clip(centre - half, 0.0, 1.0))
    upper = np.where(n == 0, 1.0, np.clip(centre + half, 0.0, 1.0))
    return as_output(lower), as_output(upper)
