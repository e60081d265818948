"""Metrics of a probabilistic judge against human preferences (alignment, agreement, calibration).

Implements the evaluation metrics of appendix C.1 and Section 5.1 of Z. Li, X. Li,
C. Huang et al. (2025), "Judging with Confidence: Calibrating Autoraters to
Preference Distributions", arXiv:2510.00263: the mean squared error to the
multi-annotator estimate :math:`\\hat p` (alignment), agreement with the majority
label and macro precision / recall / F1 over {A, tie, B} (performance), and the
expected calibration error and Brier score on binarised labels (calibration).
A judge reports :math:`p_\\theta(x) \\approx \\Pr[B \\succ A \\mid x]`; binary labels
are ``1`` (or ``"B"``) when B is better and ``0`` (or ``"A"``) when A is.

Every function is vectorised and batch-aware: the last axis holds the items and
any leading axes are independent replicates (bootstrap resamples), so a 1-D call
returns a float and a ``(n_resamples, n_items)`` call returns one value per row.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from bayesjudge.data import DataValidationError, check_unit_interval, label_key, show_values

__all__ = [
    "PRF",
    "TERNARY_LABELS",
    "agreement",
    "as_binary_labels",
    "as_probabilities",
    "brier_score",
    "expected_calibration_error",
    "macro_prf",
    "mse_to_phat",
    "predicted_label",
]

TERNARY_LABELS = ("A", "tie", "B")
"""The three verdicts of appendix C.1: A better, tie, B better."""

Metric = float | NDArray[np.float64]


class PRF(NamedTuple):
    """Macro-averaged precision, recall and F1 (floats, or arrays over resamples)."""

    precision: Metric
    recall: Metric
    f1: Metric


def _check_items(arr: np.ndarray, name: str) -> None:
    if arr.ndim == 0:
        raise DataValidationError(
            f"`{name}` is a single value; pass an array with the items on its last axis "
            f"(e.g. [{arr.item()!r}])."
        )
    if arr.shape[-1] == 0:
        raise DataValidationError(f"`{name}` is empty; a metric needs at least one item.")


def as_probabilities(values: ArrayLike, name: str) -> NDArray[np.float64]:
    """Return ``values`` as a float array of probabilities, or raise naming ``name``.

    Raises a :class:`DataValidationError` for an empty or non-numeric input, NaN
    or a value outside [0, 1], showing the first offending values.
    """
    arr = np.asarray(values)
    if arr.dtype.kind not in "biuf":
        raise DataValidationError(
            f"`{name}` must hold probabilities (numbers in [0, 1]); got dtype {arr.dtype} "
            f"with values {show_values(arr.ravel()[:5])}. Parse judge text first "
            "(bayesjudge.rewards.parse_probability)."
        )
    arr = arr.astype(np.float64)
    _check_items(arr, name)
    return check_unit_interval(arr, name, "Fix or drop those items explicitly (nothing is "
                               "dropped silently).")


def as_binary_labels(values: ArrayLike, name: str) -> NDArray[np.float64]:
    """Binary labels as floats: 1 (or ``"B"``) = B better, 0 (or ``"A"``) = A better.

    ``"a"`` / ``" B "`` count too: labels ignore letter case and surrounding spaces.

    Raises a :class:`DataValidationError` naming ``name`` for anything else (a
    ``"tie"`` label included: calibration metrics skip ties, see
    :func:`~bayesjudge.metrics.metric_table`).
    """
    arr = np.asarray(values)
    if arr.dtype.kind in "OUS":
        flat = arr.ravel()
        out = np.full(flat.shape, np.nan)
        keys = [label_key(v) for v in flat]  # labels: any letter case, spaces ignored
        is_a, is_b = (np.array([k == c for k in keys], dtype=bool) for c in ("a", "b"))
        out[is_a], out[is_b] = 0.0, 1.0
        numeric = ~(is_a | is_b)
        for i in np.flatnonzero(numeric):  # 0/1 numbers inside an object array
            v = flat[i]
            if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool):
                out[i] = float(v)
        arr_f = out.reshape(arr.shape)
    elif arr.dtype.kind in "biuf":
        arr_f = arr.astype(np.float64)
    else:
        arr_f = np.full(arr.shape, np.nan)
    _check_items(arr_f, name)
    bad = ~np.isin(arr_f, (0.0, 1.0))
    if bad.any():
        raise DataValidationError(
            f"`{name}` must be binary labels (1 or 'B' = B better, 0 or 'A' = A better); found "
            f"{show_values(arr[bad])}. Drop tie-labelled items before a calibration metric."
        )
    return arr_f


def predicted_label(prob: ArrayLike, tie_band: float = 0.0) -> NDArray[np.object_]:
    """The judge's verdict in {A, tie, B} from P(B better), by thresholding at 1/2.

    ``"B"`` when :math:`p > 1/2 + \\delta`, ``"A"`` when :math:`p < 1/2 - \\delta`,
    ``"tie"`` otherwise (:math:`\\delta` = ``tie_band``; with the default 0 only
    :math:`p = 1/2` is a tie, the value the paper's prompts define as "similar quality").

    Examples
    --------
    >>> predicted_label([0.2, 0.5, 0.9]).tolist()
    ['A', 'tie', 'B']
    """
    p = as_probabilities(prob, "prob")
    if not 0.0 <= tie_band < 0.5:
        raise DataValidationError(f"tie_band must lie in [0, 0.5), got {tie_band!r}.")
    out = np.full(p.shape, "tie", dtype=object)
    out[p > 0.5 + tie_band] = "B"
    out[p < 0.5 - tie_band] = "A"
    return out


def same_index(*values, names: Sequence[str]) -> None:
    """Raise if two of ``values`` are pandas Series with different indexes.

    The metrics pair items by position, as numpy does; two Series of the same items in
    another row order (or of different items) would pair the wrong items silently.
    """
    series = [(name, v) for name, v in zip(names, values) if isinstance(v, pd.Series)]
    for (name_a, a), (name_b, b) in zip(series, series[1:]):
        if not a.index.equals(b.index):
            raise DataValidationError(
                f"`{name_a}` and `{name_b}` are pandas Series with different indexes (first "
                f"labels {show_values(a.index[:3])} and {show_values(b.index[:3])}); the "
                f"metric pairs items by position, so it would pair different items. Fix: align "
                f"them first ({name_b} = {name_b}.reindex({name_a}.index)), or pass "
                f".to_numpy() of both to pair them by position.")


def _last_axis_match(*arrays: NDArray, names: Sequence[str]) -> None:
    n = {a.shape[-1] for a in arrays}
    if len(n) > 1:
        raise DataValidationError(
            f"{', '.join(f'`{x}`' for x in names)} must describe the same items; their last "
            f"axes have lengths {[a.shape[-1] for a in arrays]}."
        )
    try:
        np.broadcast_shapes(*(a.shape for a in arrays))
    except ValueError as err:
        raise DataValidationError(
            f"shapes {[a.shape for a in arrays]} of {list(names)} do not broadcast."
        ) from err


def _out(values: NDArray[np.float64]) -> Metric:
    return float(values) if np.ndim(values) == 0 else values


def expected_calibration_error(
    prob: ArrayLike,
    label: ArrayLike,
    n_bins: int = 10,
    *,
    kind: Literal["confidence", "probability"] = "confidence",
) -> Metric:
    """Expected calibration error with K equal-width bins (appendix C.1).

    .. math::

        \\mathrm{ECE} = \\sum_{k=1}^{K} \\frac{|B_k|}{N}\\,
        \\bigl|\\mathrm{Acc}(B_k) - \\mathrm{Conf}(B_k)\\bigr|,
        \\qquad B_k = \\{i : c_i \\in ((k-1)/K,\\ k/K]\\}

    and :math:`c_i = 0` goes in the first bin (the half-open intervals would leave it
    out). Empty bins contribute nothing (never NaN).

    ``kind="confidence"`` (default, the paper's formula after Guo et al. 2017): the
    predicted label is :math:`\\hat y_i = \\mathbf 1\\{p_i > 1/2\\}`, the confidence
    :math:`c_i = \\max(p_i, 1 - p_i)` and :math:`\\mathrm{Acc}` the share with
    :math:`\\hat y_i = y_i`; at :math:`p_i = 1/2` the verdict is a coin flip and counts
    as half correct, which keeps the metric symmetric under swapping A and B.
    ``kind="probability"``: the reliability-diagram form for class B,
    :math:`c_i = p_i` and :math:`\\mathrm{Acc}(B_k)` the share of :math:`y_i = 1`.

    Parameters
    ----------
    prob : array_like, shape (..., n_items)
        P(B better) per item; leading axes are independent replicates.
    label : array_like, shape (..., n_items)
        Binary labels (1 or "B" = B better, 0 or "A"); tie-labelled items must be
        dropped first, as the paper does.
    n_bins : int, default 10
        K, the number of equal-width bins on [0, 1].
    kind : {"confidence", "probability"}
        See above.

    Returns
    -------
    float, or ndarray over the leading axes.

    Examples
    --------
    Confidences 0.9, 0.8, 0.7 fall in three bins with accuracies 1, 0, 1:
    (|1 - 0.9| + |0 - 0.8| + |1 - 0.7|) / 3 = 0.4.

    >>> round(expected_calibration_error([0.9, 0.8, 0.3], [1, 0, 0]), 4)
    0.4
    """
    same_index(prob, label, names=("prob", "label"))
    p = as_probabilities(prob, "prob")
    y = as_binary_labels(label, "label")
    _last_axis_match(p, y, names=("prob", "label"))
    if isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)) or n_bins < 1:
        raise DataValidationError(f"n_bins must be a positive integer, got {n_bins!r}.")
    p, y = np.broadcast_arrays(p, y)
    if kind == "confidence":
        conf = np.maximum(p, 1.0 - p)
        hit = np.where(p > 0.5, y, 1.0 - y)
        acc = np.where(p == 0.5, 0.5, hit)
    elif kind == "probability":
        conf, acc = p, y
    else:
        raise DataValidationError(f"kind must be 'confidence' or 'probability', got {kind!r}.")
    lead, n = p.shape[:-1], p.shape[-1]
    rows = int(np.prod(lead, dtype=np.int64))
    # Edges k/K as doubles; side="left" puts c == k/K in bin k and c == 0 in bin 1.
    edges = np.arange(1, n_bins + 1) / n_bins
    bins = np.minimum(np.searchsorted(edges, conf.reshape(rows, n), side="left"), n_bins - 1)
    flat = (bins + n_bins * np.arange(rows)[:, None]).ravel()
    gap = (np.bincount(flat, acc.reshape(-1), rows * n_bins)
           - np.bincount(flat, conf.reshape(-1), rows * n_bins))
    # |B_k|/N |mean acc - mean conf| = |sum acc - sum conf| / N
    return _out(np.abs(gap).reshape(rows, n_bins).sum(axis=1).reshape(lead) / n)


def brier_score(prob: ArrayLike, label: ArrayLike) -> Metric:
    """Brier score :math:`\\frac1N\\sum_i (y_i - \\hat p_i)^2` on binary labels (appendix C.1).

    Parameters as :func:`expected_calibration_error`.

    Examples
    --------
    >>> round(brier_score([0.9, 0.2], [1, 1]), 3)
    0.325
    """
    same_index(prob, label, names=("prob", "label"))
    p = as_probabilities(prob, "prob")
    y = as_binary_labels(label, "label")
    _last_axis_match(p, y, names=("prob", "label"))
    return _out(np.mean((y - p) ** 2, axis=-1))


def mse_to_phat(prob: ArrayLike, p_hat: ArrayLike) -> Metric:
    """Alignment error :math:`\\frac1N\\sum_i (p_\\theta(x_i) - \\hat p(x_i))^2` (Section 5.1).

    :math:`\\hat p = k/m` is the multi-annotator estimate of :math:`p^*` (Lemma 2:
    unbiased, variance :math:`p^*(1-p^*)/m`), so even the true :math:`p^*` scores
    :math:`E[p^*(1-p^*)/m] > 0` here: this is distance to a noisy target.

    Examples
    --------
    >>> round(mse_to_phat([0.5, 1.0], [2 / 3, 1.0]), 4)
    0.0139
    """
    same_index(prob, p_hat, names=("prob", "p_hat"))
    p = as_probabilities(prob, "prob")
    q = as_probabilities(p_hat, "p_hat")
    _last_axis_match(p, q, names=("prob", "p_hat"))
    return _out(np.mean((p - q) ** 2, axis=-1))


def _codes(values: ArrayLike, labels: Sequence, name: str) -> NDArray[np.int64]:
    """Position of each value in ``labels`` (exact comparison), or raise naming ``name``."""
    raw = np.asarray(values)
    if raw.dtype.kind in "iu" and all(
        isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in labels
    ):  # integer codes (what the bootstrap passes): vectorised lookup
        _check_items(raw, name)
        lab = np.asarray(labels, dtype=np.int64)
        order = np.argsort(lab)
        at = np.clip(np.searchsorted(lab[order], raw), 0, lab.size - 1)
        codes = np.where(lab[order][at] == raw, order[at], -1)
        if (codes < 0).any():
            raise DataValidationError(
                f"`{name}` holds value(s) outside labels={tuple(labels)}: "
                f"{show_values(np.unique(raw[codes < 0]))}."
            )
        return codes.astype(np.int64)
    arr = np.asarray(values, dtype=object)
    _check_items(arr, name)
    codes = pd.Index(list(labels), dtype=object).get_indexer(arr.ravel()).astype(np.int64)
    if (codes < 0).any():
        bad = pd.unique(arr.ravel()[codes < 0])
        raise DataValidationError(
            f"`{name}` holds value(s) outside labels={tuple(labels)}: {show_values(bad)}. "
            "Map them onto the declared labels (e.g. 0 -> 'A', 1 -> 'B') or pass `labels`."
        )
    return codes.reshape(arr.shape)


def agreement(
    pred_label: ArrayLike, majority_label: ArrayLike, labels: Sequence = TERNARY_LABELS
) -> Metric:
    """Agreement with the majority label: :math:`\\sum_i TP_i / \\sum_i (TP_i + FN_i)` (C.1).

    That is the share of items whose predicted verdict equals the majority label
    (labels are compared exactly as given and must belong to ``labels``).

    Examples
    --------
    >>> agreement(["A", "B", "tie", "B"], ["A", "A", "tie", "B"])
    0.75
    """
    same_index(pred_label, majority_label, names=("pred_label", "majority_label"))
    pred = _codes(pred_label, labels, "pred_label")
    true = _codes(majority_label, labels, "majority_label")
    _last_axis_match(pred, true, names=("pred_label", "majority_label"))
    return _out(np.mean(pred == true, axis=-1))


def macro_prf(
    pred: ArrayLike,
    true: ArrayLike,
    labels: Sequence = TERNARY_LABELS,
    *,
    zero_division: float = 0.0,
) -> PRF:
    """Macro precision, recall and F1 over ``labels`` (appendix C.1).

    .. math::

        P = \\frac1C\\sum_i \\frac{TP_i}{TP_i + FP_i},\\quad
        R = \\frac1C\\sum_i \\frac{TP_i}{TP_i + FN_i},\\quad
        F_1 = \\frac1C\\sum_i \\frac{2\\,TP_i}{2\\,TP_i + FP_i + FN_i}

    Every class in ``labels`` is averaged (C = len(labels)), observed or not. A
    ratio 0/0 (a class never predicted, for precision; never true, for recall;
    neither, for F1) counts as ``zero_division`` (default 0, scikit-learn's
    ``zero_division=0``): a judge that never says "tie" scores 0 precision on tie.

    Examples
    --------
    >>> [round(v, 4) for v in macro_prf(["A", "B", "B"], ["A", "B", "tie"])]
    [0.5, 0.6667, 0.5556]
    """
    c = len(labels)
    same_index(pred, true, names=("pred", "true"))
    pred_c = _codes(pred, labels, "pred")
    true_c = _codes(true, labels, "true")
    _last_axis_match(pred_c, true_c, names=("pred", "true"))
    pred_c, true_c = np.broadcast_arrays(pred_c, true_c)
    lead, n = pred_c.shape[:-1], pred_c.shape[-1]
    rows = int(np.prod(lead, dtype=np.int64))
    flat = (np.arange(rows)[:, None] * c * c + true_c.reshape(rows, n) * c
            + pred_c.reshape(rows, n)).ravel()
    confusion = np.bincount(flat, minlength=rows * c * c).reshape(rows, c, c).astype(float)
    tp = np.diagonal(confusion, axis1=1, axis2=2)
    fp = confusion.sum(axis=1) - tp  # predicted i, true something else
    fn = confusion.sum(axis=2) - tp  # true i, predicted something else

    def ratio(num, den):
        safe = np.where(den > 0, den, 1.0)
        return np.where(den > 0, num / safe, zero_division).mean(axis=1).reshape(lead)

    return PRF(_out(ratio(tp, tp + fp)), _out(ratio(tp, tp + fn)),
               _out(ratio(2 * tp, 2 * tp + fp + fn)))
