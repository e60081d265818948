"""The Lang-Reiczigel adjusted Wald interval for the bias-adjusted accuracy, eqs. (6)-(8).

Lee, Zeng, Jeong, Sohn & Lee (2025), "How to Correctly Report LLM-as-a-Judge
Evaluations", arXiv:2511.21140, Section 4. Intervals that truncation collapses to a
point at 0 or 1 are flagged (``at_boundary``) and warned about (:class:`BoundaryWarning`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from bayesjudge.data.messages import PACKAGE_DIR
from bayesjudge.estimators.bias_adjusted import rogan_gladen_rates
from bayesjudge.estimators.validation import (
    Float,
    as_counts,
    as_output,
    check_identifiable,
    check_rates,
    format_offending,
    validate_count_table,
    z_quantile,
)

__all__ = [
    "BoundaryWarning",
    "LangReiczigelInterval",
    "lang_reiczigel_interval",
    "lang_reiczigel_rates",
]


class BoundaryWarning(UserWarning):
    """An interval collapsed to a single point at 0 or 1 and carries no uncertainty.

    Issued by :func:`lang_reiczigel_interval` when truncation to [0, 1] gives a
    zero-width interval (the judge's positive rate is far below its false-positive
    rate ``1 - q0_hat``, or far above its sensitivity ``q1_hat``). The Bayesian
    :class:`bayesjudge.MisclassificationModel` (``method="nuts"``) gives a sensible
    interval there.
    """


@dataclass(frozen=True)
class LangReiczigelInterval:
    """Result of :func:`lang_reiczigel_interval`; every field broadcasts like the inputs.

    Attributes
    ----------
    estimate : float or ndarray
        Clipped Rogan-Gladen estimate :math:`\\hat\\theta`, eq. (5).
    lower, upper : float or ndarray
        Confidence limits of eq. (6), truncated to [0, 1].
    center : float or ndarray
        Interval centre :math:`\\tilde\\theta + d\\tilde\\theta` (eqs. 7-8), before truncation.
    q0, q1 : float or ndarray
        Plain specificity ``tn / m0`` and sensitivity ``tp / m1`` (:math:`\\hat q_0, \\hat q_1`).
    at_boundary : bool or ndarray of bool
        True where truncation collapsed the interval to one point, ``lower == upper``
        (both 0 or both 1): the estimate sits at the boundary of [0, 1] and the
        interval is not a valid uncertainty statement (see :class:`BoundaryWarning`).
    """

    estimate: Float
    lower: Float
    upper: Float
    center: Float
    q0: Float
    q1: Float
    at_boundary: bool | NDArray[np.bool_] = False


def _lang_reiczigel_core(
    judged_pos: NDArray, n: NDArray, tp: NDArray, m1: NDArray, tn: NDArray, m0: NDArray, z: float
) -> tuple[NDArray, NDArray, NDArray, NDArray, NDArray]:
    """Eqs. (6)-(8); returns (centre, lower, upper, q0_tilde, q1_tilde)."""
    z2 = z * z
    n_t, m0_t, m1_t = n + z2, m0 + 2, m1 + 2  # eq. (7)
    p_t = (judged_pos + z2 / 2) / n_t  # n * p_hat = judged_pos
    q0_t = (tn + 1) / m0_t  # m0 * q0_hat = tn
    q1_t = (tp + 1) / m1_t
    theta_t = np.asarray(rogan_gladen_rates(p_t, q0_t, q1_t))  # NaN where q0~ + q1~ <= 1
    v0 = q0_t * (1 - q0_t) / m0_t
    v1 = q1_t * (1 - q1_t) / m1_t
    with np.errstate(invalid="ignore"):  # inf - inf where q0~ + q1~ = 1; masked by callers
        d_theta = 2 * z2 * (-(1 - theta_t) * v0 + theta_t * v1)  # eq. (8)
        centre = theta_t + d_theta
    # Appendix C (Figure 8) disagrees with eq. (6) in two places; the equation wins both:
    # 1. it divides the variance by (q0 + q1 - 1), not (q0 + q1 - 1)**2. The squared Youden
    #    index is what the delta method gives (Appendix B.1, eq. 9) since every partial
    #    derivative of theta carries 1 / (q0 + q1 - 1); the unsquared one inflates the
    #    standard error by 1 / sqrt(q0 + q1 - 1) and is not even real when q0 + q1 < 1.
    # 2. its upper limit is th - dth + z*se, i.e. the shift d_theta is subtracted from one
    #    limit and added to the other, so the interval is no longer centred at
    #    theta~ + d_theta~ and its length changes by 2 * d_theta. Eq. (6) (and Lang &
    #    Reiczigel's own script) shift both limits by +d_theta.
    with np.errstate(divide="ignore", invalid="ignore"):
        var = p_t * (1 - p_t) / n_t + (1 - theta_t) ** 2 * v0 + theta_t**2 * v1
        se = np.sqrt(var / (q0_t + q1_t - 1) ** 2)
        lower = np.clip(centre - z * se, 0.0, 1.0)
        upper = np.clip(centre + z * se, 0.0, 1.0)
    return centre, lower, upper, q0_t, q1_t


def _interval_result(
    a: dict[str, NDArray[np.float64]], z: float
) -> tuple[NDArray, ...]:
    """Fields of :class:`LangReiczigelInterval` from (unchecked) float counts."""
    with np.errstate(divide="ignore", invalid="ignore"):
        q0, q1 = a["tn"] / a["m0"], a["tp"] / a["m1"]
        theta = np.clip(rogan_gladen_rates(a["judged_pos"] / a["n"], q0, q1), 0.0, 1.0)
    centre, lower, upper, _, _ = _lang_reiczigel_core(
        a["judged_pos"], a["n"], a["tp"], a["m1"], a["tn"], a["m0"], z
    )
    at_boundary = lower == upper  # both limits truncated to the same end of [0, 1]
    shape = np.broadcast_shapes(*(v.shape for v in a.values()))
    fields = (theta, lower, upper, centre, q0, q1, at_boundary)
    return tuple(np.broadcast_to(x, shape).copy() for x in fields)


def lang_reiczigel_interval(
    judged_pos: ArrayLike,
    n: ArrayLike,
    tp: ArrayLike,
    m1: ArrayLike,
    tn: ArrayLike,
    m0: ArrayLike,
    alpha: float = 0.05,
) -> LangReiczigelInterval:
    r"""Lang-Reiczigel adjusted Wald interval for :math:`\theta`, eqs. (6)-(8).

    .. math::
       \tilde\theta + d\tilde\theta \pm z_\alpha \sqrt{\frac{\tilde p(1-\tilde p)/\tilde n
       + (1-\tilde\theta)^2\tilde q_0(1-\tilde q_0)/\tilde m_0
       + \tilde\theta^2\tilde q_1(1-\tilde q_1)/\tilde m_1}{(\tilde q_0+\tilde q_1-1)^2}}  \quad (6)

    with :math:`z_\alpha` the :math:`1-\alpha/2` normal quantile and (eq. 7)
    :math:`\tilde n = n + z_\alpha^2`, :math:`\tilde m_k = m_k + 2`,
    :math:`\tilde p = (n\hat p + z_\alpha^2/2)/(n + z_\alpha^2)`,
    :math:`\tilde q_k = (m_k\hat q_k + 1)/(m_k + 2)`,
    :math:`\tilde\theta = (\tilde p + \tilde q_0 - 1)/(\tilde q_0 + \tilde q_1 - 1)`, and the
    centre shift (eq. 8)
    :math:`d\tilde\theta = 2z_\alpha^2\{-(1-\tilde\theta)\tilde q_0(1-\tilde q_0)/\tilde m_0
    + \tilde\theta\tilde q_1(1-\tilde q_1)/\tilde m_1\}`.
    Limits outside [0, 1] are truncated. The two places where the paper's Appendix C
    code departs from eq. (6) are documented in the source; this follows the equations.

    When the judge's positive rate :math:`\hat p` is far below its false-positive rate
    :math:`1-\hat q_0` (or far above :math:`\hat q_1`), both limits are truncated to the
    same end of [0, 1] and the interval has zero width, e.g. ``0.000 [0.000, 0.000]``.
    Eq. (6) is kept as written, but such results are flagged in ``at_boundary`` and a
    :class:`BoundaryWarning` is issued: a zero-width interval is not a valid uncertainty
    statement. :class:`bayesjudge.MisclassificationModel` (``method="nuts"``) gives a
    sensible interval there.

    Parameters
    ----------
    judged_pos, n, tp, m1, tn, m0 : array_like of int
        As in :func:`rogan_gladen`.
    alpha : float, default 0.05
        One minus the confidence level, in (0, 0.5): ``alpha=0.05`` for a 95% interval.

    Returns
    -------
    LangReiczigelInterval
        ``estimate``, ``lower``, ``upper``, ``center``, ``q0``, ``q1``, ``at_boundary``.

    Raises
    ------
    DataValidationError
        As :func:`rogan_gladen`; when the adjusted :math:`\tilde q_0 + \tilde q_1 \le 1`
        (the estimates the interval is built from); and for ``alpha`` outside (0, 0.5),
        e.g. ``alpha=0.95`` passed for a 95% interval.

    Warns
    -----
    BoundaryWarning
        When an interval has zero width at 0 or 1 (``at_boundary``).

    See Also
    --------
    lang_reiczigel_rates : the same from rates, NaN instead of errors, no warning.

    Examples
    --------
    >>> ci = lang_reiczigel_interval(480, 1000, 90, 100, 70, 100)
    >>> bool(ci.lower < ci.estimate < ci.upper), ci.at_boundary
    (True, False)
    """
    z = z_quantile(alpha)
    a = validate_count_table(judged_pos, n, tp, m1, tn, m0)
    check_identifiable(a["tn"] / a["m0"], a["tp"] / a["m1"])
    check_identifiable(
        (a["tn"] + 1) / (a["m0"] + 2),
        (a["tp"] + 1) / (a["m1"] + 2),
        "the adjusted q0 = (tn + 1)/(m0 + 2), q1 = (tp + 1)/(m1 + 2) of eq. (7) used by "
        "the interval",
    )
    fields = _interval_result(a, z)
    at_boundary = fields[-1]
    if at_boundary.any():
        where = format_offending(at_boundary, **a)
        k, total = int(at_boundary.sum()), at_boundary.size
        warnings.warn(
            f"lang_reiczigel_interval: the estimate is at the boundary of [0, 1] and the "
            f"interval has zero width for {k} of {total} input(s) ({where}); truncating "
            "eq. (6) to [0, 1] collapsed both limits, so this interval is not a valid "
            "uncertainty statement (the judge's positive rate judged_pos/n is below its "
            "false-positive rate 1 - tn/m0, or above its sensitivity tp/m1). Fix: use "
            'bayesjudge.MisclassificationModel (method="nuts"), which gives a sensible '
            "interval there; the field at_boundary marks these results.",
            BoundaryWarning,
            skip_file_prefixes=(PACKAGE_DIR,),
        )
    return LangReiczigelInterval(*(as_output(x) for x in fields))


def lang_reiczigel_rates(
    p: ArrayLike,
    q0: ArrayLike,
    q1: ArrayLike,
    n: ArrayLike,
    m0: ArrayLike,
    m1: ArrayLike,
    alpha: float = 0.05,
) -> LangReiczigelInterval:
    r"""Lang-Reiczigel interval, eqs. (6)-(8), from rates and sizes; NaN where undefined.

    The vectorised, non-raising form of :func:`lang_reiczigel_interval` for simulation
    studies: same formulas with :math:`n\hat p`, :math:`m_0\hat q_0`, :math:`m_1\hat q_1`
    in place of the counts. It issues no :class:`BoundaryWarning` (``at_boundary``
    marks the collapsed intervals) and gives NaN instead of raising: ``estimate``
    (clipped eq. 5) where :math:`\hat q_0 + \hat q_1 \le 1`, ``lower`` / ``upper`` /
    ``center`` where the smoothed :math:`\tilde q_0 + \tilde q_1 \le 1` (eq. 7), and
    every field where ``n``, ``m0`` or ``m1`` is 0.

    Parameters
    ----------
    p, q0, q1 : array_like of float
        :math:`\hat p`, :math:`\hat q_0`, :math:`\hat q_1` in [0, 1] (NaN allowed).
    n, m0, m1 : array_like of int
        Test-set size and the two calibration class sizes.
    alpha : float, default 0.05
        One minus the confidence level, in (0, 0.5).

    Returns
    -------
    LangReiczigelInterval
        Every field broadcast over the inputs.

    Raises
    ------
    DataValidationError
        For rates outside [0, 1], sizes that are not non-negative integers, or an
        ``alpha`` outside (0, 0.5).

    Examples
    --------
    >>> ci = lang_reiczigel_rates(0.48, 0.7, 0.9, 1000, 100, 100)
    >>> ref = lang_reiczigel_interval(480, 1000, 90, 100, 70, 100)
    >>> bool(abs(ci.lower - ref.lower) < 1e-12 and abs(ci.upper - ref.upper) < 1e-12)
    True
    """
    z = z_quantile(alpha)
    r = check_rates(p=p, q0=q0, q1=q1)
    s = as_counts(n=n, m0=m0, m1=m1)
    a = {
        "judged_pos": r["p"] * s["n"],
        "n": s["n"],
        "tp": r["q1"] * s["m1"],
        "m1": s["m1"],
        "tn": r["q0"] * s["m0"],
        "m0": s["m0"],
    }
    _, lower, upper, centre, _, _, at_boundary = _interval_result(a, z)
    theta = np.clip(rogan_gladen_rates(r["p"], r["q0"], r["q1"]), 0.0, 1.0)
    theta = np.broadcast_to(theta, lower.shape).copy()
    with np.errstate(invalid="ignore"):
        empty = (s["n"] == 0) | (s["m0"] == 0) | (s["m1"] == 0)
        smoothed = (a["tn"] + 1) / (a["m0"] + 2) + (a["tp"] + 1) / (a["m1"] + 2)
        undefined = np.broadcast_to(empty | ~(smoothed > 1), lower.shape)
        identifiable = r["q0"] + r["q1"] > 1
        theta[np.broadcast_to(empty | ~identifiable, theta.shape)] = np.nan
    for x in (lower, upper, centre):
        x[undefined] = np.nan
    at_boundary &= ~undefined
    fields = (theta, lower, upper, centre, r["q0"], r["q1"], at_boundary)
    full = (np.broadcast_to(x, lower.shape).copy() for x in fields)
    return LangReiczigelInterval(*(as_output(x) for x in full))
