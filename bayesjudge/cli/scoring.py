"""The metric table of a probabilistic judge on the command line (``bayesjudge metrics``).

Reads the two tables of Z. Li, X. Li, C. Huang et al. (2025), "Judging with
Confidence: Calibrating Autoraters to Preference Distributions", arXiv:2510.00263
-- judge outputs (``item, prob`` = P(B better)) and human annotations -- and
prints their metric table per judge (appendix C.1: MSE to p-hat, agreement and
macro P/R/F1, ECE, Brier; Section 5.2: swap consistency and E|Delta_SD|) with
bootstrap intervals and, with several annotators per item, the noise-corrected
alignment error E[(p - p*)^2] against the preference distribution (Section 2.1,
Lemma 2). ``bayesjudge calibrate`` (:mod:`~bayesjudge.cli.calibrate`) uses the
same readers and table.
"""

from __future__ import annotations

import argparse
import math

import numpy as np
import pandas as pd

from bayesjudge.cli.files import read_table, write_csv
from bayesjudge.constants import CI_PROB
from bayesjudge.data import DataValidationError, show_values
from bayesjudge.data.annotations import (
    AnnotationCounts,
    validate_annotations,
    validate_judge_outputs,
)
from bayesjudge.data.lookalikes import warn_near_matches
from bayesjudge.data.vocabulary import ONE_JUDGE


def read_labels(path: str) -> tuple[AnnotationCounts, bool]:
    """Annotation counts from ``item,annotator,label`` or ``item,label``; and whether any
    item has several annotators."""
    df = read_table(path, "labels")
    missing = [c for c in ("item", "label") if c not in df.columns]
    if missing:
        raise DataValidationError(
            f"labels file {path!r} has no column(s) {missing} (columns: {list(df.columns)}); "
            f"it needs item,annotator,label or item,label.")
    counts = validate_annotations(df, name="labels")
    return counts, bool((counts.m > 1).any())


def read_predictions(path: str) -> pd.DataFrame:
    """The judge-outputs table, validated, with its id columns as written."""
    df = read_table(path, "predictions")
    validate_judge_outputs(df)
    return df


def labelled_rows(pred: pd.DataFrame, counts: AnnotationCounts, labels_path: str) -> np.ndarray:
    warn_near_matches(pred["item"], "predictions.item", counts.items, "labels.item")
    has = pred["item"].isin(counts.items).to_numpy()
    if not has.any():
        raise DataValidationError(
            f"none of the {len(pred)} prediction items has a label in {labels_path!r} "
            f"(e.g. predictions {show_values(pd.unique(pred['item']))}, labels "
            f"{show_values(counts.items)}); ids are compared exactly as written ('7' is not "
            f"'07'). Fix the ids so that they match.")
    return has


def judge_names(pred: pd.DataFrame) -> list:
    return list(pd.unique(pred["judge"])) if "judge" in pred.columns else [None]


def judge_rows(pred: pd.DataFrame, judge) -> np.ndarray:
    return (pred["judge"] == judge).to_numpy() if judge is not None else np.ones(len(pred), bool)


def output_table(pred: pd.DataFrame, rows: np.ndarray, prob=None, swapped=None) -> pd.DataFrame:
    """item, prob (, prob_swapped, judge) of ``rows``, optionally with replaced values."""
    cols = [c for c in ("item", "prob", "prob_swapped", "judge") if c in pred.columns]
    out = pred.loc[rows, cols].reset_index(drop=True)
    if prob is not None:
        out["prob"] = prob[rows]
    if swapped is not None:
        out["prob_swapped"] = swapped[rows]
    return out


def coverage_notes(pred: pd.DataFrame, counts: AnnotationCounts, labelled: np.ndarray,
                   unscored: str = "are not scored") -> list[str]:
    """``note: ...`` lines on prediction rows without labels and labels without predictions."""
    notes = []
    if not labelled.all():
        missing = pd.unique(pred["item"][~labelled])
        notes.append(f"note: {int((~labelled).sum())} of {len(pred)} prediction rows have no "
                     f"labels and {unscored} (items {show_values(missing)}).")
    unused = counts.items[~counts.items.isin(pred["item"])]
    if len(unused):
        notes.append(f"note: {len(unused)} labelled items have no prediction row and are not "
                     f"scored (items {show_values(unused)}); check that the ids match exactly.")
    return notes


def who(judge) -> str:
    """``"judge 'x': "`` to prefix a message about one judge (empty without judges)."""
    return f"judge {judge!r}: " if judge is not None else ""


