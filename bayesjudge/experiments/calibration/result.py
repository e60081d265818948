"""Result of the calibration-split protocol: scores, loss cubes, summary, top clusters."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from bayesjudge.experiments.calibration.significance import TopClusterResult

__all__ = ["SplitProtocolResult"]


@dataclass
class SplitProtocolResult:
    """Scores of every method on the evaluation items of every calibration split.

    Attributes
    ----------
    methods : list of str
        Method names, in the order they were requested.
    items : pandas.Index
        The labelled items of the protocol; positions below index into it.
    calibration, evaluation : ndarray of int, shape (n_splits, n_cal) / (n_splits, n_eval)
        Item positions of each scored split (after any resampling of failed fits).
    mae, pairwise_accuracy : DataFrame
        One row per scored split (index ``split``), one column per method.
    abs_error, correct : dict of str to ndarray, shape (n_splits, n_eval)
        Per-item loss cubes: ``|y_hat - y*|`` and ``y_hat == y*`` of each method on
        ``evaluation[s]``, ready for :func:`~bayesjudge.experiments.top_cluster` and
        :func:`~bayesjudge.experiments.paired_permutation_test`.
    summary : DataFrame
        One row per method, best MAE first. For ``mae`` and ``pa`` (pairwise
        accuracy): ``_mean`` over splits, ``_sd`` (split-to-split standard
        deviation), ``_percentile_lower`` / ``_percentile_upper`` (2.5th and 97.5th
        percentiles of the split scores: where one split's score falls) and
        ``_se_lower`` / ``_se_upper`` (mean -/+ 1.96 SE, SE = sd / sqrt(n_splits):
        the 95% interval of the *mean*, the error bars of the paper's Figure 2);
        ``top_cluster_mae`` / ``top_cluster_pa`` mark rank-1 methods.
    top_cluster_mae, top_cluster_pa : TopClusterResult
        Top clusters (Freitag et al. 2023) by per-item absolute error and by
        per-item correctness.
    parameters : DataFrame
        MAP parameters of the Davidson fit of each scored split (empty without
        ``davidson``).
    failures : DataFrame
        One row per failed Davidson fit: ``split``, ``attempt``, ``error``,
        ``message``, ``action`` (``"resampled"`` or ``"skipped"``).
    settings : dict
        Arguments of the run (fraction, sizes, seed, model arguments, ...).
    """

    methods: list[str]
    items: pd.Index
    calibration: NDArray[np.intp]
    evaluation: NDArray[np.intp]
    mae: pd.DataFrame
    pairwise_accuracy: pd.DataFrame
    abs_error: dict[str, NDArray[np.float64]]
    correct: dict[str, NDArray[np.bool_]]
    summary: pd.DataFrame
    top_cluster_mae: TopClusterResult | None
    top_cluster_pa: TopClusterResult | None
    parameters: pd.DataFrame
    failures: pd.DataFrame
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def n_splits(self) -> int:
        """Number of scored splits."""
        return len(self.mae)

    @property
    def n_failed(self) -> int:
        """Number of Davidson fits that failed (each was resampled or skipped)."""
        return len(self.failures)

    @property
    def n_skipped(self) -> int:
        """Number of splits left out of every method's scores."""
        return int((self.failures["action"] == "skipped").sum()) if len(self.failures) else 0

    def top_cluster_text(self) -> str:
        """The rank-1 methods by MAE and by pairwise accuracy, best first, as one line."""
        parts = []
        for label, tc in (("MAE", self.top_cluster_mae), ("PA", self.top_cluster_pa)):
            if tc is not None:
                parts.append(f"{label}: " + ", ".join(tc.members.index[tc.members.to_numpy()]))
        return "; ".join(parts) if parts else "(one method: no ranking)"

    def __repr__(self) -> str:
        cols = ["mae_mean", "mae_se_lower", "mae_se_upper", "pa_mean", "top_cluster_mae"]
        return (
            f"SplitProtocolResult({self.n_splits} splits x {len(self.methods)} methods, "
            f"{self.calibration.shape[1]} calibration / {self.evaluation.shape[1]} evaluation "
            f"items, {self.n_failed} failed fit(s))\n{self.summary[cols].to_string()}"
        )
