"""Random calibration / evaluation splits of labelled items.

The experimental protocol of Dadkhahi, Trabelsi, Riley, Juraska, Mirzazadeh et
al. (2025), "Distribution-Calibrated Inference Time Compute for Thinking
LLM-as-a-Judge", arXiv:2512.03019, Section 5, calibrates on a random 5% of the
labelled items and evaluates on the rest, over 100 random splits. This module
draws those splits; :mod:`bayesjudge.experiments.calibration.fits` fits and scores
them.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from bayesjudge.experiments.runner import Seed, check_positive_int

__all__ = ["Split", "calibration_size", "calibration_splits", "draw_split"]


class Split(NamedTuple):
    """One calibration / evaluation split, as sorted integer positions of the items."""

    calibration: NDArray[np.intp]
    evaluation: NDArray[np.intp]


def calibration_splits(
    n_items: int,
    calibration_fraction: float = 0.05,
    n_splits: int = 100,
    random_seed: Seed = 0,
) -> list[Split]:
    """Random calibration / evaluation splits of ``n_items`` items (Section 5).

    Each split draws ``round(calibration_fraction * n_items)`` calibration items
    uniformly without replacement (no stratification, as in the paper); the
    remaining items are the evaluation set. Splits are independent draws of
    one numpy Generator, so a seed fixes all of them; no global RNG is used.

    Parameters
    ----------
    n_items : int
        Number of labelled items.
    calibration_fraction : float, default 0.05
        Share of the items used for calibration, in (0, 1).
    n_splits : int, default 100
    random_seed : int, Generator or None

    Returns
    -------
    list of Split
        ``Split(calibration, evaluation)``: disjoint sorted position arrays
        whose union is ``range(n_items)``.

    Examples
    --------
    >>> splits = calibration_splits(1000, 0.05, n_splits=3, random_seed=1)
    >>> [len(s.calibration) for s in splits], len(splits[0].evaluation)
    ([50, 50, 50], 950)
    """
    n_items = check_positive_int(n_items, "n_items")
    n_splits = check_positive_int(n_splits, "n_splits")
    n_cal = calibration_size(n_items, calibration_fraction)
    rng = np.random.default_rng(random_seed)
    return [draw_split(rng, n_items, n_cal) for _ in range(n_splits)]


def draw_split(rng: np.random.Generator, n_items: int, n_cal: int) -> Split:
    """One split: ``n_cal`` calibration positions drawn without replacement, the rest evaluate.

    Parameters
    ----------
    rng : numpy.random.Generator
        The only source of randomness.
    n_items, n_cal : int
        Number of items and of calibration items (see :func:`calibration_size`).

    Returns
    -------
    Split
    """
    perm = rng.permutation(n_items)
    return Split(np.sort(perm[:n_cal]), np.sort(perm[n_cal:]))


def calibration_size(n_items: int, fraction: float) -> int:
    """Number of calibration items, ``round(fraction * n_items)`` (halves rounded up).

    Parameters
    ----------
    n_items : int
        Number of labelled items.
    fraction : float
        Share of the items used for calibration, in (0, 1).

    Returns
    -------
    int
        Between 1 and ``n_items - 1``.

    Raises
    ------
    ValueError
        When ``fraction`` is outside (0, 1) or leaves either set empty.

    Examples
    --------
    >>> calibration_size(1000, 0.05)
    50
    """
    if not (isinstance(fraction, (int, float, np.floating)) and 0 < fraction < 1):
        raise ValueError(
            f"calibration_fraction must lie in (0, 1); got {fraction!r}. Fix: e.g. 0.05."
        )
    n_cal = int(np.floor(fraction * n_items + 0.5))
    if n_cal < 1 or n_cal >= n_items:
        raise ValueError(
            f"calibration_fraction={fraction} of {n_items} items gives {n_cal} calibration "
            f"and {n_items - n_cal} evaluation items; both need at least one. Change the "
            "fraction or use more items."
        )
    return n_cal
