"""Data side and result of a misclassification study: table, truth, splits, counts, summary.

The bookkeeping half of
:func:`~bayesjudge.experiments.misclassification.study.misclassification_study`, which
runs the calibration-split protocol of Lee, Zeng, Jeong, Sohn & Lee (2025), "How to
Correctly Report LLM-as-a-Judge Evaluations", arXiv:2511.21140, Section 8.2, on any
long judgments table: validation of the table and its finite-population truth, the
random item-level calibration sets and the six misclassification counts of every
(split, system), and the result with the bias, RMSE, coverage and interval length of
every method (Figure 7, Table 2).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from bayesjudge.data import DataValidationError, check_no_missing, require_frame, show_values
from bayesjudge.data.frames import as_pandas
from bayesjudge.experiments.runner import Seed

__all__ = [
    "COUNTS",
    "DEFAULT_JUDGE",
    "METHODS",
    "MisclassificationStudy",
    "calibration_masks",
    "split_counts",
    "study_truth",
    "tidy_frame",
    "validate_study_table",
]

#: Methods of the study, in the order they are reported.
METHODS = ("naive_wald", "lang_reiczigel", "lang_reiczigel_pooled", "bayes", "hierarchical")
#: The six misclassification counts, in the order of the estimators' arguments.
COUNTS = ("judged_pos", "n", "tp", "m1", "tn", "m0")
#: Judge id of a table without a ``judge`` column.
DEFAULT_JUDGE = "judge"
_LABELS = ("judge_label", "human_label")


# --------------------------------------------------------------------------- data side


def validate_study_table(table: pd.DataFrame) -> pd.DataFrame:
    """Check a study table; return ``judge, system, item, judge_label, human_label``.

    Ids are returned exactly as given (never re-typed or sorted); labels become int64.
    Without a ``judge`` column every row gets the judge :data:`DEFAULT_JUDGE`.

    Raises
    ------
    DataValidationError
        Missing columns, missing ids, labels other than 0/1 (or booleans), duplicated
        (judge, system, item) rows, or a judge without rows for a system that another
        judge labelled; each message names the column, shows the first values and says
        the fix.
    """
    table = as_pandas(table)  # polars, pyarrow, ...: pandas
    require_frame(table, "table", ["system", "item", *_LABELS])
    ids = ["judge", "system", "item"] if "judge" in table.columns else ["system", "item"]
    check_no_missing(table, "table", ids)
    out = pd.DataFrame({
        "judge": table["judge"] if "judge" in table.columns else DEFAULT_JUDGE,
        "system": table["system"], "item": table["item"],
    }, index=table.index)
    for col in _LABELS:
        raw = table[col]
        values = pd.to_numeric(raw, errors="coerce").to_numpy(float, na_value=np.nan)
        bad = ~np.isin(values, (0.0, 1.0))
        if bad.any():
            shown = ", ".join(f"row {i!r}: {v!r}" for i, v in
                              zip(table.index[bad][:5], raw[bad].iloc[:5]))
            raise DataValidationError(
                f"table.{col} must be 0 or 1 (1 = 'correct' / a win; booleans are accepted); "
                f"{int(bad.sum())} row(s) are not: {shown}. Fix: map the labels to 0/1 and "
                f"drop the rows without a label (a missing or unparsable verdict is not a 0)."
            )
        out[col] = values.astype(np.int64)
    dup = out.duplicated(["judge", "system", "item"], keep=False).to_numpy()
    if dup.any():
        first = out[dup].iloc[0]
        key = tuple(first[["judge", "system", "item"]])
        rows = out.index[dup & (out["judge"] == key[0]).to_numpy()
                         & (out["system"] == key[1]).to_numpy()
                         & (out["item"] == key[2]).to_numpy()]
        raise DataValidationError(
            f"table has {int(dup.sum())} rows sharing their (judge, system, item), e.g. "
            f"{key!r} at rows {show_values(rows)}; columns ('judge', 'system', 'item') must "
            f"identify one judgment. Fix: keep one row per (judge, system, item) (e.g. the "
            f"majority of repeated samples), or correct the ids."
        )
    pairs = out[["judge", "system"]].drop_duplicates()
    n_systems = out["system"].nunique()
    per_judge = pairs.groupby("judge", sort=False)["system"].agg(list)
    for judge, present in per_judge.items():
        if len(present) < n_systems:
            missing = pd.unique(out["system"])
            missing = [s for s in missing if s not in set(present)]
            raise DataValidationError(
                f"table.system: judge {judge!r} has no rows for system(s) "
                f"{show_values(missing)}, which other judges labelled; the study compares "
                f"every judge on every system. Fix: drop those systems, or study each judge "
                f"on its own table (table[table['judge'] == {judge!r}])."
            )
    return out.reset_index(drop=True)


def calibration_masks(
    n_items: int, n_splits: int, calibration_fraction: float = 0.1, random_seed: Seed = None
) -> NDArray[np.bool_]:
    """Random calibration sets: ``mask[r, i]`` is True when item ``i`` calibrates split ``r``.

    Every split labels exactly ``round(calibration_fraction * n_items)`` items, drawn
    without replacement, independently across splits. The first ``r`` splits do not
    depend on ``n_splits``.
    """
    if not 0 < calibration_fraction < 1:
        raise DataValidationError(
            f"calibration_fraction must lie in (0, 1), got {calibration_fraction!r}. Fix: e.g. 0.1."
        )
    if isinstance(n_splits, bool) or int(n_splits) != n_splits or n_splits < 1:
        raise DataValidationError(
            f"n_splits must be a positive integer, got {n_splits!r}. Fix: e.g. 100."
        )
    n_cal = int(np.floor(calibration_fraction * n_items + 0.5))
    if not 1 <= n_cal < n_items:
        raise DataValidationError(
            f"calibration_fraction={calibration_fraction} of the {n_items} distinct ids of "
            f"column 'item' leaves {n_cal} calibration and {n_items - n_cal} test items; both "
            f"need at least one. Fix: a calibration_fraction between {0.5 / n_items:.3g} and "
            f"{(n_items - 0.5) / n_items:.3g} (e.g. 0.1), or a table with more items."
        )
    rng = np.random.default_rng(random_seed)
    order = np.argsort(rng.random((int(n_splits), n_items)), axis=1)
    mask = np.zeros((int(n_splits), n_items), dtype=bool)
    np.put_along_axis(mask, order[:, :n_cal], True, axis=1)
    return mask


def split_counts(
    judgments: pd.DataFrame, items, masks: NDArray[np.bool_], systems=None
) -> tuple[list, dict[str, NDArray[np.int64]]]:
    """The six misclassification counts of every (split, system), shape (n_splits, n_systems).

    Parameters
    ----------
    judgments : pandas.DataFrame
        One judge's rows: ``system``, ``item``, ``judge_label``, ``human_label`` (0/1),
        one row per (system, item).
    items : array-like
        Item ids indexing the columns of ``masks``.
    masks : ndarray of bool, shape (n_splits, len(items))
        Calibration membership per split (:func:`calibration_masks`); every row of a
        calibration item is a calibration row, whatever its system.
    systems : sequence, optional
        Systems in output order; default: as they first appear in ``judgments``.

    Returns
    -------
    systems, counts
        The systems and a dict ``judged_pos``, ``n`` (test rows), ``tp``, ``m1``, ``tn``,
        ``m0`` (calibration rows) of int64 arrays.
    """
    judgments = as_pandas(judgments)  # polars, pyarrow, ...: pandas
    position = pd.Index(items)
    systems = list(pd.unique(judgments["system"])) if systems is None else list(systems)
    cols = position.get_indexer(judgments["item"])
    rows = pd.Index(systems).get_indexer(judgments["system"])
    if (cols < 0).any() or (rows < 0).any():
        raise DataValidationError(
            "judgments hold items missing from items or systems missing from systems: "
            f"{show_values(pd.unique(judgments['item'][cols < 0]))} / "
            f"{show_values(pd.unique(judgments['system'][rows < 0]))}."
        )
    z = judgments["human_label"].to_numpy(np.float64)
    zh = judgments["judge_label"].to_numpy(np.float64)
    # Per (item, system): rows, judged positive, m1, tp, m0, tn. The calibration counts of
    # every split are then one matrix product masks @ per-item counts (exact in float64).
    per_row = np.stack([np.ones_like(z), zh, z, z * zh, 1 - z, (1 - z) * (1 - zh)], axis=1)
    k = len(systems)
    per_item = np.zeros((len(position), k, 6))
    np.add.at(per_item, (cols, rows), per_row)
    per_item = per_item.reshape(len(position), k * 6)
    cal = np.empty((masks.shape[0], k * 6))
    chunk = max(1, 2**22 // max(1, len(position)))  # ~32 MB of float mask at a time
    for s in range(0, masks.shape[0], chunk):
        cal[s:s + chunk] = masks[s:s + chunk].astype(np.float64) @ per_item
    cal = np.rint(cal).astype(np.int64).reshape(-1, k, 6)
    test = np.rint(per_item.sum(axis=0)).astype(np.int64).reshape(k, 6) - cal
    out = {"judged_pos": test[..., 1], "n": test[..., 0], "tp": cal[..., 3],
           "m1": cal[..., 2], "tn": cal[..., 5], "m0": cal[..., 4]}
    return systems, {name: np.ascontiguousarray(v) for name, v in out.items()}


def study_truth(clean: pd.DataFrame, judges: pd.Index, systems: pd.Index) -> pd.DataFrame:
    """:attr:`MisclassificationStudy.truth` of a validated table (:func:`validate_study_table`).

    ``judges`` and ``systems`` give the row order; every judge has rows for every system.
    """
    clean = as_pandas(clean)  # polars, pyarrow, ...: pandas
    n_sys = len(systems)
    key = judges.get_indexer(clean["judge"]) * n_sys + systems.get_indexer(clean["system"])
    z, zh = clean["human_label"].to_numpy(float), clean["judge_label"].to_numpy(float)
    size = len(judges) * n_sys
    n, pos, judged = (np.bincount(key, w, minlength=size) for w in (None, z, zh))
    tp = np.bincount(key, z * zh, minlength=size)
    tn = np.bincount(key, (1 - z) * (1 - zh), minlength=size)
    with np.errstate(invalid="ignore", divide="ignore"):  # a class absent: NaN rate
        theta, q0, q1 = pos / n, tn / (n - pos), tp / pos
    pair = np.arange(size)
    return pd.DataFrame({
        "judge": judges.take(pair // n_sys), "system": systems.take(pair % n_sys),
        "n_items": n.astype(np.int64), "truth": theta, "judge_rate": judged / n,
        "q0": q0, "q1": q1, "expected_naive_bias": (1 - q0) - (2 - q0 - q1) * theta,
    })


# --------------------------------------------------------------------------- result


@dataclass
class MisclassificationStudy:
    """Result of :func:`~bayesjudge.experiments.misclassification.study.misclassification_study`.

    Judge and system ids are those of the input table, unchanged (same values and
    types); rows follow the order in which judges and systems first appear there.

    Attributes
    ----------
    truth : pandas.DataFrame
        One row per (``judge``, ``system``): ``n_items`` (rows of the judge for the
        system), ``truth`` (mean ``human_label`` over them), ``judge_rate`` (mean
        ``judge_label``), the judge's empirical specificity ``q0`` and sensitivity
        ``q1`` on those rows, and ``expected_naive_bias`` =
        :math:`(1-q_0) - (2-q_0-q_1)\\theta` (Section 5.1), which equals
        ``judge_rate - truth``.
    counts : pandas.DataFrame
        One row per (``judge``, ``split``, ``system``): the six counts of that split,
        ``judged_pos`` and ``n`` (test rows), ``tp``, ``m1``, ``tn``, ``m0``
        (calibration rows).
    replications : pandas.DataFrame
        One row per (``judge``, ``split``, ``system``, ``method``): ``estimate``,
        ``lower``, ``upper`` (NaN where the method is undefined on that split, e.g.
        :math:`\\hat q_0 + \\hat q_1 \\le 1` or no test row), ``truth``.
    diagnostics : pandas.DataFrame
        One row per hierarchical fit: ``judge``, ``split``, ``seconds``, for NUTS
        ``max_rhat``, ``min_ess_bulk``, ``divergences``, then ``convergence_warning``,
        ``other_warnings`` and ``error`` (empty unless the fit failed).
    timings : dict
        Wall-clock seconds of each part.
    settings : dict
        The arguments of the run.
    items : pandas.Index
        The distinct item ids, in the order of the columns of ``masks``.
    masks : ndarray of bool, shape (n_splits, n_items)
        ``masks[r, i]`` is True when item ``i`` is in the calibration set of split ``r``.
    """

    truth: pd.DataFrame
    counts: pd.DataFrame
    replications: pd.DataFrame
    diagnostics: pd.DataFrame
    timings: dict[str, float] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    items: pd.Index = field(default_factory=lambda: pd.Index([]))
    masks: NDArray[np.bool_] = field(default_factory=lambda: np.zeros((0, 0), dtype=bool))

    def calibration_items(self, split: int) -> pd.Index:
        """Ids of the items whose human labels split ``split`` uses (every judge, every system)."""
        return self.items[self.masks[split]]

    def summary(self, common_splits: bool = False) -> pd.DataFrame:
        """Bias, RMSE, coverage and mean interval length per (judge, system, method).

        Parameters
        ----------
        common_splits : bool, default False
            Restrict every method to the splits on which *all* methods ran (the
            hierarchical model may run on fewer splits than the closed forms), so the
            numbers of different methods come from the same splits.

        Returns
        -------
        pandas.DataFrame
            ``judge``, ``system``, ``method``, ``truth``, ``mean_estimate``, ``bias``
            (mean estimate minus truth), ``rmse``, ``coverage`` (share of intervals
            containing the truth), ``mean_length``, ``n_valid`` (splits where the method
            is defined; bias, coverage and length are over these), ``n_splits``. Rows in
            the order of :attr:`truth`, methods in the order of :data:`METHODS`.
        """
        rep = self.replications
        if common_splits:
            per_method = rep.groupby(["judge", "method"], sort=False)["split"].agg(frozenset)
            keep = []
            for judge, sets in per_method.groupby(level="judge", sort=False):
                common = frozenset.intersection(*sets.to_list())
                keep.append(rep[(rep["judge"] == judge) & rep["split"].isin(common)])
            rep = pd.concat(keep, ignore_index=True)
        valid = rep[["estimate", "lower", "upper"]].notna().all(axis=1)
        covered = (rep["lower"] <= rep["truth"]) & (rep["truth"] <= rep["upper"])
        r = rep.assign(
            valid=valid,
            kept=rep["estimate"].where(valid),
            err=(rep["estimate"] - rep["truth"]).where(valid),
            covered=covered.astype(float).where(valid),
            length=(rep["upper"] - rep["lower"]).where(valid),
        )
        r["sq"] = r["err"] ** 2
        g = r.groupby(["judge", "system", "method"], sort=False)
        out = pd.DataFrame({
            "truth": g["truth"].first(),
            "mean_estimate": g["kept"].mean(),
            "bias": g["err"].mean(),
            "rmse": np.sqrt(g["sq"].mean()),
            "coverage": g["covered"].mean(),
            "mean_length": g["length"].mean(),
            "n_valid": g["valid"].sum().astype(int),
            "n_splits": g["split"].nunique(),
        }).reset_index()
        # Order by the truth table and METHODS, never by sorting ids (they may mix types).
        pairs = pd.MultiIndex.from_frame(self.truth[["judge", "system"]])
        rank = pairs.get_indexer(pd.MultiIndex.from_frame(out[["judge", "system"]]))
        method_rank = out["method"].map({m: i for i, m in enumerate(METHODS)})
        order = np.lexsort((method_rank.to_numpy(), rank))
        return out.iloc[order].reset_index(drop=True)


def tidy_frame(
    judge: Any,
    systems: pd.Index,
    splits: NDArray,
    columns: dict[str, NDArray],
    method: str | None = None,
) -> pd.DataFrame:
    """(splits x systems) arrays -> long frame with ``judge``, ``split``, ``system``[, ``method``].

    ``systems`` keeps its dtype (ids are never re-typed: ``np.asarray`` of mixed ids
    would turn them all into strings).
    """
    s, k = np.meshgrid(np.asarray(splits), np.arange(len(systems)), indexing="ij")
    frame: dict[str, Any] = {
        "judge": pd.Series([judge] * s.size),
        "split": s.ravel(),
        "system": systems.take(k.ravel()),
    }
    if method is not None:
        frame["method"] = method
    frame.update({name: np.asarray(v).reshape(s.shape).ravel() for name, v in columns.items()})
    return pd.DataFrame(frame)
