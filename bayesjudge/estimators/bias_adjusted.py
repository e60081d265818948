"""The Rogan-Gladen bias-adjusted accuracy (eq. 5) and its delta-method variance (eq. 9).

Lee, Zeng, Jeong, Sohn & Lee (2025), "How to Correctly Report LLM-as-a-Judge
Evaluations", arXiv:2511.21140, Sections 4-5 and Appendix B.1.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from bayesjudge.estimators.validation import (
    Float,
    as_output,
    check_identifiable,
    check_rates,
    validate_count_table,
)

__all__ = ["rogan_gladen", "rogan_gladen_rates", "rogan_gladen_variance"]


def _rogan_gladen_core(p: NDArray, q0: NDArray, q1: NDArray) -> NDArray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return (p + q0 - 1) / (q0 + q1 - 1)


def _variance_core(
    p: NDArray, q0: NDArray, q1: NDArray, n: NDArray, m0: NDArray, m1: NDArray
) -> NDArray:
    theta = _rogan_gladen_core(p, q0, q1)
    with np.errstate(divide="ignore", invalid="ignore"):
        num = (
            p * (1 - p) / n
            + (1 - theta) ** 2 * q0 * (1 - q0) / m0
            + theta**2 * q1 * (1 - q1) / m1
        )
        return num / (q0 + q1 - 1) ** 2


def rogan_gladen(
    judged_pos: ArrayLike,
    n: ArrayLike,
    tp: ArrayLike,
    m1: ArrayLike,
    tn: ArrayLike,
    m0: ArrayLike,
    clip: bool = True,
) -> Float:
    r"""Bias-adjusted (Rogan-Gladen) accuracy estimate, eq. (5).

    .. math:: \hat\theta = \frac{\hat p + \hat q_0 - 1}{\hat q_0 + \hat q_1 - 1},
       \quad \hat p = \frac{\text{judged\_pos}}{n},\ \hat q_1 = \frac{tp}{m_1},
       \ \hat q_0 = \frac{tn}{m_0}.

    Parameters
    ----------
    judged_pos, n : array_like of int
        Test items the judge called 'correct', out of ``n`` test items.
    tp, m1 : array_like of int
        Human-'correct' calibration items the judge called 'correct', out of ``m1``.
    tn, m0 : array_like of int
        Human-'incorrect' calibration items the judge called 'incorrect', out of ``m0``.
    clip : bool, default True
        Truncate to [0, 1] as the paper reports it (Appendix C ``point_estimator``).

    Returns
    -------
    float or ndarray
        :math:`\hat\theta`, broadcast over the inputs.

    Raises
    ------
    DataValidationError
        For negative, non-integer or impossible counts, ``m0 == 0`` or ``m1 == 0``, and
        :math:`\hat q_0 + \hat q_1 \le 1` (estimator undefined / theta not identifiable).

    See Also
    --------
    rogan_gladen_rates : the same from rates, NaN instead of errors.

    Examples
    --------
    >>> round(rogan_gladen(judged_pos=480, n=1000, tp=90, m1=100, tn=70, m0=100), 3)
    0.3
    """
    a = validate_count_table(judged_pos, n, tp, m1, tn, m0)
    q0, q1 = a["tn"] / a["m0"], a["tp"] / a["m1"]
    check_identifiable(q0, q1)
    theta = _rogan_gladen_core(a["judged_pos"] / a["n"], q0, q1)
    return as_output(np.clip(theta, 0.0, 1.0) if clip else theta)


def rogan_gladen_variance(
    judged_pos: ArrayLike, n: ArrayLike, tp: ArrayLike, m1: ArrayLike, tn: ArrayLike, m0: ArrayLike
) -> Float:
    r"""Delta-method variance of :math:`\hat\theta`, eq. (9) (derived in Appendix B.1).

    .. math:: \operatorname{Var}(\hat\theta) = \frac{\hat p(1-\hat p)/n
       + (1-\hat\theta)^2 \hat q_0(1-\hat q_0)/m_0 + \hat\theta^2 \hat q_1(1-\hat q_1)/m_1}
       {(\hat q_0 + \hat q_1 - 1)^2}

    :math:`\hat\theta` here is the unclipped eq. (5): the delta method differentiates
    that formula, and clipping would zero a term the estimator still carries.

    Parameters
    ----------
    judged_pos, n, tp, m1, tn, m0 : array_like of int
        As in :func:`rogan_gladen`.

    Returns
    -------
    float or ndarray
        Estimated variance of :math:`\hat\theta`.

    Raises
    ------
    DataValidationError
        As :func:`rogan_gladen`.
    """
    a = validate_count_table(judged_pos, n, tp, m1, tn, m0)
    q0, q1 = a["tn"] / a["m0"], a["tp"] / a["m1"]
    check_identifiable(q0, q1)
    return as_output(_variance_core(a["judged_pos"] / a["n"], q0, q1, a["n"], a["m0"], a["m1"]))


def rogan_gladen_rates(p: ArrayLike, q0: ArrayLike, q1: ArrayLike) -> Float:
    r"""Rogan-Gladen estimate, eq. (5), from rates; NaN where it is undefined.

    .. math:: \hat\theta = \frac{\hat p + \hat q_0 - 1}{\hat q_0 + \hat q_1 - 1}

    The vectorised, non-raising form of :func:`rogan_gladen` for simulation studies:
    it takes rates instead of counts, is not clipped to [0, 1], and returns NaN
    wherever :math:`\hat q_0 + \hat q_1 \le 1` (estimator undefined or theta not
    identifiable) or an input is NaN.

    Parameters
    ----------
    p : array_like of float
        The judge's positive rate on the test set, :math:`\hat p` (eq. 2), in [0, 1].
    q0, q1 : array_like of float
        Specificity :math:`\hat q_0` and sensitivity :math:`\hat q_1` (eq. 3), in [0, 1].

    Returns
    -------
    float or ndarray
        Unclipped :math:`\hat\theta`, broadcast over the inputs.

    Raises
    ------
    DataValidationError
        When a rate lies outside [0, 1].

    Examples
    --------
    >>> round(rogan_gladen_rates(0.48, 0.7, 0.9), 6)
    0.3
    >>> rogan_gladen_rates([0.48, 0.5], [0.7, 0.5], [0.9, 0.4])
    array([0.3, nan])
    """
    r = check_rates(p=p, q0=q0, q1=q1)
    theta = _rogan_gladen_core(r["p"], r["q0"], r["q1"])
    return as_output(np.where(r["q0"] + r["q1"] > 1, theta, np.nan))
