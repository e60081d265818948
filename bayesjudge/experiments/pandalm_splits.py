"""PandaLM data for the misclassification study: truth, calibration splits, counts.

The data side of
:func:`~bayesjudge.experiments.pandalm_misclassification.pandalm_misclassification_study`,
which runs the Section 8.2 protocol of Lee, Zeng, Jeong, Sohn & Lee (2025), "How
to Correctly Report LLM-as-a-Judge Evaluations", arXiv:2511.21140, on the PandaLM
test set: the human-majority truth of each system, random item-level calibration
splits, and the six misclassification counts of every (split, system).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Literal

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from bayesjudge.data import DataValidationError
from bayesjudge.datasets import PANDALM_JUDGES, load_pandalm, pandalm_judgments
from bayesjudge.experiments.splits import Seed

__all__ = [
    "COUNTS",
    "Judge",
    "pandalm_calibration_masks",
    "pandalm_split_counts",
    "pandalm_win_rate_truth",
    "study_judgments",
]

Judge = Literal["gpt35", "pandalm7b"]

#: The six misclassification counts, in the order of the estimators' arguments.
COUNTS = ("judged_pos", "n", "tp", "m1", "tn", "m0")


def study_judgments(judge: str, data: pd.DataFrame) -> pd.DataFrame:
    """:func:`~bayesjudge.datasets.pandalm_judgments` without its warning about skipped rows.

    The unparsable GPT-3.5 verdicts are documented in :func:`pandalm_win_rate_truth`;
    the warning ``pandalm_judgments`` raises about them would repeat on every call.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="pandalm_judgments: skipped")
        return pandalm_judgments(judge=judge, data=data)


def pandalm_win_rate_truth(
    judges: Sequence[Judge] = PANDALM_JUDGES, data: pd.DataFrame | None = None
) -> pd.DataFrame:
    r"""Human-majority win rate of every PandaLM system, and its judges' error rates.

    Binarisation (:func:`~bayesjudge.datasets.pandalm_judgments`): for a focal system
    and an item comparing it with an opponent, a label is 1 when the focal response is
    *strictly* better, and 0 when it loses **or ties**. The truth theta of a system is
    its strict human-majority win rate over *all* its items the judge labelled -- test
    and calibration items alike, so in the study the calibration items are part of the
    truth. GPT-3.5 wrote an unparsable verdict on 25 items (50 system rows); those rows
    are dropped for that judge, so its truth differs slightly from PandaLM-7B's
    (``truth_all_items`` keeps them).

    Parameters
    ----------
    judges : sequence of {"gpt35", "pandalm7b"}
        The LLM judges.
    data : pandas.DataFrame, optional
        Output of :func:`~bayesjudge.datasets.load_pandalm`; loaded if omitted.

    Returns
    -------
    pandas.DataFrame
        One row per (``judge``, ``system``): ``n_items`` (rows the judge labelled),
        ``truth`` (human win rate on them), ``truth_all_items`` (on every item of the
        system), ``judge_rate`` (the judge's win rate on the same rows: the naive
        estimate on all items), the judge's empirical specificity ``q0`` and
        sensitivity ``q1`` on all rows, and ``expected_naive_bias`` =
        :math:`(1-q_0) - (2-q_0-q_1)\theta`, the bias of the naive estimate
        (Section 5.1), which equals ``judge_rate - truth``.
    """
    data = load_pandalm() if data is None else data
    everything = pandalm_judgments(judge="pandalm7b", data=data)  # never skips an item
    all_items = everything.groupby("system")["human_label"].mean()
    rows = []
    for judge in judges:
        table = study_judgments(judge, data)
        for system, g in table.groupby("system", sort=True):
            z, zh = g["human_label"].to_numpy(), g["judge_label"].to_numpy()
            theta = z.mean()
            q0 = ((z == 0) & (zh == 0)).sum() / (z == 0).sum()
            q1 = ((z == 1) & (zh == 1)).sum() / (z == 1).sum()
            rows.append({
                "judge": judge, "system": system, "n_items": len(g), "truth": theta,
                "truth_all_items": all_items[system], "judge_rate": zh.mean(), "q0": q0, "q1": q1,
                "expected_naive_bias": (1 - q0) - (2 - q0 - q1) * theta,
            })
    return pd.DataFrame(rows)


def pandalm_calibration_masks(
    n_items: int, n_splits: int, calibration_fraction: float = 0.1, random_seed: Seed = None
) -> NDArray[np.bool_]:
    """Random calibration sets: ``mask[r, i]`` is True when item ``i`` calibrates split ``r``.

    Every split labels exactly ``round(calibration_fraction * n_items)`` items, drawn
    without replacement, independently across splits.
    """
    if not 0 < calibration_fraction < 1:
        raise DataValidationError(
            f"calibration_fraction must lie in (0, 1), got {calibration_fraction!r}. Fix: e.g. 0.1."
        )
    if int(n_splits) != n_splits or n_splits < 1:
        raise DataValidationError(
            f"n_splits must be a positive integer, got {n_splits!r}. Fix: e.g. 100."
        )
    n_cal = int(np.floor(calibration_fraction * n_items + 0.5))
    if not 1 <= n_cal < n_items:
        raise DataValidationError(
            f"calibration_fraction={calibration_fraction} of {n_items} items leaves {n_cal} "
            f"calibration and {n_items - n_cal} test items; both need at least one."
        )
    rng = np.random.default_rng(random_seed)
    order = np.argsort(rng.random((int(n_splits), n_items)), axis=1)
    mask = np.zeros((int(n_splits), n_items), dtype=bool)
    np.put_along_axis(mask, order[:, :n_cal], True, axis=1)
    return mask


def pandalm_split_counts(
    judgments: pd.DataFrame, items: NDArray, masks: NDArray[np.bool_]
) -> tuple[list[str], dict[str, NDArray[np.int64]]]:
    """The six misclassification counts of every (split, system), shape (n_splits, n_systems).

    Parameters
    ----------
    judgments : pandas.DataFrame
        ``system``, ``item``, ``judge_label``, ``human_label`` (as from
        :func:`~bayesjudge.datasets.pandalm_judgments`).
    items : array
        Item ids indexing the columns of ``masks``.
    masks : ndarray of bool, shape (n_splits, len(items))
        Calibration membership per split (:func:`pandalm_calibration_masks`).

    Returns
    -------
    systems, counts
        Sorted system names and a dict ``judged_pos``, ``n`` (test rows), ``tp``,
        ``m1``, ``tn``, ``m0`` (calibration rows) of int64 arrays.
    """
    position = pd.Index(items)
    systems = sorted(judgments["system"].unique())
    out = {k: np.empty((masks.shape[0], len(systems)), dtype=np.int64) for k in COUNTS}
    for k, system in enumerate(systems):
        g = judgments[judgments["system"] == system]
        cols = position.get_indexer(g["item"])
        if (cols < 0).any():
            raise DataValidationError(f"judgments of {system} hold items missing from items.")
        cal = masks[:, cols].astype(np.int64)  # (splits, rows of this system)
        z, zh = g["human_label"].to_numpy(np.int64), g["judge_label"].to_numpy(np.int64)
        test = 1 - cal
        out["n"][:, k] = test.sum(axis=1)
        out["judged_pos"][:, k] = test @ zh
        out["m1"][:, k] = cal @ z
        out["m0"][:, k] = cal @ (1 - z)
        out["tp"][:, k] = cal @ (z * zh)
        out["tn"][:, k] = cal @ ((1 - z) * (1 - zh))
    return systems, out
