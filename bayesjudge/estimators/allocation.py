"""How to spend human labels: Algorithm 1 (adaptive allocation) and Proposition 6.1.

Lee, Zeng, Jeong, Sohn & Lee (2025), "How to Correctly Report LLM-as-a-Judge
Evaluations", arXiv:2511.21140, Section 5 / Appendix A (Algorithm 1,
Proposition 5.2) and Section 6 (Proposition 6.1).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from bayesjudge.data import DataValidationError
from bayesjudge.estimators.validation import (
    Float,
    as_counts,
    as_output,
    check_positive,
    format_offending,
)

__all__ = ["HumanComparison", "allocate_calibration", "judge_beats_human"]


def allocate_calibration(
    m: ArrayLike, p_hat: ArrayLike, q0_pilot: ArrayLike, q1_pilot: ArrayLike, m_pilot: ArrayLike
) -> tuple[int | NDArray[np.int64], int | NDArray[np.int64]]:
    r"""Adaptive allocation of a calibration budget, Algorithm 1 (Appendix A).

    Pilot: ``m_pilot`` calibration items per class give the Laplace-smoothed
    :math:`\tilde q_k = (m_{\text{pilot}}\,q_{k,\text{pilot}} + 1)/(m_{\text{pilot}} + 2)`
    (step 3) and :math:`\hat\kappa = (1-\tilde q_0)/(1-\tilde q_1)` (step 4). Proposition 5.2
    (:math:`\tilde m_0 \approx (1/\tilde p - 1)\sqrt{\kappa}\,\tilde m_1`) then gives

    .. math:: m_1^* = \operatorname{round}\Big(\frac{m}{1 + (1/\hat p - 1)\sqrt{\hat\kappa}}\Big),
       \quad m_1 = \min\{\max\{m_1^*, m_{\text{pilot}}\}, m - m_{\text{pilot}}\},
       \quad m_0 = m - m_1.

    The budget ``m`` includes the ``2 * m_pilot`` pilot items, which stay in the
    calibration set: each class receives at least ``m_pilot`` items.

    Parameters
    ----------
    m : array_like of int
        Total calibration budget (human labels), pilot included.
    p_hat : array_like of float
        Naive test-set score :math:`\hat p` in [0, 1] (eq. 2); the algorithm uses
        :math:`\hat p` where Proposition 5.2 writes :math:`\tilde p`.
    q0_pilot, q1_pilot : array_like of float
        Raw pilot specificity and sensitivity in [0, 1] (pilot tn / m_pilot and tp / m_pilot).
    m_pilot : array_like of int
        Pilot items per class, ``1 <= m_pilot`` and ``2 * m_pilot <= m``.

    Returns
    -------
    (m0, m1) : tuple of int or ndarray of int
        Human-'incorrect' and human-'correct' calibration sizes, ``m0 + m1 == m``.

    Notes
    -----
    Edge cases: the smoothing keeps :math:`\tilde q_k` inside
    :math:`[1/(m_{\text{pilot}}+2), (m_{\text{pilot}}+1)/(m_{\text{pilot}}+2)]`, so a perfect
    pilot (``q1_pilot = 1``) still gives a finite :math:`\hat\kappa > 0` and no special case
    is needed. :math:`m_1^*` is computed as
    :math:`m\hat p / (\hat p + (1-\hat p)\sqrt{\hat\kappa})`, equal to step 6 but finite at
    :math:`\hat p = 0` (all budget beyond the pilot to m0) and :math:`\hat p = 1` (to m1).
    ``round`` is round-half-to-even, as Python's ``round`` in the paper's code.

    Examples
    --------
    >>> allocate_calibration(200, 0.4, 0.7, 0.9, 10)
    (136, 64)
    """
    c = as_counts(m=m, m_pilot=m_pilot)
    m_, mp = c["m"], c["m_pilot"]
    check_positive(
        "pass at least one pilot item per class (the paper uses m_pilot = 10).", m_pilot=mp
    )
    bad = 2 * mp > m_
    if bad.any():
        raise DataValidationError(
            f"2 * m_pilot must not exceed the budget m (Algorithm 1 input); offending values: "
            f"{format_offending(bad, m=m_, m_pilot=mp)}. Fix: lower m_pilot or raise m."
        )
    props = {}
    for name, value in (("p_hat", p_hat), ("q0_pilot", q0_pilot), ("q1_pilot", q1_pilot)):
        arr = np.asarray(value, dtype=np.float64)
        bad = ~((arr >= 0) & (arr <= 1))
        if bad.any():
            raise DataValidationError(
                f"{name} must be a proportion in [0, 1], got: "
                f"{format_offending(bad, **{name: arr})}. "
                f"Fix: pass {name} as a fraction (e.g. q0_pilot = pilot tn / m_pilot), "
                "not a count."
            )
        props[name] = arr
    q0_t = (mp * props["q0_pilot"] + 1) / (mp + 2)  # step 3
    q1_t = (mp * props["q1_pilot"] + 1) / (mp + 2)
    sqrt_kappa = np.sqrt((1 - q0_t) / (1 - q1_t))  # step 4
    p = props["p_hat"]
    m1_star = np.rint(m_ * p / (p + (1 - p) * sqrt_kappa))  # step 6
    m1 = np.minimum(np.maximum(m1_star, mp), m_ - mp).astype(np.int64)  # step 7
    m0 = (m_ - m1).astype(np.int64)
    if m0.ndim == 0:
        return int(m0), int(m1)
    return m0, m1


@dataclass(frozen=True)
class HumanComparison:
    """Result of :func:`judge_beats_human` (fields broadcast like the inputs).

    Attributes
    ----------
    judge_preferred : bool or ndarray of bool
        ``var_judge <= var_human``: judge + calibration is at least as precise.
    var_judge : float or ndarray
        :math:`q(1-q)/\\{m(2q-1)^2\\}`, the n -> infinity variance of eq. (9) with
        :math:`m_1 = m\\theta`.
    var_human : float or ndarray
        :math:`\\theta(1-\\theta)/m`, variance of :math:`\\hat\\phi = M_1/m`.
    theta_lower, theta_upper : float or ndarray
        The interval of Proposition 6.1; NaN when :math:`q < 1/2 + 1/(2\\sqrt2)` (empty).
    """

    judge_preferred: bool | NDArray[np.bool_]
    var_judge: Float
    var_human: Float
    theta_lower: Float
    theta_upper: Float


def judge_beats_human(theta: ArrayLike, q: ArrayLike, m: ArrayLike) -> HumanComparison:
    r"""Does judge + calibration beat direct human labelling at the same budget? Prop. 6.1.

    With :math:`n\to\infty`, :math:`q_0 = q_1 = q` and a calibration set of ``m`` human
    labels (:math:`M_1\sim\text{Bin}(m,\theta)` of them 'correct'),
    :math:`\operatorname{Var}(\hat\theta) \approx q(1-q)/\{m(2q-1)^2\}` while direct human
    evaluation has :math:`\operatorname{Var}(\hat\phi) = \theta(1-\theta)/m`, so the judge
    wins iff :math:`\theta(1-\theta) \ge q(1-q)/(2q-1)^2`, i.e.

    .. math:: \theta \in \Big[\tfrac12 - \sqrt{\tfrac12 - \tfrac{1}{4(2q-1)^2}},\
       \tfrac12 + \sqrt{\tfrac12 - \tfrac{1}{4(2q-1)^2}}\Big],

    non-empty iff :math:`q \ge 1/2 + 1/(2\sqrt2) \approx 0.854`.

    Parameters
    ----------
    theta : array_like of float
        True accuracy in [0, 1].
    q : array_like of float
        Common sensitivity = specificity, in (1/2, 1].
    m : array_like of int
        Human-label budget.

    Returns
    -------
    HumanComparison
    """
    m_ = as_counts(m=m)["m"]
    check_positive("pass the number of human labels (m >= 1).", m=m_)
    theta_ = np.asarray(theta, dtype=np.float64)
    q_ = np.asarray(q, dtype=np.float64)
    bad = ~((theta_ >= 0) & (theta_ <= 1))
    if bad.any():
        raise DataValidationError(
            f"theta must lie in [0, 1], got: {format_offending(bad, theta=theta_)}. "
            "Fix: pass an accuracy."
        )
    bad = ~((q_ > 0.5) & (q_ <= 1))
    if bad.any():
        raise DataValidationError(
            f"q must lie in (1/2, 1], got: {format_offending(bad, q=q_)}. With q0 = q1 = q <= 1/2, "
            "q0 + q1 <= 1 and theta is not identifiable from judge outputs. Fix: pass the "
            "judge's common sensitivity/specificity."
        )
    var_judge = q_ * (1 - q_) / (m_ * (2 * q_ - 1) ** 2)
    var_human = theta_ * (1 - theta_) / m_
    with np.errstate(invalid="ignore"):
        half = np.sqrt(0.5 - 1 / (4 * (2 * q_ - 1) ** 2))
    shape = np.broadcast_shapes(theta_.shape, q_.shape, m_.shape)
    fields = (var_judge <= var_human, var_judge, var_human, 0.5 - half, 0.5 + half)
    return HumanComparison(*(as_output(np.broadcast_to(x, shape).copy()) for x in fields))
