"""The five point estimators of Table 1, compared under distribution shift (Section 7).

Lee, Zeng, Jeong, Sohn & Lee (2025), "How to Correctly Report LLM-as-a-Judge
Evaluations", arXiv:2511.21140, Table 1 and Section 7; (v) is the Rogan-Gladen
estimator of :mod:`bayesjudge.estimators.bias_adjusted` (Appendix B.3).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from bayesjudge.data import DataValidationError
from bayesjudge.estimators.bias_adjusted import rogan_gladen
from bayesjudge.estimators.validation import (
    Float,
    as_counts,
    as_output,
    check_rates,
    format_offending,
    validate_count_table,
    validate_test_counts,
)

__all__ = [
    "Table1Name",
    "calibration_only_estimate",
    "conditional_calibration_estimate",
    "conditional_calibration_rates",
    "difference_estimate",
    "naive_estimate",
    "table1_estimates",
]

Table1Name = Literal[
    "naive",
    "calibration_only",
    "difference",
    "conditional_calibration",
    "misclassification_adjusted",
]


def _conditional_calibration_core(
    p: NDArray, tp: NDArray, m1: NDArray, tn: NDArray, m0: NDArray
) -> NDArray:
    """Table 1 (iv): first row of Pr_Q(Z | Z_hat) applied to (p_hat, 1 - p_hat)."""
    fp, fn = m0 - tn, m1 - tp
    with np.errstate(divide="ignore", invalid="ignore"):
        ppv = tp / (tp + fp)  # Pr_Q(Z = 1 | Z_hat = 1)
        false_omission = fn / (fn + tn)  # Pr_Q(Z = 1 | Z_hat = 0)
    return ppv * p + false_omission * (1 - p)


def naive_estimate(judged_pos: ArrayLike, n: ArrayLike) -> Float:
    r"""Table 1 (i), naive LLM-judgment estimator :math:`\mathbb E_P[\hat Z] = \hat p`, eq. (2).

    Examples
    --------
    >>> naive_estimate(480, 1000)
    0.48
    """
    a = validate_test_counts(judged_pos, n)
    return as_output(a["judged_pos"] / a["n"])


def calibration_only_estimate(m1: ArrayLike, m0: ArrayLike) -> Float:
    r"""Table 1 (ii), calibration-only estimator :math:`\mathbb E_Q[Z] = m_1/(m_0+m_1)`.

    Unbiased for :math:`\theta_P` only if the calibration set is a random sample of the
    test distribution (:math:`\Pr_P(Z) = \Pr_Q(Z)`); no interval is given in the paper.
    """
    a = as_counts(m1=m1, m0=m0)
    bad = a["m0"] + a["m1"] == 0
    if bad.any():
        raise DataValidationError(
            f"m0 + m1 must be positive, got: {format_offending(bad, m0=a['m0'], m1=a['m1'])}. "
            "Fix: label calibration items."
        )
    return as_output(a["m1"] / (a["m0"] + a["m1"]))


def difference_estimate(
    judged_pos: ArrayLike, n: ArrayLike, tp: ArrayLike, m1: ArrayLike, tn: ArrayLike, m0: ArrayLike
) -> Float:
    r"""Table 1 (iii), difference / prediction-powered estimator (Angelopoulos et al., 2023a).

    .. math:: \mathbb E_P[\hat Z] + \mathbb E_Q[Z - \hat Z]
       = \hat p + \frac{(m_1 - tp) - (m_0 - tn)}{m_0 + m_1},

    since on the calibration set :math:`Z - \hat Z` is +1 on the ``m1 - tp`` false negatives
    and -1 on the ``m0 - tn`` false positives. Unbiased iff
    :math:`\Pr_P(Z-\hat Z) = \Pr_Q(Z-\hat Z)`.
    """
    a = validate_count_table(judged_pos, n, tp, m1, tn, m0)
    rectifier = ((a["m1"] - a["tp"]) - (a["m0"] - a["tn"])) / (a["m0"] + a["m1"])
    return as_output(a["judged_pos"] / a["n"] + rectifier)


def conditional_calibration_estimate(
    judged_pos: ArrayLike, n: ArrayLike, tp: ArrayLike, m1: ArrayLike, tn: ArrayLike, m0: ArrayLike
) -> Float:
    r"""Table 1 (iv), conditional calibration estimator.

    :math:`\Pr_Q(Z\mid\hat Z)\,\mathbb E_P[\hat Z]`: the first component of the calibration
    matrix times :math:`(\hat p, 1-\hat p)^\top`:

    .. math:: \Pr_Q(Z=1\mid\hat Z=1)\,\hat p + \Pr_Q(Z=1\mid\hat Z=0)\,(1-\hat p)
       = \frac{tp}{tp + m_0 - tn}\hat p + \frac{m_1 - tp}{m_1 - tp + tn}(1-\hat p).

    Unbiased iff :math:`\Pr_P(Z\mid\hat Z) = \Pr_Q(Z\mid\hat Z)`, which label shift breaks.

    Raises
    ------
    DataValidationError
        Also when no calibration item was judged 'correct' (or none 'incorrect'), which
        leaves a row of the calibration matrix undefined.

    See Also
    --------
    conditional_calibration_rates : the same from rates, NaN instead of errors.
    """
    a = validate_count_table(judged_pos, n, tp, m1, tn, m0)
    judged = (
        ("'correct'", a["tp"] + a["m0"] - a["tn"]),
        ("'incorrect'", a["m1"] - a["tp"] + a["tn"]),
    )
    for label, count in judged:
        if (count == 0).any():
            offending = format_offending(count == 0, tp=a["tp"], m1=a["m1"], tn=a["tn"], m0=a["m0"])
            raise DataValidationError(
                f"no calibration item was judged {label}, so Pr_Q(Z | Z_hat = {label}) is "
                f"undefined; offending values: {offending}. Fix: label more calibration "
                "items, or use the misclassification-adjusted rogan_gladen."
            )
    p = a["judged_pos"] / a["n"]
    return as_output(_conditional_calibration_core(p, a["tp"], a["m1"], a["tn"], a["m0"]))


def conditional_calibration_rates(
    p: ArrayLike, q0: ArrayLike, q1: ArrayLike, m0: ArrayLike, m1: ArrayLike
) -> Float:
    r"""Conditional calibration estimator, Table 1 (iv), from rates; NaN where undefined.

    The vectorised, non-raising form of :func:`conditional_calibration_estimate`:

    .. math:: \frac{\hat q_1 m_1}{\hat q_1 m_1 + (1-\hat q_0) m_0}\,\hat p
       + \frac{(1-\hat q_1) m_1}{(1-\hat q_1) m_1 + \hat q_0 m_0}\,(1-\hat p),

    the calibration set's :math:`\Pr_Q(Z=1\mid\hat Z)` applied to
    :math:`(\hat p, 1-\hat p)`. An empty class (``m0 == 0`` or ``m1 == 0``) contributes
    no items whatever its (then undefined, NaN) rate; the result is NaN where no
    calibration item was judged 'correct' (or none 'incorrect').

    Parameters
    ----------
    p, q0, q1 : array_like of float
        :math:`\hat p`, :math:`\hat q_0`, :math:`\hat q_1` in [0, 1] (NaN allowed).
    m0, m1 : array_like of int
        Calibration class sizes.

    Returns
    -------
    float or ndarray
        The estimate, broadcast over the inputs.

    Raises
    ------
    DataValidationError
        For rates outside [0, 1] or sizes that are not non-negative integers.

    Examples
    --------
    >>> x = conditional_calibration_rates(0.48, 0.7, 0.9, 100, 100)
    >>> bool(abs(x - conditional_calibration_estimate(480, 1000, 90, 100, 70, 100)) < 1e-12)
    True
    """
    r = check_rates(p=p, q0=q0, q1=q1)
    s = as_counts(m0=m0, m1=m1)
    with np.errstate(invalid="ignore"):
        tp = np.where(s["m1"] > 0, r["q1"] * s["m1"], 0.0)
        tn = np.where(s["m0"] > 0, r["q0"] * s["m0"], 0.0)
    return as_output(_conditional_calibration_core(r["p"], tp, s["m1"], tn, s["m0"]))


def table1_estimates(
    judged_pos: ArrayLike, n: ArrayLike, tp: ArrayLike, m1: ArrayLike, tn: ArrayLike, m0: ArrayLike
) -> dict[Table1Name, Float]:
    r"""All five point estimators of Table 1 on the same data.

    (v) is the unclipped :func:`rogan_gladen`, which equals the misclassification-adjusted
    :math:`(\Pr_Q(\hat{\mathbf Z}\mid\mathbf Z))^{-1}\mathbb E_P[\hat{\mathbf Z}]`
    (Appendix B.3).

    Returns
    -------
    dict
        Keys ``naive``, ``calibration_only``, ``difference``, ``conditional_calibration``,
        ``misclassification_adjusted``.
    """
    return {
        "naive": naive_estimate(judged_pos, n),
        "calibration_only": calibration_only_estimate(m1, m0),
        "difference": difference_estimate(judged_pos, n, tp, m1, tn, m0),
        "conditional_calibration": conditional_calibration_estimate(judged_pos, n, tp, m1, tn, m0),
        "misclassification_adjusted": rogan_gladen(judged_pos, n, tp, m1, tn, m0, clip=False),
    }
