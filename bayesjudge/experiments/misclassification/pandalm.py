"""Misclassification-adjusted win rates on real data: the Section 8.2 protocol on PandaLM.

Lee, Zeng, Jeong, Sohn & Lee (2025), "How to Correctly Report LLM-as-a-Judge
Evaluations", arXiv:2511.21140, validate the bias-adjusted estimator on Chatbot
Arena (Section 8.2, Figure 7, Table 2). This module is the PandaLM loader for the
generic :func:`~bayesjudge.experiments.misclassification.study.misclassification_study`:
:func:`pandalm_misclassification_table` turns the PandaLM test set shipped with the
package into the study's long table (GPT-3.5 and PandaLM-7B as judges, the human
majority as the truth), and :func:`pandalm_misclassification_study` runs the study
on it. The truth, split and count helpers of the PandaLM-only version stay
importable from here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from bayesjudge.data import DataValidationError
from bayesjudge.data.frames import as_pandas
from bayesjudge.datasets import PANDALM_JUDGES, load_pandalm
from bayesjudge.experiments.misclassification.pandalm_data import (
    Judge,
    pandalm_calibration_masks,
    pandalm_split_counts,
    pandalm_win_rate_truth,
    study_judgments,
)
from bayesjudge.experiments.misclassification.result import METHODS, MisclassificationStudy
from bayesjudge.experiments.misclassification.study import misclassification_study

__all__ = [
    "METHODS",
    "PandaLMMisclassificationStudy",
    "pandalm_calibration_masks",
    "pandalm_misclassification_study",
    "pandalm_misclassification_table",
    "pandalm_split_counts",
    "pandalm_win_rate_truth",
]

#: The PandaLM study's result is the generic one (old name).
PandaLMMisclassificationStudy = MisclassificationStudy


def pandalm_misclassification_table(
    judges: Sequence[Judge] = PANDALM_JUDGES, data: pd.DataFrame | None = None
) -> pd.DataFrame:
    """The PandaLM test set as a study table: one row per (judge, system, item).

    For a focal system and an item comparing it with an opponent, ``judge_label`` and
    ``human_label`` are 1 when the judge / the human majority find the focal response
    *strictly* better (a tie is not a win), see
    :func:`~bayesjudge.datasets.pandalm_judgments`. An item therefore appears once per
    system it involves, and its human label calibrates both. GPT-3.5's 25 unparsable
    verdicts drop those 50 rows for that judge; the truth over the remaining rows is
    the ``truth`` of :func:`pandalm_win_rate_truth`.

    Parameters
    ----------
    judges : sequence of {"gpt35", "pandalm7b"}
        LLM judges (a single name is accepted too).
    data : pandas.DataFrame, optional
        Output of :func:`~bayesjudge.datasets.load_pandalm`; loaded if omitted.

    Returns
    -------
    pandas.DataFrame
        ``judge``, ``system``, ``item``, ``judge_label``, ``human_label`` (int 0/1),
        ordered by judge, system, item.
    """
    data = as_pandas(data)  # polars, pyarrow, ...: pandas
    judges = [judges] if isinstance(judges, str) else list(judges)
    unknown = [j for j in judges if j not in PANDALM_JUDGES]
    if unknown or not judges:
        raise DataValidationError(
            f"judges {unknown or judges} unknown; choose among {list(PANDALM_JUDGES)}."
        )
    data = load_pandalm() if data is None else data
    columns = ["system", "item", "judge_label", "human_label"]
    frames = [study_judgments(judge, data)[columns].assign(judge=judge) for judge in judges]
    return pd.concat(frames, ignore_index=True)[["judge", *columns]]


def pandalm_misclassification_study(
    *,
    judges: Sequence[Judge] = PANDALM_JUDGES,
    data: pd.DataFrame | None = None,
    **kwargs: Any,
) -> MisclassificationStudy:
    """:func:`~bayesjudge.experiments.misclassification.study.misclassification_study` on PandaLM.

    ``misclassification_study(pandalm_misclassification_table(judges, data), **kwargs)``:
    999 items, each comparing two of five 7B models, so 10% calibration is 100 items and
    ~40 calibration rows per system. All keyword arguments of ``misclassification_study``
    (``n_splits``, ``calibration_fraction``, ``alpha``, ``bayes``, ``n_draws``,
    ``priors``, ``hierarchical_splits``, ``hierarchical_method``, ``pooling``, ``draws``,
    ``tune``, ``chains``, ``sampler``, ``executor``, ``progressbar``, ``random_seed``)
    are accepted.

    Parameters
    ----------
    judges : sequence of {"gpt35", "pandalm7b"}
        LLM judges to study.
    data : pandas.DataFrame, optional
        Output of :func:`~bayesjudge.datasets.load_pandalm`; loaded if omitted.
    **kwargs
        Passed to ``misclassification_study``.

    Returns
    -------
    MisclassificationStudy
        Its ``truth`` has the generic columns (``n_items``, ``truth``, ``judge_rate``,
        ``q0``, ``q1``, ``expected_naive_bias``); ``truth_all_items`` is in
        :func:`pandalm_win_rate_truth`.
    """
    data = as_pandas(data)  # polars, pyarrow, ...: pandas
    return misclassification_study(pandalm_misclassification_table(judges, data), **kwargs)
