"""Closed-form frequentist estimators for misclassification-adjusted reporting.

Pure, vectorised functions implementing Sections 4-7 and Appendices A-B of Lee,
Zeng, Jeong, Sohn & Lee (2025), "How to Correctly Report LLM-as-a-Judge
Evaluations", arXiv:2511.21140: the Rogan-Gladen bias-adjusted accuracy (eq. 5)
and its delta-method variance (eq. 9), the Lang-Reiczigel adjusted Wald interval
(eqs. 6-8), the adaptive calibration allocation (Algorithm 1 / Proposition 5.2),
the judge-versus-human variance comparison (Proposition 6.1) and the Table 1
estimators compared under distribution shift (Section 7), plus the Wilson score
interval of a binomial proportion. Every count-level function takes counts, not
proportions, broadcasts numpy arrays of them (one element per Monte Carlo
replication, say) and raises :class:`~bayesjudge.data.DataValidationError`
naming the argument, the offending values and the fix.

The rate-level functions :func:`rogan_gladen_rates`, :func:`lang_reiczigel_rates`
and :func:`conditional_calibration_rates` compute the same formulas from rates
and sample sizes and return NaN where an estimate is undefined instead of
raising: they serve simulation studies, where an undefined replication is
counted, not fatal.

Notation (paper -> arguments): test set of ``n`` items of which the judge calls
``judged_pos`` 'correct' (p_hat = judged_pos / n, eq. 2); calibration set of
``m1`` human-'correct' items of which the judge calls ``tp`` 'correct'
(sensitivity q1_hat = tp / m1) and ``m0`` human-'incorrect' items of which the
judge calls ``tn`` 'incorrect' (specificity q0_hat = tn / m0), eq. 3.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.stats import norm

from bayesjudge.constants import CI_PROB
from bayesjudge.data import DataValidationError

__all__ = [
    "BoundaryWarning",
    "HumanComparison",
    "Interval",
    "LangReiczigelInterval",
    "allocate_calibration",
    "as_counts",
    "calibration_only_estimate",
    "check_alpha",
    "conditional_calibration_estimate",
    "conditional_calibration_rates",
    "difference_estimate",
    "judge_beats_human",
    "lang_reiczigel_interval",
    "lang_reiczigel_rates",
    "naive_estimate",
    "rogan_gladen",
    "rogan_gladen_rates",
    "rogan_gladen_variance",
    "table1_estimates",
    "validate_count_table",
    "wald_interval",
    "wilson_interval",
]

Float = float | NDArray[np.float64]
Table1Name = Literal[
    "naive",
    "calibration_only",
    "difference",
    "conditional_calibration",
    "misclassification_adjusted",
]

_SHOW = 5  # offending values quoted in an error message
_HAT = "the estimates q0_hat = tn/m0 (specificity), q1_hat = tp/m1 (sensitivity)"
_FIX_JUDGED = "judged_pos is the number of the n test items the judge called 'correct'."
_FIX_TP = "tp is the number of the m1 human-'correct' items the judge called 'correct'."
_FIX_TN = "tn is the number of the m0 human-'incorrect' items the judge called 'incorrect'."


class BoundaryWarning(UserWarning):
    """An interval collapsed to a single point at 0 or 1 and carries no uncertainty.

    Issued by :func:`lang_reiczigel_interval` when truncation to [0, 1] gives a
    zero-width interval (the judge's positive rate is far below its false-positive
    rate ``1 - q0_hat``, or far above its sensitivity ``q1_hat``). The Bayesian
    :class:`bayesjudge.MisclassificationModel` (``method="nuts"``) gives a sensible
    interval there.
    """


# --------------------------------------------------------------------------- validation


def _fmt(mask: NDArray[np.bool_], **arrays: NDArray) -> str:
    """Quote the first few offending entries, e.g. ``tp=12, m1=10 (index (3,))``."""
    shape = np.broadcast_shapes(mask.shape, *(a.shape for a in arrays.values()))
    mask = np.broadcast_to(mask, shape)
    full = {k: np.broadcast_to(v, shape) for k, v in arrays.items()}
    idx = np.argwhere(mask)[:_SHOW]
    parts = []
    for i in idx:
        vals = ", ".join(f"{k}={_num(v[tuple(i)])}" for k, v in full.items())
        parts.append(vals if shape == () else f"{vals} (index {tuple(int(j) for j in i)})")
    more = int(mask.sum()) - len(idx)
    return "; ".join(parts) + (f"; ... and {more} more" if more > 0 else "")


def _num(x: float) -> str:
    x = float(x)
    return str(int(x)) if x.is_integer() else f"{x:.4g}"


def as_counts(**counts: ArrayLike) -> dict[str, NDArray[np.float64]]:
    """Check that every keyword argument holds non-negative integer counts.

    Parameters
    ----------
    **counts : array_like
        Counts by name (the name appears in error messages), e.g. ``n=1000, m=200``.

    Returns
    -------
    dict of str to ndarray of float64
        The same names, as float arrays (not broadcast).

    Raises
    ------
    DataValidationError
        For non-numeric, boolean, non-integer, non-finite or negative values, quoting
        the offending entries.

    Examples
    --------
    >>> as_counts(n=1000, m=[100, 200])["m"]
    array([100., 200.])
    """
    out = {}
    for name, value in counts.items():
        arr = np.asarray(value)
        if arr.dtype == bool or not np.issubdtype(arr.dtype, np.number):
            raise DataValidationError(
                f"{name} must be a count (integer or array of integers); got dtype "
                f"{arr.dtype}. Fix: pass {name} as numbers of items, e.g. an int or a numpy "
                "integer array."
            )
        arr = arr.astype(np.float64)
        bad = ~np.isfinite(arr) | (arr != np.floor(arr))
        if bad.any():
            raise DataValidationError(
                f"{name} must be an integer count, got non-integer value(s): "
                f"{_fmt(bad, **{name: arr})}. Fix: pass counts of items, not proportions "
                "(e.g. tp = round(q1_hat * m1))."
            )
        if (arr < 0).any():
            raise DataValidationError(
                f"{name} must be a non-negative count, got: {_fmt(arr < 0, **{name: arr})}. "
                "Fix: pass the number of items (>= 0)."
            )
        out[name] = arr
    return out


def _check_positive(fix: str, **kwargs: NDArray[np.float64]) -> None:
    for name, arr in kwargs.items():
        if (arr == 0).any():
            raise DataValidationError(
                f"{name} must be positive, got {name} == 0: {_fmt(arr == 0, **{name: arr})}. "
                f"Fix: {fix}"
            )


def _check_at_most(
    part: str, total: str, arrays: dict[str, NDArray[np.float64]], fix: str
) -> None:
    bad = arrays[part] > arrays[total]
    if bad.any():
        raise DataValidationError(
            f"{part} must not exceed {total}; offending values: "
            f"{_fmt(bad, **{part: arrays[part], total: arrays[total]})}. Fix: {fix}"
        )


def _check_identifiable(q0: NDArray[np.float64], q1: NDArray[np.float64], which: str) -> None:
    bad = q0 + q1 <= 1
    if bad.any():
        raise DataValidationError(
            f"q0 + q1 <= 1 for {which}; offending values: {_fmt(bad, q0=q0, q1=q1)}. The "
            "misclassification-adjusted estimator (eq. 5) is undefined at q0 + q1 = 1 and "
            "theta is non-identifiable when q0 + q1 < 1 (the judge is no better than chance). "
            "Fix: check that tp counts judge-'correct' items among the m1 human-'correct' ones "
            "and tn judge-'incorrect' items among the m0 human-'incorrect' ones (swapping them "
            "pushes the sum below 1), collect more calibration labels, or use a better judge."
        )


def _check_rates(**rates: ArrayLike) -> dict[str, NDArray[np.float64]]:
    """Proportions in [0, 1]; NaN is allowed (an undefined rate propagates to NaN)."""
    out = {}
    for name, value in rates.items():
        arr = np.asarray(value, dtype=np.float64)
        bad = ~np.isnan(arr) & ~((arr >= 0) & (arr <= 1))
        if bad.any():
            raise DataValidationError(
                f"{name} must be a proportion in [0, 1] (or NaN), got: "
                f"{_fmt(bad, **{name: arr})}. Fix: pass {name} as a fraction, e.g. "
                "q0 = tn / m0, not a count."
            )
        out[name] = arr
    return out


def validate_count_table(
    judged_pos: ArrayLike,
    n: ArrayLike,
    tp: ArrayLike,
    m1: ArrayLike,
    tn: ArrayLike,
    m0: ArrayLike,
    *,
    allow_empty: bool = False,
) -> dict[str, NDArray[np.float64]]:
    """Validate the test counts and the calibration confusion counts.

    Parameters
    ----------
    judged_pos, n, tp, m1, tn, m0 : array_like of int
        As in :func:`rogan_gladen`; broadcast together.
    allow_empty : bool, default False
        Accept ``n == 0``, ``m0 == 0`` and ``m1 == 0`` (a Bayesian posterior lets the
        prior carry an empty class; the closed forms cannot).

    Returns
    -------
    dict of str to ndarray of float64
        The six counts by name, as float arrays (not broadcast).

    Raises
    ------
    DataValidationError
        For negative or non-integer counts, a count above its total (``judged_pos > n``,
        ``tp > m1``, ``tn > m0``) and, unless ``allow_empty``, empty sets.

    Examples
    --------
    >>> sorted(validate_count_table(480, 1000, 90, 100, 70, 100))
    ['judged_pos', 'm0', 'm1', 'n', 'tn', 'tp']
    """
    a = as_counts(judged_pos=judged_pos, n=n, tp=tp, m1=m1, tn=tn, m0=m0)
    if not allow_empty:
        _check_positive("pass the number of test items judged (n >= 1).", n=a["n"])
        _check_positive(
            "label at least one human-'correct' (m1) and one human-'incorrect' (m0) "
            "calibration item; sensitivity and specificity cannot be estimated from an "
            "empty class (see allocate_calibration).",
            m1=a["m1"],
            m0=a["m0"],
        )
    _check_at_most("judged_pos", "n", a, _FIX_JUDGED)
    _check_at_most("tp", "m1", a, _FIX_TP)
    _check_at_most("tn", "m0", a, _FIX_TN)
    return a


def check_alpha(alpha: float) -> None:
    """Check a two-sided ``alpha`` (one minus the confidence level) lies in (0, 0.5).

    ``alpha`` is the *miss* probability: ``alpha=0.05`` asks for a 95% interval. Values
    of 0.5 and above are refused rather than honoured, because they almost always mean
    that the level was passed instead (``alpha=0.95`` would silently give a 5% interval
    that excludes its own estimate's plausible values).

    Parameters
    ----------
    alpha : float
        One minus the confidence level.

    Raises
    ------
    DataValidationError
        When ``alpha`` is not a number in (0, 0.5).

    Examples
    --------
    >>> check_alpha(0.05)
    >>> check_alpha(0.95)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    bayesjudge.data.schema.DataValidationError: alpha must lie in (0, 0.5), got alpha=0.95. ...
    """
    is_number = isinstance(alpha, (int, float, np.floating)) and not isinstance(alpha, bool)
    if is_number and 0 < alpha < 0.5:
        return
    hint = ""
    if is_number and 0.5 <= alpha < 1:
        hint = f" It asks for a {100 * (1 - alpha):.3g}% interval."
    raise DataValidationError(
        f"alpha must lie in (0, 0.5), got alpha={alpha!r}.{hint} alpha is 1 - level: "
        "for a 95% interval pass alpha=0.05."
    )


def _alpha_z(alpha: float) -> float:
    """Normal quantile of a two-sided ``1 - alpha`` interval (alpha checked)."""
    check_alpha(alpha)
    return float(norm.ppf(1 - alpha / 2))


def _check_ci_prob(ci_prob: float) -> float:
    if not (isinstance(ci_prob, (int, float, np.floating)) and 0 < ci_prob < 1):
        raise DataValidationError(
            f"ci_prob must lie in (0, 1), got ci_prob={ci_prob!r}. Fix: pass the interval's "
            f"probability as a fraction, e.g. ci_prob={CI_PROB} (not {100 * CI_PROB:g})."
        )
    return float(ci_prob)


def _out(x: NDArray) -> Float:
    """Return a Python float (bool) for 0-d results, the array otherwise."""
    if np.ndim(x):
        return x[()]
    return bool(x) if np.asarray(x).dtype == bool else float(x)


# --------------------------------------------------------------------------- cores
# Unchecked float kernels. The public rate-level functions below wrap them with
# validation and turn undefined estimates into NaN.


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


def _lang_reiczigel_core(
    judged_pos: NDArray, n: NDArray, tp: NDArray, m1: NDArray, tn: NDArray, m0: NDArray, z: float
) -> tuple[NDArray, NDArray, NDArray, NDArray, NDArray]:
    """Eqs. (6)-(8); returns (centre, lower, upper, q0_tilde, q1_tilde)."""
    z2 = z * z
    n_t, m0_t, m1_t = n + z2, m0 + 2, m1 + 2  # eq. (7)
    p_t = (judged_pos + z2 / 2) / n_t  # n * p_hat = judged_pos
    q0_t = (tn + 1) / m0_t  # m0 * q0_hat = tn
    q1_t = (tp + 1) / m1_t
    theta_t = _rogan_gladen_core(p_t, q0_t, q1_t)
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


def _conditional_calibration_core(
    p: NDArray, tp: NDArray, m1: NDArray, tn: NDArray, m0: NDArray
) -> NDArray:
    """Table 1 (iv): first row of Pr_Q(Z | Z_hat) applied to (p_hat, 1 - p_hat)."""
    fp, fn = m0 - tn, m1 - tp
    with np.errstate(divide="ignore", invalid="ignore"):
        ppv = tp / (tp + fp)  # Pr_Q(Z = 1 | Z_hat = 1)
        false_omission = fn / (fn + tn)  # Pr_Q(Z = 1 | Z_hat = 0)
    return ppv * p + false_omission * (1 - p)


def _interval_result(
    a: dict[str, NDArray[np.float64]], z: float
) -> tuple[NDArray, ...]:
    """Fields of :class:`LangReiczigelInterval` from (unchecked) float counts."""
    with np.errstate(divide="ignore", invalid="ignore"):
        q0, q1 = a["tn"] / a["m0"], a["tp"] / a["m1"]
        theta = np.clip(_rogan_gladen_core(a["judged_pos"] / a["n"], q0, q1), 0.0, 1.0)
    centre, lower, upper, _, _ = _lang_reiczigel_core(
        a["judged_pos"], a["n"], a["tp"], a["m1"], a["tn"], a["m0"], z
    )
    at_boundary = lower == upper  # both limits truncated to the same end of [0, 1]
    shape = np.broadcast_shapes(*(v.shape for v in a.values()))
    fields = (theta, lower, upper, centre, q0, q1, at_boundary)
    return tuple(np.broadcast_to(x, shape).copy() for x in fields)


# --------------------------------------------------------------------------- rate level


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
    r = _check_rates(p=p, q0=q0, q1=q1)
    theta = _rogan_gladen_core(r["p"], r["q0"], r["q1"])
    return _out(np.where(r["q0"] + r["q1"] > 1, theta, np.nan))


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
    z = _alpha_z(alpha)
    r = _check_rates(p=p, q0=q0, q1=q1)
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
    theta = np.clip(_rogan_gladen_core(r["p"], r["q0"], r["q1"]), 0.0, 1.0)
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
    return LangReiczigelInterval(*(_out(np.broadcast_to(x, lower.shape).copy()) for x in fields))


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
    r = _check_rates(p=p, q0=q0, q1=q1)
    s = as_counts(m0=m0, m1=m1)
    with np.errstate(invalid="ignore"):
        tp = np.where(s["m1"] > 0, r["q1"] * s["m1"], 0.0)
        tn = np.where(s["m0"] > 0, r["q0"] * s["m0"], 0.0)
    return _out(_conditional_calibration_core(r["p"], tp, s["m1"], tn, s["m0"]))


# --------------------------------------------------------------------------- eq. (5), (9)


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
    _check_identifiable(q0, q1, _HAT)
    theta = _rogan_gladen_core(a["judged_pos"] / a["n"], q0, q1)
    return _out(np.clip(theta, 0.0, 1.0) if clip else theta)


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
    _check_identifiable(q0, q1, _HAT)
    return _out(_variance_core(a["judged_pos"] / a["n"], q0, q1, a["n"], a["m0"], a["m1"]))


# --------------------------------------------------------------------------- eqs. (6)-(8)


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
    z = _alpha_z(alpha)
    a = validate_count_table(judged_pos, n, tp, m1, tn, m0)
    _check_identifiable(a["tn"] / a["m0"], a["tp"] / a["m1"], _HAT)
    _check_identifiable(
        (a["tn"] + 1) / (a["m0"] + 2),
        (a["tp"] + 1) / (a["m1"] + 2),
        "the adjusted q0 = (tn + 1)/(m0 + 2), q1 = (tp + 1)/(m1 + 2) of eq. (7) used by "
        "the interval",
    )
    fields = _interval_result(a, z)
    at_boundary = fields[-1]
    if at_boundary.any():
        where = _fmt(at_boundary, **a)
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
            stacklevel=2,
        )
    return LangReiczigelInterval(*(_out(x) for x in fields))


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
    z = _alpha_z(alpha)
    a = as_counts(judged_pos=judged_pos, n=n)
    _check_positive("pass the number of test items judged (n >= 1).", n=a["n"])
    _check_at_most("judged_pos", "n", a, _FIX_JUDGED)
    p = a["judged_pos"] / a["n"]
    half = z * np.sqrt(p * (1 - p) / a["n"])
    return Interval(_out(p), _out(np.clip(p - half, 0.0, 1.0)), _out(np.clip(p + half, 0.0, 1.0)))


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
        Coverage probability of the interval, in (0, 1).

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
        ``ci_prob`` outside (0, 1).

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
    ci_prob = _check_ci_prob(ci_prob)
    c = as_counts(successes=successes, trials=trials)
    _check_at_most(
        "successes", "trials", c, "successes counts the trials with the outcome of interest."
    )
    x, n = np.broadcast_arrays(c["successes"], c["trials"])
    z2 = float(norm.ppf(0.5 + ci_prob / 2)) ** 2
    with np.errstate(invalid="ignore", divide="ignore"):
        p = x / n
        centre = (p + z2 / (2 * n)) / (1 + z2 / n)
        half = np.sqrt(z2) / (1 + z2 / n) * np.sqrt(p * (1 - p) / n + z2 / (4 * n**2))
    lower = np.where(n == 0, 0.0, np.clip(centre - half, 0.0, 1.0))
    upper = np.where(n == 0, 1.0, np.clip(centre + half, 0.0, 1.0))
    return _out(lower), _out(upper)


# --------------------------------------------------------------------------- Algorithm 1


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
    _check_positive(
        "pass at least one pilot item per class (the paper uses m_pilot = 10).", m_pilot=mp
    )
    bad = 2 * mp > m_
    if bad.any():
        raise DataValidationError(
            f"2 * m_pilot must not exceed the budget m (Algorithm 1 input); offending values: "
            f"{_fmt(bad, m=m_, m_pilot=mp)}. Fix: lower m_pilot or raise m."
        )
    props = {}
    for name, value in (("p_hat", p_hat), ("q0_pilot", q0_pilot), ("q1_pilot", q1_pilot)):
        arr = np.asarray(value, dtype=np.float64)
        bad = ~((arr >= 0) & (arr <= 1))
        if bad.any():
            raise DataValidationError(
                f"{name} must be a proportion in [0, 1], got: {_fmt(bad, **{name: arr})}. "
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


# --------------------------------------------------------------------------- Proposition 6.1


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
    _check_positive("pass the number of human labels (m >= 1).", m=m_)
    theta_ = np.asarray(theta, dtype=np.float64)
    q_ = np.asarray(q, dtype=np.float64)
    bad = ~((theta_ >= 0) & (theta_ <= 1))
    if bad.any():
        raise DataValidationError(
            f"theta must lie in [0, 1], got: {_fmt(bad, theta=theta_)}. Fix: pass an accuracy."
        )
    bad = ~((q_ > 0.5) & (q_ <= 1))
    if bad.any():
        raise DataValidationError(
            f"q must lie in (1/2, 1], got: {_fmt(bad, q=q_)}. With q0 = q1 = q <= 1/2, "
            "q0 + q1 <= 1 and theta is not identifiable from judge outputs. Fix: pass the "
            "judge's common sensitivity/specificity."
        )
    var_judge = q_ * (1 - q_) / (m_ * (2 * q_ - 1) ** 2)
    var_human = theta_ * (1 - theta_) / m_
    with np.errstate(invalid="ignore"):
        half = np.sqrt(0.5 - 1 / (4 * (2 * q_ - 1) ** 2))
    shape = np.broadcast_shapes(theta_.shape, q_.shape, m_.shape)
    fields = (var_judge <= var_human, var_judge, var_human, 0.5 - half, 0.5 + half)
    return HumanComparison(*(_out(np.broadcast_to(x, shape).copy()) for x in fields))


# --------------------------------------------------------------------------- Table 1


def naive_estimate(judged_pos: ArrayLike, n: ArrayLike) -> Float:
    r"""Table 1 (i), naive LLM-judgment estimator :math:`\mathbb E_P[\hat Z] = \hat p`, eq. (2).

    Examples
    --------
    >>> naive_estimate(480, 1000)
    0.48
    """
    a = as_counts(judged_pos=judged_pos, n=n)
    _check_positive("pass the number of test items judged (n >= 1).", n=a["n"])
    _check_at_most("judged_pos", "n", a, _FIX_JUDGED)
    return _out(a["judged_pos"] / a["n"])


def calibration_only_estimate(m1: ArrayLike, m0: ArrayLike) -> Float:
    r"""Table 1 (ii), calibration-only estimator :math:`\mathbb E_Q[Z] = m_1/(m_0+m_1)`.

    Unbiased for :math:`\theta_P` only if the calibration set is a random sample of the
    test distribution (:math:`\Pr_P(Z) = \Pr_Q(Z)`); no interval is given in the paper.
    """
    a = as_counts(m1=m1, m0=m0)
    bad = a["m0"] + a["m1"] == 0
    if bad.any():
        raise DataValidationError(
            f"m0 + m1 must be positive, got: {_fmt(bad, m0=a['m0'], m1=a['m1'])}. "
            "Fix: label calibration items."
        )
    return _out(a["m1"] / (a["m0"] + a["m1"]))


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
    return _out(a["judged_pos"] / a["n"] + rectifier)


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
            offending = _fmt(count == 0, tp=a["tp"], m1=a["m1"], tn=a["tn"], m0=a["m0"])
            raise DataValidationError(
                f"no calibration item was judged {label}, so Pr_Q(Z | Z_hat = {label}) is "
                f"undefined; offending values: {offending}. Fix: label more calibration "
                "items, or use the misclassification-adjusted rogan_gladen."
            )
    p = a["judged_pos"] / a["n"]
    return _out(_conditional_calibration_core(p, a["tp"], a["m1"], a["tn"], a["m0"]))


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
