"""Meta-evaluation metrics for ordinal preference labels.

Implements the two metrics of Dadkhahi, Trabelsi, Riley, Juraska, Mirzazadeh et
al. (2025), "Distribution-Calibrated Inference Time Compute for Thinking
LLM-as-a-Judge", arXiv:2512.03019: mean absolute error on labels in {-1, 0, +1}
(Section 4, eq. 1) and pairwise accuracy (Section 5, "Meta Evaluation Metrics").
Both are pure functions and accept either one prediction vector or a stack of
per-split predictions with a ``(n_splits, n_items)`` boolean mask selecting each
split's evaluation items, so the paper's 100 calibration/evaluation splits are
scored in one call.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from bayesjudge.data import DataValidationError
from bayesjudge.metrics.calibration import same_index

__all__ = ["mae", "pairwise_accuracy"]

_LABELS = np.array([-1.0, 0.0, 1.0])


def mae(
    y_pred: ArrayLike, y_true: ArrayLike, mask: ArrayLike | None = None
) -> float | NDArray[np.float64]:
    """Mean absolute error on ordinal labels (eq. 1).

    .. math:: \\mathrm{MAE} = \\frac{1}{n}\\sum_{i=1}^{n} |\\hat y_i - y^*_i|

    A full reversal (-1 vs +1) costs 2, a tie confused with a preference costs 1.

    Parameters
    ----------
    y_pred : array_like, shape (n_items,) or (n_splits, n_items)
        Predicted labels in {-1, 0, +1}. A 2-D array holds one row of
        predictions per split (e.g. a method re-calibrated on every split).
    y_true : array_like, shape (n_items,)
        Gold labels in {-1, 0, +1}.
    mask : array_like of bool, shape (n_splits, n_items), optional
        ``mask[s, i]`` is True when item i is in the evaluation set of split s.
        Entries outside the mask are ignored (they may be NaN).

    Returns
    -------
    float
        When ``y_pred`` is 1-D and ``mask`` is None.
    ndarray, shape (n_splits,)
        Otherwise: the MAE of each split over its own evaluation items.

    Raises
    ------
    DataValidationError
        On empty input, mismatched shapes, an empty split, NaN, or labels
        outside {-1, 0, +1} among the scored entries.

    Examples
    --------
    >>> mae([1, 0, -1], [1, 1, 1])
    1.0
    """
    return _masked_mean(np.abs, y_pred, y_true, mask)


def pairwise_accuracy(
    y_pred: ArrayLike, y_true: ArrayLike, mask: ArrayLike | None = None
) -> float | NDArray[np.float64]:
    """Pairwise accuracy: the share of exactly matched labels (Section 5).

    .. math:: \\mathrm{PA} = \\frac{1}{n}\\sum_{i=1}^{n} \\mathbf 1[\\hat y_i = y^*_i]

    Parameters, returns and errors are those of :func:`mae`.

    Examples
    --------
    >>> pairwise_accuracy([1, 0, -1], [1, 1, 1])
    0.3333333333333333
    """
    return _masked_mean(lambda diff: (diff == 0).astype(float), y_pred, y_true, mask)


def _masked_mean(loss, y_pred: ArrayLike, y_true: ArrayLike, mask: ArrayLike | None):
    pred, true, keep, squeeze = _align(y_pred, y_true, mask)
    for name, values in (("y_pred", pred), ("y_true", np.broadcast_to(true, pred.shape))):
        _check_scored_labels(values[keep], name)
    # Masked-out entries may be NaN; zero them before the loss so they add nothing.
    diff = np.where(keep, pred - true, 0.0)
    per_split = np.where(keep, loss(diff), 0.0).sum(axis=1) / keep.sum(axis=1)
    return float(per_split[0]) if squeeze else per_split


def _align(y_pred: ArrayLike, y_true: ArrayLike, mask: ArrayLike | None):
    """Return (pred 2-D, true 1-D, mask 2-D, squeeze) after shape checks."""
    same_index(y_pred, y_true, names=("y_pred", "y_true"))
    pred = _as_float(y_pred, "y_pred")
    true = _as_float(y_true, "y_true")
    if true.ndim != 1 or pred.ndim not in (1, 2):
        raise DataValidationError(
            f"`y_true` must be 1-D and `y_pred` 1-D or 2-D (n_splits, n_items); got shapes "
            f"{true.shape} and {pred.shape}."
        )
    if true.size == 0:
        raise DataValidationError("`y_true` is empty; a metric needs at least one item.")
    if pred.shape[-1] != true.shape[0]:
        raise DataValidationError(
            f"`y_pred` has {pred.shape[-1]} items but `y_true` has {true.shape[0]}; "
            "pass predictions and labels for the same items in the same order."
        )
    squeeze = pred.ndim == 1 and mask is None
    if mask is None:
        keep = np.ones((pred.shape[0] if pred.ndim == 2 else 1, true.size), dtype=bool)
    else:
        keep = np.asarray(mask)
        if keep.dtype != bool or keep.ndim != 2 or keep.shape[1] != true.size:
            raise DataValidationError(
                f"`mask` must be a boolean array (n_splits, {true.size}); got dtype "
                f"{keep.dtype} and shape {keep.shape}."
            )
        if pred.ndim == 2 and pred.shape != keep.shape:
            raise DataValidationError(
                f"`y_pred` shape {pred.shape} does not match `mask` shape {keep.shape}."
            )
        empty = ~keep.any(axis=1)
        if empty.any():
            raise DataValidationError(
                f"`mask` selects no items in split(s) {np.flatnonzero(empty)[:5].tolist()}; "
                "every split needs at least one evaluation item."
            )
    pred = np.broadcast_to(pred, keep.shape)
    return pred, true, keep, squeeze


def _as_float(values: ArrayLike, name: str) -> NDArray[np.float64]:
    arr = np.asarray(values)
    if arr.dtype.kind not in "iuf":
        raise DataValidationError(
            f"`{name}` must be numeric labels in {{-1, 0, +1}}; got dtype {arr.dtype}."
        )
    return arr.astype(np.float64)


def _check_scored_labels(values: NDArray[np.float64], name: str) -> None:
    if np.isnan(values).any():
        raise DataValidationError(
            f"`{name}` contains NaN among the scored items; predict every evaluation item "
            "or leave it out of `mask`."
        )
    bad = ~np.isin(values, _LABELS)
    if bad.any():
        raise DataValidationError(
            f"`{name}` must contain only labels in {{-1, 0, +1}}; found "
            f"{np.unique(values[bad])[:5].tolist()}."
        )
