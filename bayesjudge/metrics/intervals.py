"""Bootstrap intervals on any metric, and paired comparisons of two judges.

Beyond Z. Li, X. Li, C. Huang et al. (2025), "Judging with Confidence: Calibrating
Autoraters to Preference Distributions", arXiv:2510.00263, which reports point
estimates only: items are resampled with replacement (the nonparametric percentile
bootstrap, Efron 1979), and two judges scored on the same items are compared on the
*same* resamples, so the interval of their difference accounts for the items they
share. The metrics of :mod:`bayesjudge.metrics` are batch-aware, so all resamples
are scored in a few vectorised calls (chunks of at most ~2 million values).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from bayesjudge.constants import CI_PROB
from bayesjudge.data import DataValidationError, check_ci_prob
from bayesjudge.data.messages import PACKAGE_DIR
from bayesjudge.estimators import Interval

__all__ = ["Difference", "bootstrap_interval", "compare_judges"]

_CHUNK_VALUES = 2_000_000


class Difference(NamedTuple):
    """metric(judge a) - metric(judge b) with its paired-bootstrap interval.

    ``share_positive`` is the share of resamples where the difference is > 0.
    """

    estimate: float
    lower: float
    upper: float
    share_positive: float


def _as_item_arrays(arrays: tuple) -> list[np.ndarray]:
    if not arrays:
        raise DataValidationError("pass at least one per-item array to resample.")
    out = [np.asarray(a) for a in arrays]
    sizes = {a.shape[0] if a.ndim else -1 for a in out}
    if len(sizes) != 1 or -1 in sizes or any(a.ndim != 1 for a in out):
        raise DataValidationError(
            f"the arrays to resample must be 1-D and of one length (one entry per item); got "
            f"shapes {[a.shape for a in out]}."
        )
    if out[0].shape[0] == 0:
        raise DataValidationError("the arrays to resample are empty; pass at least one item.")
    return out


def _check_n_boot(n_boot: int) -> None:
    if isinstance(n_boot, bool) or not isinstance(n_boot, (int, np.integer)) or n_boot < 1:
        raise DataValidationError(f"n_boot must be a positive integer, got {n_boot!r}.")


def _index_chunks(n: int, n_boot: int, random_seed) -> Iterator[NDArray[np.int64]]:
    rng = np.random.default_rng(random_seed)
    step = max(1, min(n_boot, _CHUNK_VALUES // n))
    for start in range(0, n_boot, step):
        yield rng.integers(0, n, size=(min(step, n_boot - start), n))


def _scores(fn: Callable, arrays: list[np.ndarray], idx: np.ndarray, batched: bool) -> np.ndarray:
    if batched:
        values = np.asarray(fn(*(a[idx] for a in arrays)), dtype=float)
        if values.shape != (idx.shape[0],):
            raise DataValidationError(
                f"metric_fn returned shape {values.shape} on a batch of {idx.shape[0]} "
                "resamples (rows); it must reduce over the last axis and return one value per "
                "row. Pass batched=False for a function that takes 1-D arrays only."
            )
    else:
        values = np.array([float(fn(*(a[row] for a in arrays))) for row in idx])
    if not np.isfinite(values).all():
        raise DataValidationError(
            "metric_fn returned a non-finite value on a bootstrap resample; make it finite on "
            "any subset of the items (e.g. handle empty classes) before bootstrapping."
        )
    return values


def _limits(draws: np.ndarray, ci_prob: float) -> tuple[float, float]:
    lo, hi = np.quantile(draws, [(1 - ci_prob) / 2, (1 + ci_prob) / 2])
    return float(lo), float(hi)


def warn_zero_width(which: Sequence[str]) -> None:
    """Warn naming the bootstrap intervals of zero width (``which``: e.g. ``mse (1 item)``):
    every resample gave one value, so they measure no uncertainty."""
    if len(which):
        warnings.warn(
            f"{len(which)} bootstrap interval(s) have zero width ({', '.join(which[:8])}"
            f"{', ...' if len(which) > 8 else ''}): every resample gave the same value (one "
            f"item, or a metric constant on every item, e.g. agreement 1 everywhere), so they "
            f"measure no uncertainty. Read them as the estimate on n_items items, or score "
            f"more items.", UserWarning, skip_file_prefixes=(PACKAGE_DIR,))


def _items(n: int) -> str:
    return f"{n} item{'s' if n != 1 else ''}"


def percentile_interval(metric_fn: Callable, arrays: tuple, n_boot: int, ci_prob: float,
                        random_seed: int | None, batched: bool = True) -> Interval:
    """:func:`bootstrap_interval` without its zero-width warning (a table of intervals warns
    once for all of them, :func:`warn_zero_width`)."""
    ci_prob = check_ci_prob(ci_prob)
    _check_n_boot(n_boot)
    data = _as_item_arrays(arrays)
    estimate = float(metric_fn(*data))
    draws = np.concatenate([_scores(metric_fn, data, idx, batched)
                            for idx in _index_chunks(data[0].shape[0], n_boot, random_seed)])
    return Interval(estimate, *_limits(draws, ci_prob))


def paired_difference(metric_fn: Callable, arrays: tuple, n_boot: int, ci_prob: float,
                      random_seed: int | None, batched: bool = True) -> Difference:
    """:func:`compare_judges` (``arrays``: a, b, *shared) without its zero-width warning."""
    ci_prob = check_ci_prob(ci_prob)
    _check_n_boot(n_boot)
    data = _as_item_arrays(arrays)
    a, b, rest = data[0], data[1], data[2:]
    estimate = float(metric_fn(a, *rest)) - float(metric_fn(b, *rest))
    diffs = []
    for idx in _index_chunks(a.shape[0], n_boot, random_seed):
        diffs.append(_scores(metric_fn, [a, *rest], idx, batched)
                     - _scores(metric_fn, [b, *rest], idx, batched))
    draws = np.concatenate(diffs)
    return Difference(estimate, *_limits(draws, ci_prob), float(np.mean(draws > 0)))


def bootstrap_interval(
    metric_fn: Callable[..., float | np.ndarray],
    *arrays: ArrayLike,
    n_boot: int = 1000,
    ci_prob: float = CI_PROB,
    random_seed: int | None = 0,
    batched: bool = True,
) -> Interval:
    """Percentile-bootstrap interval of ``metric_fn(*arrays)`` over items.

    Each resample draws n item positions with replacement and applies them to
    every array alike (the arrays are aligned per item), then scores it; the
    interval holds the central ``ci_prob`` mass of the ``n_boot`` scores.

    Parameters
    ----------
    metric_fn : callable
        ``metric_fn(*arrays) -> float``. With ``batched=True`` (every metric of
        :mod:`bayesjudge.metrics`) it also takes ``(n_resamples, n_items)`` arrays
        and returns one value per row, so resamples are scored in chunks.
    *arrays : array_like, shape (n_items,)
        Per-item inputs (predictions, labels, ...).
    n_boot : int, default 1000
    ci_prob : float, default CI_PROB
        Mass of the equal-tailed interval.
    random_seed : int or None, default 0
        The only source of randomness: a seed gives the same resamples for any
        metric and judge on the same number of items (what makes comparisons paired).
    batched : bool, default True
        False calls ``metric_fn`` once per resample on 1-D arrays.

    Returns
    -------
    Interval
        ``estimate`` (the metric on all items), ``lower``, ``upper``.

    Examples
    --------
    >>> from bayesjudge.metrics import brier_score
    >>> ci = bootstrap_interval(brier_score, [0.9, 0.2, 0.6, 0.4], [1, 0, 1, 1], n_boot=200)
    >>> ci.lower <= ci.estimate <= ci.upper
    True
    """
    ci = percentile_interval(metric_fn, arrays, n_boot, ci_prob, random_seed, batched)
    warn_zero_width([f"the metric on {_items(len(arrays[0]))}"] if ci.upper <= ci.lower
                    else [])
    return ci


def compare_judges(
    metric_fn: Callable[..., float | np.ndarray],
    prob_a: ArrayLike,
    prob_b: ArrayLike,
    *shared: ArrayLike,
    n_boot: int = 1000,
    ci_prob: float = CI_PROB,
    random_seed: int | None = 0,
    batched: bool = True,
) -> Difference:
    """Paired bootstrap of ``metric_fn(prob_a, *shared) - metric_fn(prob_b, *shared)``.

    Both judges are scored on the same resampled items (the difference's interval
    would be too wide if each judge were resampled separately, since item
    difficulty is shared).

    Parameters
    ----------
    metric_fn : callable
        ``metric_fn(prob, *shared) -> float``, e.g. :func:`~bayesjudge.metrics.brier_score`.
    prob_a, prob_b : array_like, shape (n_items,)
        The two judges' outputs on the same items, in the same order.
    *shared : array_like, shape (n_items,)
        The reference both are scored against (labels, p-hat, ...).
    n_boot, ci_prob, random_seed, batched
        As :func:`bootstrap_interval`.

    Returns
    -------
    Difference
        ``estimate``, ``lower``, ``upper`` of the difference a - b and the share of
        resamples where it is positive.

    Examples
    --------
    >>> from bayesjudge.metrics import brier_score
    >>> d = compare_judges(brier_score, [0.9, 0.2, 0.6, 0.4], [1.0, 0.0, 1.0, 0.0],
    ...                    [1, 0, 1, 1], n_boot=200)
    >>> round(d.estimate, 4)
    -0.1075
    """
    diff = paired_difference(metric_fn, (prob_a, prob_b, *shared), n_boot, ci_prob,
                             random_seed, batched)
    warn_zero_width([f"the difference on {_items(len(prob_a))}"] if diff.upper <= diff.lower
                    else [])
    return diff