def judge_metrics(pred: pd.DataFrame, counts: AnnotationCounts, multi: bool, *,
                  n_boot: int = 1000, level: float = CI_PROB, seed: int = 0) -> pd.DataFrame:
    r"""The ``metrics`` table: the paper's metrics per judge, plus the alignment error.

    The rows of :func:`~bayesjudge.metrics.metric_table` (Li et al. 2025, appendix
    C.1 and Section 5.2; percentile bootstrap over items) and, when some item has
    several annotators (``multi``), two rows from a
    :class:`~bayesjudge.PreferenceDistribution` fitted (MAP) to all the annotations:
    ``alignment_error``, the noise-corrected

    .. math:: \widehat{AE} = \frac1N\sum_i (p_i - \hat p_i)^2
              - \frac1N\sum_i E[p^*_i(1 - p^*_i)]/m_i

    with its interval (:func:`~bayesjudge.alignment_error`), and ``noise_floor``,
    the subtracted term (Lemma 2: no judge's expected MSE to p-hat goes below it).

    Parameters
    ----------
    pred : pandas.DataFrame
        Judge outputs of labelled items (``item, prob``, optional ``prob_swapped``,
        ``judge``).
    counts : AnnotationCounts
        The validated annotations.
    multi : bool
        Add the alignment rows.
    n_boot, level, seed
        Bootstrap resamples, interval level and seed (also the model's seed).

    Returns
    -------
    pandas.DataFrame
        ``judge, metric, estimate, lower, upper, n_items``, judges in
        first-appearance order.
    """
    # imported here, not at the top: `bayesjudge --help` and argument errors need no PyMC
    from bayesjudge import PreferenceDistribution, alignment_error
    from bayesjudge.metrics.table import metric_table

    table = metric_table(pred, counts, n_boot=n_boot, ci_prob=level, random_seed=seed)
    if not multi:
        return table
    model = PreferenceDistribution(random_seed=seed).fit(counts)
    extra = []
    for judge in judge_names(pred):
        rows = judge_rows(pred, judge)
        ae = alignment_error(output_table(pred, rows)[["item", "prob"]], model, ci_prob=level)
        name = ONE_JUDGE if judge is None else judge  # as metric_table names it
        extra.append((name, "alignment_error", ae["alignment_error"],
                      ae["alignment_error_lower"], ae["alignment_error_upper"], ae["n_items"]))
        extra.append((name, "noise_floor", ae["noise_floor"], np.nan, np.nan, ae["n_items"]))
    table = pd.concat([table, pd.DataFrame(extra, columns=table.columns)], ignore_index=True)
    table["n_items"] = table["n_items"].astype(int)
    order = {j: i for i, j in enumerate(pd.unique(table["judge"]))}
    key = table["judge"].map(order).to_numpy()
    return table.iloc[np.argsort(key, kind="stable")].reset_index(drop=True)


def _cell(estimate, lower, upper) -> str:
    if not math.isfinite(estimate):
        return "-"
    if not (math.isfinite(lower) and math.isfinite(upper)):
        return f"{estimate:.3f}"
    return f"{estimate:.3f} [{lower:.3f}, {upper:.3f}]"


def format_table(tables: dict[str, pd.DataFrame]) -> str:
    """Metric tables (same judges and metrics) side by side: ``estimate [lower, upper]``."""
    first = next(iter(tables.values()))
    shown = first[["judge", "metric", "n_items"]].copy()
    shown["n_items"] = shown["n_items"].astype(int)
    for name, table in tables.items():
        shown[name] = [_cell(*row) for row in
                       table[["estimate", "lower", "upper"]].itertuples(index=False)]
    if first["judge"].nunique() == 1 and first["judge"].iloc[0] == ONE_JUDGE:
        shown = shown.drop(columns="judge")
    return shown.to_string(index=False)


def run_metrics(args: argparse.Namespace) -> int:
    """``bayesjudge metrics`` once its arguments are checked."""
    pred = read_predictions(args.predictions)
    counts, multi = read_labels(args.labels)
    labelled = labelled_rows(pred, counts, args.labels)
    notes = coverage_notes(pred, counts, labelled)
    table = judge_metrics(pred.loc[labelled].reset_index(drop=True), counts, multi,
                          n_boot=args.boot, level=args.level, seed=args.seed)
    if args.out:  # before printing: `| head` may close stdout
        write_csv(table, args.out)
    for note in notes:
        print(note)
    items = pd.unique(pred["item"][labelled]).size
    print(f"metric table on {items} labelled items; {100 * args.level:g}% bootstrap intervals "
          f"({args.boot} resamples)" + ("; alignment_error: noise-corrected, interval from "
                                        "the preference model" if multi else "") + ":")
    print(format_table({"estimate": table}))
    if args.out:
        print(f"wrote {args.out}")
    return 0
