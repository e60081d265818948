"""Validation shared by the estimators: counts, rates, alpha, and error messages.

Every check raises :class:`~bayesjudge.data.DataValidationError` naming the
argument, quoting the offending values (:func:`format_offending`) and saying the fix.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import ndtri  # the normal quantile (scipy.stats costs ~1 s to import)

from bayesjudge.data import DataValidationError, check_ci_prob

__all__ = [
    "HAT",
    "Float",
    "as_counts",
    "as_output",
    "check_alpha",
    "check_at_most",
    "check_ci_prob",
    "check_identifiable",
    "check_positive",
    "check_rates",
    "format_offending",
    "validate_count_table",
    "validate_test_counts",
    "z_quantile",
]

Float = float | NDArray[np.float64]

#: The plain calibration estimates, as error messages name them.
HAT = "the estimates q0_hat = tn/m0 (specificity), q1_hat = tp/m1 (sensitivity)"

_SHOW = 5  # offending values quoted in an error message
_FIX_N = "pass the number of test items judged (n >= 1)."
_FIX_JUDGED = "judged_pos is the number of the n test items the judge called 'correct'."
_FIX_TP = "tp is the number of the m1 human-'correct' items the judge called 'correct'."
_FIX_TN = "tn is the number of the m0 human-'incorrect' items the judge called 'incorrect'."


def format_offending(mask: NDArray[np.bool_], **arrays: NDArray) -> str:
    """Quote the first few entries where ``mask`` holds, e.g. ``tp=12, m1=10 (index (3,))``.

    Parameters
    ----------
    mask : ndarray of bool
        Offending positions; broadcast with the arrays.
    **arrays : ndarray
        Values to quote by name.

    Returns
    -------
    str
        At most five entries, then ``... and k more``.

    Examples
    --------
    >>> format_offending(np.array([False, True]), tp=np.array([3, 12]), m1=np.array([10, 10]))
    'tp=12, m1=10 (index (1,))'
    """
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
                f"{format_offending(bad, **{name: arr})}. Fix: pass counts of items, not "
                "proportions "
                "(e.g. tp = round(q1_hat * m1))."
            )
        if (arr < 0).any():
            raise DataValidationError(
                f"{name} must be a non-negative count, got: "
                f"{format_offending(arr < 0, **{name: arr})}. "
                "Fix: pass the number of items (>= 0)."
            )
        out[name] = arr
    return out


def check_positive(fix: str, **kwargs: NDArray[np.float64]) -> None:
    """Raise a DataValidationError naming each array that holds a zero, with ``fix``."""
    for name, arr in kwargs.items():
        if (arr == 0).any():
            raise DataValidationError(
                f"{name} must be positive, got {name} == 0: "
                f"{format_offending(arr == 0, **{name: arr})}. "
                f"Fix: {fix}"
            )


def check_at_most(
    part: str, total: str, arrays: dict[str, NDArray[np.float64]], fix: str
) -> None:
    """Raise a DataValidationError where ``arrays[part] > arrays[total]``, with ``fix``."""
    bad = arrays[part] > arrays[total]
    if bad.any():
        raise DataValidationError(
            f"{part} must not exceed {total}; offending values: "
            f"{format_offending(bad, **{part: arrays[part], total: arrays[total]})}. Fix: {fix}"
        )


def check_identifiable(
    q0: NDArray[np.float64], q1: NDArray[np.float64], which: str = HAT
) -> None:
    """Raise a DataValidationError where ``q0 + q1 <= 1`` (eq. 5 undefined / not identifiable).

    ``which`` names the estimates in the message (default: the plain ``tn/m0``, ``tp/m1``).
    """
    bad = q0 + q1 <= 1
    if bad.any():
        raise DataValidationError(
            f"q0 + q1 <= 1 for {which}; offending values: "
            f"{format_offending(bad, q0=q0, q1=q1)}. The "
            "misclassification-adjusted estimator (eq. 5) is undefined at q0 + q1 = 1 and "
            "theta is non-identifiable when q0 + q1 < 1 (the judge is no better than chance). "
            "Fix: check that tp counts judge-'correct' items among the m1 human-'correct' ones "
            "and tn judge-'incorrect' items among the m0 human-'incorrect' ones (swapping them "
            "pushes the sum below 1), collect more calibration labels, or use a better judge."
        )


def check_rates(**rates: ArrayLike) -> dict[str, NDArray[np.float64]]:
    """Check proportions lie in [0, 1]; NaN is allowed (an undefined rate propagates to NaN).

    Returns the rates as float arrays by name; raises a DataValidationError quoting the
    offending entries.
    """
    out = {}
    for name, value in rates.items():
        arr = np.asarray(value, dtype=np.float64)
        bad = ~np.isnan(arr) & ~((arr >= 0) & (arr <= 1))
        if bad.any():
            raise DataValidationError(
                f"{name} must be a proportion in [0, 1] (or NaN), got: "
                f"{format_offending(bad, **{name: arr})}. Fix: pass {name} as a fraction, e.g. "
                "q0 = tn / m0, not a count."
            )
        out[name] = arr
    return out


def validate_test_counts(judged_pos: ArrayLike, n: ArrayLike) -> dict[str, NDArray[np.float64]]:
    """Validate the test-set counts alone: integers, ``n >= 1``, ``judged_pos <= n``.

    Returns
    -------
    dict of str to ndarray of float64
        ``judged_pos`` and ``n`` as float arrays.

    Examples
    --------
    >>> validate_test_counts(480, 1000)["n"]
    array(1000.)
    """
    a = as_counts(judged_pos=judged_pos, n=n)
    check_positive(_FIX_N, n=a["n"])
    check_at_most("judged_pos", "n", a, _FIX_JUDGED)
    return a


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
        check_positive(_FIX_N, n=a["n"])
        check_positive(
            "label at least one human-'correct' (m1) and one human-'incorrect' (m0) "
            "calibration item; sensitivity and specificity cannot be estimated from an "
            "empty class (see allocate_calibration).",
            m1=a["m1"],
            m0=a["m0"],
        )
    check_at_most("judged_pos", "n", a, _FIX_JUDGED)
    check_at_most("tp", "m1", a, _FIX_TP)
    check_at_most("tn", "m0", a, _FIX_TN)
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
    bayesjudge.data.messages.DataValidationError: alpha must lie in (0, 0.5), got alpha=0.95. ...
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


def z_quantile(alpha: float) -> float:
    """Normal quantile ``z = Phi^-1(1 - alpha / 2)`` of a two-sided ``1 - alpha`` interval.

    ``alpha`` is checked by :func:`check_alpha`.

    Examples
    --------
    >>> round(z_quantile(0.05), 4)
    1.96
    """
    check_alpha(alpha)
    return float(ndtri(1 - alpha / 2))


def as_output(x: NDArray) -> Float:
    """Return a Python float (bool) for 0-d results, the array otherwise.

    Examples
    --------
    >>> as_output(np.float64(0.5)), as_output(np.array([0.5]))
    (0.5, array([0.5]))
    """
    if np.ndim(x):
        return x[()]
    return bool(x) if np.asarray(x).dtype == bool else float(x)
