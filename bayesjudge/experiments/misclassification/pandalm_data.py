"""PandaLM data for the misclassification study: binary judgments and their truth.

The data side of
:func:`~bayesjudge.experiments.misclassification.pandalm.pandalm_misclassification_study`,
which runs the Section 8.2 protocol of Lee, Zeng, Jeong, Sohn & Lee (2025), "How
to Correctly Report LLM-as-a-Judge Evaluations", arXiv:2511.21140, on the PandaLM
test set: the binarised judgments of each judge and the human-majority truth of each
system. The splits and counts are generic
(:func:`~bayesjudge.experiments.misclassification.study.calibration_masks`,
:func:`~bayesjudge.experiments.misclassification.study.split_counts`); their old
names stay importable from here.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Literal

import pandas as pd

from bayesjudge.data.frames import as_pandas
from bayesjudge.datasets import PANDALM_JUDGES, load_pandalm, pandalm_judgments
from bayesjudge.experiments.misclassification.result import (
    COUNTS,
    calibration_masks,
    split_counts,
)

__all__ = [
    "COUNTS",
    "Judge",
    "pandalm_calibration_masks",
    "pandalm_split_counts",
    "pandalm_win_rate_truth",
    "study_judgments",
]

Judge = Literal["gpt35", "pandalm7b"]


def study_judgments(judge: str, data: pd.DataFrame) -> pd.DataFrame:
    """:func:`~bayesjudge.datasets.pandalm_judgments` without its warning about skipped rows.

    The unparsable GPT-3.5 verdicts are documented in :func:`pandalm_win_rate_truth`;
    the warning ``pandalm_judgments`` raises about them would repeat on every call.
    """
    data = as_pandas(data)  # polars, pyarrow, ...: pandas
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
    data = as_pandas(data)  # polars, pyarrow, ...: pandas
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


#: Old names of the generic split functions (the study now runs on any table).
pandalm_calibration_masks = calibration_masks
pandalm_split_counts = split_counts
