"""Vote-aggregation baselines the Davidson aggregator is compared against.

Implements the baselines of Section 5 of Dadkhahi, Trabelsi, Riley, Juraska,
Mirzazadeh et al. (2025), "Distribution-Calibrated Inference Time Compute for
Thinking LLM-as-a-Judge", arXiv:2512.03019: self-consistency by majority vote
(SC, the mode of the counts :math:`\\mathbf n = (c^+, c^0, c^-)`), the rounded
median used for the n = 2 greedy-decoding and few-shot baselines (GD/FS), Soft
Self-Consistency (Soft-SC, Wang et al. 2024) and Confidence-Informed
Self-Consistency (CI-SC, Taubenfeld et al. 2025). Votes are ordinal labels in
{-1, 0, +1} (+1: first response preferred, -1: second preferred, 0: tie).

Every function is vectorised over items. The count-based functions take
per-item count arrays; the confidence-based ones take the long ``votes`` table
(``item``, ``vote``, ``confidence``) and return a Series indexed by item in
first-appearance order.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from bayesjudge.data import (
    DataValidationError,
    check_integer_values,
    check_no_missing,
    require_frame,
    validate_votes,
)
from bayesjudge.data.counts import expand_counts
from bayesjudge.data.frames import as_pandas

__all__ = [
    "ci_self_consistency",
    "majority_vote",
    "rounded_median",
    "soft_self_consistency",
]

TieBreak = Literal["tie", "random"]
SoftReduce = Literal["min", "mean", "prod"]

# Column order of every (n_items, 3) score array in this module: label = column - 1.
_LABELS = np.array([-1, 0, 1])


def majority_vote(
    n_pos: ArrayLike,
    n_tie: ArrayLike,
    n_neg: ArrayLike,
    tie_break: TieBreak = "tie",
    random_seed: int | np.random.Generator | None = None,
) -> NDArray[np.int64]:
    """Self-consistency (SC): the mode of the vote counts of each item.

    .. math:: \\hat y = \\arg\\max_{y \\in \\{-1, 0, +1\\}} c^y

    Parameters
    ----------
    n_pos, n_tie, n_neg : array_like of int, shape (n_items,)
        Vote counts :math:`c^+, c^0, c^-` per item (non-negative, at least one
        vote per item).
    tie_break : {"tie", "random"}, default "tie"
        What to return when two or three labels share the maximum count.

        - ``"tie"``: return 0. This covers (c+ = c- > c0), where 0 is the
          label minimising the expected absolute error between two equally
          supported opposite preferences, and every tie that involves 0. It is
          the conservative choice on the ordinal scale under MAE (eq. 1).
        - ``"random"``: pick uniformly among the labels sharing the maximum,
          with ``random_seed``.
    random_seed : int, Generator or None
        Seed for ``tie_break="random"``; ignored otherwise.

    Returns
    -------
    ndarray of int, shape (n_items,)
        Labels in {-1, 0, +1}.

    Examples
    --------
    >>> majority_vote([3, 2, 1], [1, 2, 1], [0, 0, 1]).tolist()
    [1, 0, 0]
    """
    counts = _stack_counts(n_pos, n_tie, n_neg)
    return _resolve_argmax(counts, counts, tie_break, random_seed)


def rounded_median(votes: ArrayLike) -> NDArray[np.int64]:
    """Median of each item's votes, rounded away from zero (GD/FS baselines).

    For n = 2 this is exactly the paper's rule for aggregating the two
    order-swapped greedy samples: equal votes keep their value,
    (0, +1) -> +1, (0, -1) -> -1 and (+1, -1) -> 0.

    For general n the rule is

    .. math:: \\hat y = \\operatorname{sign}(m)\\,\\lceil |m| \\rceil,
              \\qquad m = \\operatorname{median}(r_1, \\dots, r_n),

    where for even n the median is the mean of the two middle order
    statistics. With labels in {-1, 0, +1}, m is an integer or +-1/2; only the
    half-integers (the two middle votes are 0 and +-1) are rounded, and away
    from zero, which generalises "(0, 1) is mapped to 1". Odd n gives the plain
    median.

    Parameters
    ----------
    votes : array_like, shape (n_items, n_samples)
        One row per item, one column per sample, values in {-1, 0, +1}.

    Returns
    -------
    ndarray of int, shape (n_items,)

    Examples
    --------
    >>> rounded_median([[0, 1], [0, -1], [1, -1], [1, 1]]).tolist()
    [1, -1, 0, 1]
    """
    arr = np.asarray(votes)
    if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] == 0:
        raise DataValidationError(
            f"`votes` must be a non-empty 2-D array (n_items, n_samples); got shape "
            f"{arr.shape}. For a single item pass [[v1, v2, ...]]."
        )
    _check_labels(arr, "votes")
    median = np.median(arr, axis=1)
    return (np.sign(median) * np.ceil(np.abs(median))).astype(np.int64)


def soft_self_consistency(
    votes: pd.DataFrame,
    reduce: SoftReduce = "min",
    tie_break: TieBreak = "tie",
    random_seed: int | np.random.Generator | None = None,
) -> pd.Series:
    """Soft Self-Consistency (Soft-SC, Wang et al. 2024).

    For each item and each label y with at least one vote, the confidences
    :math:`\\{p_j : r_j = y\\}` of the votes for y are reduced to one score,

    .. math:: S(y) = \\min_j p_j, \\quad \\tfrac{1}{c^y}\\sum_j p_j
              \\quad\\text{or}\\quad \\prod_j p_j,

    and :math:`\\hat y = \\arg\\max_y S(y)`. Labels without votes are not
    candidates. As the paper describes it, the reduction is within a category
    only, so with ``"min"`` and ``"prod"`` more votes for a label can only
    lower its score.

    Ties in S (common when the judge reports confidence 1.0) are broken by
    the vote count, then by ``tie_break`` exactly as in :func:`majority_vote`.

    Parameters
    ----------
    votes : DataFrame
        Columns ``item``, ``vote`` in {-1, 0, +1}, ``confidence`` in [0, 1].
    reduce : {"min", "mean", "prod"}, default "min"
    tie_break : {"tie", "random"}, default "tie"
    random_seed : int, Generator or None
        Used only with ``tie_break="random"``.

    Returns
    -------
    Series of int named ``prediction``, indexed by ``item`` (first-appearance order).
    """
    votes = as_pandas(votes)  # polars, pyarrow, ...: pandas
    grouped = _group_votes(votes, need_confidence=True)
    n_cells = 3 * len(grouped.items)
    counts = np.bincount(grouped.flat, minlength=n_cells)
    if reduce == "mean":
        sums = np.bincount(grouped.flat, weights=grouped.confidence, minlength=n_cells)
        score = sums / np.maximum(counts, 1)
    elif reduce == "min":
        score = np.full(n_cells, np.inf)
        np.minimum.at(score, grouped.flat, grouped.confidence)
    elif reduce == "prod":
        score = np.ones(n_cells)
        np.multiply.at(score, grouped.flat, grouped.confidence)
    else:
        raise ValueError(f"`reduce` must be 'min', 'mean' or 'prod'; got {reduce!r}.")
    score = np.where(counts > 0, score, -np.inf).reshape(-1, 3)
    labels = _resolve_argmax(score, counts.reshape(-1, 3), tie_break, random_seed)
    return _as_series(labels, grouped.items)


def ci_self_consistency(
    votes: pd.DataFrame,
    temperature: float | None = None,
    tie_break: TieBreak = "tie",
    random_seed: int | np.random.Generator | None = None,
) -> pd.Series:
    """Confidence-Informed Self-Consistency (CI-SC, Taubenfeld et al. 2025).

    A confidence-weighted majority vote:

    .. math:: \\hat y = \\arg\\max_y \\sum_{j : r_j = y} w_j,
              \\qquad w_j = p_j \\ \\text{(default)} \\quad\\text{or}\\quad
              w_j = \\frac{e^{p_j / T}}{\\sum_{k} e^{p_k / T}}.

    The default uses the confidences :math:`p_j \\in [0, 1]` directly as
    weights, which is the variant the paper evaluates (length-normalised
    sequence probability). ``temperature=T`` applies Taubenfeld et al.'s
    within-item softmax normalisation; T -> infinity recovers plain majority
    vote and T -> 0 picks the single most confident vote.

    Ties in the weighted score are broken by the vote count, then by
    ``tie_break`` as in :func:`majority_vote`.

    Parameters
    ----------
    votes : DataFrame
        Columns ``item``, ``vote`` in {-1, 0, +1}, ``confidence`` in [0, 1].
    temperature : float > 0 or None, default None
    tie_break : {"tie", "random"}, default "tie"
    random_seed : int, Generator or None
        Used only with ``tie_break="random"``.

    Returns
    -------
    Series of int named ``prediction``, indexed by ``item`` (first-appearance order).
    """
    votes = as_pandas(votes)  # polars, pyarrow, ...: pandas
    grouped = _group_votes(votes, need_confidence=True)
    weights = grouped.confidence
    if temperature is not None:
        if not temperature > 0:
            raise ValueError(f"`temperature` must be > 0 or None; got {temperature!r}.")
        # The softmax denominator is shared by all labels of an item, so it cannot
        # change the argmax; shifting by the item maximum only avoids overflow.
        item_max = np.full(len(grouped.items), -np.inf)
        np.maximum.at(item_max, grouped.codes, weights)
        weights = np.exp((weights - item_max[grouped.codes]) / temperature)
    n_cells = 3 * len(grouped.items)
    score = np.bincount(grouped.flat, weights=weights, minlength=n_cells).reshape(-1, 3)
    counts = np.bincount(grouped.flat, minlength=n_cells).reshape(-1, 3)
    score = np.where(counts > 0, score, -np.inf)
    labels = _resolve_argmax(score, counts, tie_break, random_seed)
    return _as_series(labels, grouped.items)


# --------------------------------------------------------------------------- helpers


class _GroupedVotes(NamedTuple):
    """Votes mapped to integer item codes (first-appearance order) and flat cells."""

    codes: NDArray[np.intp]
    items: pd.Index
    confidence: NDArray[np.float64] | None
    # One cell per (item, label): index = 3 * code + vote + 1, so label = column - 1.
    flat: NDArray[np.intp]


def _group_votes(votes: pd.DataFrame, need_confidence: bool) -> _GroupedVotes:
    # Validation lives in bayesjudge.data (one place, one set of messages).
    required = ["item", "vote"] + (["confidence"] if need_confidence else [])
    require_frame(votes, "votes", required)
    votes = expand_counts(votes, "votes")  # a row with n = k is k votes
    check_no_missing(votes, "votes", required)
    vote = check_integer_values(votes, "votes", "vote", (-1, 0, 1))
    confidence = None
    if need_confidence:
        validate_votes(votes)  # checks confidence lies in [0, 1]
        confidence = votes["confidence"].to_numpy(dtype=float)
    # factorize keeps first-appearance order, which the output index promises.
    codes, items = pd.factorize(votes["item"], sort=False)
    flat = codes * 3 + (vote.astype(np.intp) + 1)
    return _GroupedVotes(codes, pd.Index(items, name="item"), confidence, flat)


def _check_labels(values: NDArray, name: str) -> None:
    values = np.asarray(values)
    if values.dtype.kind not in "iuf":
        raise DataValidationError(
            f"`{name}` must be numeric labels in {{-1, 0, +1}}; got dtype {values.dtype}."
        )
    bad = ~np.isin(values, _LABELS)  # NaN is not in the set, so it is caught too
    if bad.any():
        raise DataValidationError(
            f"`{name}` must contain only labels in {{-1, 0, +1}}; found "
            f"{np.unique(values[bad])[:5].tolist()}. Map preferences to +1 (first), "
            "-1 (second), 0 (tie)."
        )


def _stack_counts(n_pos: ArrayLike, n_tie: ArrayLike, n_neg: ArrayLike) -> NDArray[np.int64]:
    arrays = [np.asarray(a) for a in (n_neg, n_tie, n_pos)]
    shapes = {a.shape for a in arrays}
    if len(shapes) != 1 or arrays[0].ndim != 1:
        raise DataValidationError(
            f"`n_pos`, `n_tie`, `n_neg` must be 1-D arrays of one shape; got shapes "
            f"{[a.shape for a in (arrays[2], arrays[1], arrays[0])]}."
        )
    counts = np.stack(arrays, axis=1)
    if counts.dtype.kind not in "iuf":
        raise DataValidationError(f"vote counts must be integers; got dtype {counts.dtype}.")
    if counts.dtype.kind == "f" and not np.all(np.isfinite(counts) & (counts == np.round(counts))):
        raise DataValidationError("vote counts must be whole numbers (no NaN or fractions).")
    counts = counts.astype(np.int64)
    if (counts < 0).any():
        raise DataValidationError("vote counts must be non-negative.")
    empty = counts.sum(axis=1) == 0
    if empty.any():
        raise DataValidationError(
            f"{int(empty.sum())} item(s) have no votes (positions "
            f"{np.flatnonzero(empty)[:5].tolist()}); drop them before aggregating."
        )
    return counts


def _resolve_argmax(
    score: NDArray,
    counts: NDArray,
    tie_break: TieBreak,
    random_seed: int | np.random.Generator | None,
) -> NDArray[np.int64]:
    """Row-wise argmax of ``score`` (columns -1, 0, +1) with explicit tie rules.

    Ties in ``score`` are first narrowed to the labels with the most votes, then
    resolved by ``tie_break``.
    """
    if tie_break not in ("tie", "random"):
        raise ValueError(f"`tie_break` must be 'tie' or 'random'; got {tie_break!r}.")
    best = score.max(axis=1, keepdims=True)
    # Exact float ties (e.g. all confidences 1.0) must count as ties; a tiny
    # relative tolerance absorbs summation-order rounding.
    top = np.isclose(score, best, rtol=1e-12, atol=0.0) | (score == best)
    top_counts = np.where(top, counts, -1)
    top &= top_counts == top_counts.max(axis=1, keepdims=True)
    n_top = top.sum(axis=1)
    if tie_break == "tie":
        column = np.where(n_top == 1, top.argmax(axis=1), 1)
    else:
        rng = np.random.default_rng(random_seed)
        column = np.where(top, rng.random(top.shape), -1.0).argmax(axis=1)
    return _LABELS[column].astype(np.int64)


def _as_series(labels: NDArray[np.int64], items: pd.Index) -> pd.Series:
    return pd.Series(labels, index=items, name="prediction")
