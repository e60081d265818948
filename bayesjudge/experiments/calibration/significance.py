"""Paired permutation test and the top-cluster ranking of aggregation methods.

Implements the significance protocol of Section 5 ("Results") of Dadkhahi,
Trabelsi, Riley, Juraska, Mirzazadeh et al. (2025), "Distribution-Calibrated
Inference Time Compute for Thinking LLM-as-a-Judge", arXiv:2512.03019: methods
are scored on the evaluation sets of many random calibration/evaluation splits,
sorted by average score, and the methods tied for rank 1 (the "top cluster",
bolded in Tables 3-4) are found with the greedy procedure of Freitag et al.
(2023), using a paired permutation test on per-item outcomes with 100 resamples
per split and tau = 0.05.

Everything is vectorised over resamples and splits; only the handful of method
pairs is looped over.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from bayesjudge.data import DataValidationError
from bayesjudge.data.frames import as_pandas

__all__ = [
    "PermutationTestResult",
    "TopClusterResult",
    "paired_permutation_test",
    "top_cluster",
]

Combine = Literal["pooled", "median"]

# Bound on the float work array of one resampling chunk (elements); ~16 MB.
_CHUNK_ELEMENTS = 2**21


class PermutationTestResult(NamedTuple):
    """Result of :func:`paired_permutation_test`.

    Attributes
    ----------
    statistic : float or ndarray
        Mean paired difference :math:`\\bar d = \\frac1n\\sum_i (a_i - b_i)`
        (one value per evaluation set for 2-D input).
    pvalue : float or ndarray
        Two-sided Monte Carlo p-value, in [1/(R+1), 1].
    """

    statistic: float | NDArray[np.float64]
    pvalue: float | NDArray[np.float64]


class TopClusterResult(NamedTuple):
    """Result of :func:`top_cluster`; every table is ordered best method first.

    Attributes
    ----------
    members : Series of bool
        True for the methods in the top cluster (rank 1), indexed by method.
    pvalues : DataFrame
        Combined two-sided p-value of every pair of methods (NaN diagonal).
    mean_score : Series
        Average over splits of each split's mean outcome, the sorting key.
    """

    members: pd.Series
    pvalues: pd.DataFrame
    mean_score: pd.Series


def paired_permutation_test(
    loss_a: ArrayLike,
    loss_b: ArrayLike,
    n_resamples: int = 100,
    random_seed: int | np.random.Generator | None = None,
) -> PermutationTestResult:
    """Two-sided paired permutation (sign-flip) test of equal mean outcome.

    Under the null hypothesis the two methods are exchangeable on every item,
    so each paired difference :math:`d_i = a_i - b_i` is equally likely to have
    either sign. With :math:`T = \\sum_i d_i` and R random swap patterns
    :math:`\\sigma^{(r)} \\in \\{-1, +1\\}^n`,

    .. math:: p = \\frac{1 + \\#\\{r : |\\sum_i \\sigma^{(r)}_i d_i| \\ge |T|\\}}{1 + R}.

    The +1 counts the observed assignment among the resamples, which keeps the
    Monte Carlo p-value valid (never 0).

    Parameters
    ----------
    loss_a, loss_b : array_like, shape (n_items,) or (n_sets, n_items)
        Per-item outcomes (e.g. absolute errors or 0/1 correctness) of two
        methods on the same items in the same order. A 2-D input runs one
        independent test per row (e.g. per evaluation split) in one pass.
    n_resamples : int, default 100
        Number R of random sign-flip patterns (per row). The paper uses 100.
    random_seed : int, Generator or None

    Returns
    -------
    PermutationTestResult
        ``statistic`` (mean of a - b) and ``pvalue``; floats for 1-D input,
        arrays of shape (n_sets,) for 2-D input.

    Examples
    --------
    >>> res = paired_permutation_test([1, 1, 1, 1, 1, 1, 1], [0] * 7, 999, random_seed=0)
    >>> res.statistic, res.pvalue < 0.05  # exact two-sided p = 2 / 2**7
    (1.0, True)
    """
    a = _as_outcomes(loss_a, "loss_a")
    b = _as_outcomes(loss_b, "loss_b")
    if a.shape != b.shape:
        raise DataValidationError(
            f"`loss_a` and `loss_b` must have one shape (paired items); got {a.shape} and "
            f"{b.shape}."
        )
    squeeze = a.ndim == 1
    diff = np.atleast_2d(a - b)
    if diff.shape[1] == 0:
        raise DataValidationError("the outcome arrays are empty; pass at least one item.")
    rng = np.random.default_rng(random_seed)
    exceed = _exceedance_counts(diff, _check_resamples(n_resamples), rng)
    pvalue = (1.0 + exceed) / (1.0 + n_resamples)
    statistic = diff.mean(axis=1)
    if squeeze:
        return PermutationTestResult(float(statistic[0]), float(pvalue[0]))
    return PermutationTestResult(statistic, pvalue)


def top_cluster(
    outcomes: Mapping[str, ArrayLike] | pd.DataFrame,
    lower_is_better: bool = True,
    tau: float = 0.05,
    n_resamples: int = 100,
    combine: Combine = "pooled",
    random_seed: int | np.random.Generator | None = None,
) -> TopClusterResult:
    """Methods tied for rank 1 (Freitag et al. 2023, as used in Section 5).

    Procedure, as the paper states it: sort the methods by average score;
    the best one has rank 1; walk down the sorted list and give rank 1 to each
    next method until the first one that is significantly different
    (combined p < tau) from *any* method already in the cluster; stop there.
    Later methods are not considered, even if they are not significantly
    different from the cluster.

    Significance, per pair of methods: on each split s, a paired sign-flip
    permutation test (:func:`paired_permutation_test`) on the per-item outcomes
    of that split's evaluation set, with R = ``n_resamples`` resamples per
    split. The paper does not say how the split-level results are combined
    into "a p-value"; the default ``combine="pooled"`` pools the resamples of
    all S splits into one Monte Carlo p-value,

    .. math:: p = \\frac{1 + \\sum_{s=1}^{S} \\#\\{r : |T^{(r)}_s| \\ge |T_s|\\}}{1 + S R},

    the literal reading of "a p-value using random resampling (100 resamples
    per split)"; it is close to the mean of the per-split p-values.
    ``combine="median"`` instead uses the median of the per-split p-values
    :math:`(1 + \\#_s)/(1 + R)`, i.e. "significant on most splits".

    Not offered, on purpose: one statistic summed over all splits with
    independent sign flips per split, and Fisher's combination. Random
    evaluation sets share most of their items, so both treat the splits as
    independent evidence and would overstate significance roughly S-fold.

    Parameters
    ----------
    outcomes : mapping of str to array_like, or DataFrame
        Per-item outcomes per method (absolute error for MAE, 0/1 correctness
        for pairwise accuracy). Either a mapping ``method -> array`` of shape
        (n_items,) for one evaluation set or (n_splits, n_items) with row s the
        evaluation items of split s in the same order for every method
        (pad ragged splits with NaN, at the same positions for every method);
        or a DataFrame with one column per method and one row per evaluated
        item, whose index may have a level named ``split``.
    lower_is_better : bool, default True
        True for losses such as MAE, False for accuracies.
    tau : float, default 0.05
        Significance threshold.
    n_resamples : int, default 100
        Resamples per split (the paper uses 100).
    combine : {"pooled", "median"}, default "pooled"
        How split-level permutation results become one p-value (see above).
    random_seed : int, Generator or None
        Seed of the resampling; results are reproducible for a given seed and
        method order.

    Returns
    -------
    TopClusterResult
        ``members`` (bool per method), ``pvalues`` (pairwise table) and
        ``mean_score``, all ordered best method first. Methods with equal
        average score keep their input order.
    """
    outcomes = as_pandas(outcomes)  # polars, pyarrow, ...: pandas
    names, values = _outcome_cube(outcomes)
    if not 0 < tau < 1:
        raise ValueError(f"`tau` must lie in (0, 1); got {tau!r}.")
    if combine not in ("pooled", "median"):
        raise ValueError(f"`combine` must be 'pooled' or 'median'; got {combine!r}.")
    n_resamples = _check_resamples(n_resamples)

    mean_score = np.nanmean(values, axis=2).mean(axis=1)
    key = mean_score if lower_is_better else -mean_score
    order = np.argsort(key, kind="stable")  # stable: equal scores keep input order
    rng = np.random.default_rng(random_seed)
    pvalues = _pairwise_pvalues(values[order], n_resamples, combine, rng)

    in_cluster = np.zeros(len(order), dtype=bool)
    in_cluster[0] = True
    for j in range(1, len(order)):
        if (pvalues[j, :j][in_cluster[:j]] < tau).any():
            break
        in_cluster[j] = True

    sorted_names = pd.Index([names[i] for i in order], name="method")
    return TopClusterResult(
        members=pd.Series(in_cluster, index=sorted_names, name="top_cluster"),
        pvalues=pd.DataFrame(pvalues, index=sorted_names, columns=sorted_names),
        mean_score=pd.Series(mean_score[order], index=sorted_names, name="mean_score"),
    )


# --------------------------------------------------------------------------- helpers


def _exceedance_counts(
    diff: NDArray[np.float64], n_resamples: int, rng: np.random.Generator
) -> NDArray[np.int64]:
    """Per row of ``diff`` (n_sets, n_items): #resamples with |T*| >= |T|.

    Zero entries contribute nothing to any sum, so zero padding is how ragged
    evaluation sets are handled.
    """
    n_sets, n_items = diff.shape
    observed = diff.sum(axis=1)
    total = observed[:, None]
    # Ties in |T| are common with integer losses; sums in another order can
    # differ by rounding, so compare with a tolerance relative to sum |d|.
    threshold = np.abs(observed)[:, None] - 1e-10 * np.abs(diff).sum(axis=1)[:, None]
    chunk = max(1, _CHUNK_ELEMENTS // max(1, n_sets * n_items))
    counts = np.zeros(n_sets, dtype=np.int64)
    for start in range(0, n_resamples, chunk):
        size = min(chunk, n_resamples - start)
        flip = rng.random((n_sets, size, n_items)) < 0.5
        # Flipping a subset F changes T into T - 2 * sum_{i in F} d_i.
        flipped = np.matmul(flip.astype(np.float64), diff[:, :, None])[:, :, 0]
        counts += (np.abs(total - 2.0 * flipped) >= threshold).sum(axis=1)
    return counts


def _pairwise_pvalues(
    values: NDArray[np.float64], n_resamples: int, combine: Combine, rng: np.random.Generator
) -> NDArray[np.float64]:
    """Symmetric (n_methods, n_methods) table of combined p-values."""
    n_methods, n_splits, _ = values.shape
    table = np.full((n_methods, n_methods), np.nan)
    for i in range(n_methods):
        for j in range(i + 1, n_methods):
            diff = np.nan_to_num(values[i] - values[j], nan=0.0)
            exceed = _exceedance_counts(diff, n_resamples, rng)
            if combine == "pooled":
                p = (1.0 + exceed.sum()) / (1.0 + n_splits * n_resamples)
            else:
                p = float(np.median((1.0 + exceed) / (1.0 + n_resamples)))
            table[i, j] = table[j, i] = p
    return table


def _outcome_cube(
    outcomes: Mapping[str, ArrayLike] | pd.DataFrame,
) -> tuple[list[str], NDArray[np.float64]]:
    """(method names, array (n_methods, n_splits, n_items) NaN-padded)."""
    if isinstance(outcomes, pd.DataFrame):
        outcomes = _frame_to_mapping(outcomes)
    if not isinstance(outcomes, Mapping) or len(outcomes) == 0:
        raise DataValidationError(
            "`outcomes` must be a non-empty mapping method -> per-item outcomes, or a DataFrame "
            "with one column per method."
        )
    names = list(outcomes)
    arrays = [np.atleast_2d(np.asarray(outcomes[m], dtype=np.float64)) for m in names]
    shapes = {a.shape for a in arrays}
    if len(shapes) != 1 or arrays[0].ndim != 2 or arrays[0].size == 0:
        raise DataValidationError(
            "every method needs outcomes of one non-empty shape (n_items,) or (n_splits, n_items); "
            f"got { {m: a.shape for m, a in zip(names, arrays)} }."
        )
    cube = np.stack(arrays)
    missing = np.isnan(cube)
    if (missing != missing[0]).any():
        raise DataValidationError(
            "outcomes are not paired: NaN (padding) must sit at the same positions for every "
            "method. Score all methods on the same evaluation items of each split."
        )
    n_scored = (~missing[0]).sum(axis=1)
    if (n_scored == 0).any():
        raise DataValidationError("a split has no scored items; drop it or fill it.")
    if n_scored.max() < 2:
        raise DataValidationError(
            "top_cluster needs per-item outcomes; got one value per split. Pass e.g. "
            "absolute errors |y_pred - y_true| of every evaluation item, not split-level scores."
        )
    return names, cube


def _frame_to_mapping(frame: pd.DataFrame) -> dict[str, NDArray[np.float64]]:
    """Reshape a (split, item)-rows x method-columns frame to padded 2-D arrays."""
    if "split" not in (frame.index.names or []):
        return {str(m): frame[m].to_numpy(dtype=np.float64) for m in frame.columns}
    split = frame.index.get_level_values("split")
    codes, splits = pd.factorize(split, sort=False)
    position = pd.Series(codes).groupby(codes).cumcount().to_numpy()
    out = {}
    for m in frame.columns:
        grid = np.full((len(splits), position.max() + 1), np.nan)
        grid[codes, position] = frame[m].to_numpy(dtype=np.float64)
        out[str(m)] = grid
    return out


def _as_outcomes(values: ArrayLike, name: str) -> NDArray[np.float64]:
    arr = np.asarray(values)
    if arr.dtype.kind not in "iufb" or arr.ndim not in (1, 2):
        raise DataValidationError(
            f"`{name}` must be a numeric 1-D or 2-D array of per-item outcomes; got dtype "
            f"{arr.dtype} and shape {arr.shape}."
        )
    arr = arr.astype(np.float64)
    if np.isnan(arr).any():
        raise DataValidationError(f"`{name}` contains NaN; score every item or drop the pair.")
    return arr


def _check_resamples(n_resamples: int) -> int:
    if isinstance(n_resamples, bool) or int(n_resamples) != n_resamples or n_resamples < 1:
        raise ValueError(f"`n_resamples` must be a positive integer; got {n_resamples!r}.")
    return int(n_resamples)
