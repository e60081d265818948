"""``bayesjudge calibrate``: recalibrate a probabilistic judge post hoc, scored before and after.

Implements the post-hoc calibration baselines of Z. Li, X. Li, C. Huang et al.
(2025), "Judging with Confidence: Calibrating Autoraters to Preference
Distributions", arXiv:2510.00263 (Sections 4 and 5.1) on CSV files: Bayesian
temperature scaling fitted on the human annotations (calibration to the
preference distribution, Section 2.1), contextual calibration (Zhao et al. 2021)
and batch calibration (Zhou et al. 2024), one judge at a time, with the paper's
metric table (appendix C.1, Section 5.2) before and after. The command's options,
checks and help are in :mod:`~bayesjudge.cli.calibrate_options`; this module runs it.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from bayesjudge.cli.files import UsageError, read_table, write_csv
from bayesjudge.cli.scoring import (
    coverage_notes,
    format_table,
    judge_names,
    judge_rows,
    labelled_rows,
    output_table,
    read_labels,
    read_predictions,
    who,
)
from bayesjudge.data import DataValidationError, show_values
from bayesjudge.data.annotations import AnnotationCounts
from bayesjudge.data.lookalikes import warn_near_matches

if TYPE_CHECKING:
    from bayesjudge import TemperatureScaling

# ------------------------------------------------------------------------- calibrate
def _probes(args: argparse.Namespace, judges: list) -> dict:
    """Content-free probe probabilities per judge."""
    if args.probe is not None:
        return dict.fromkeys(judges, np.asarray(args.probe, float))
    probes = read_table(args.probe_file, "probes")
    if "prob" not in probes.columns:
        raise DataValidationError(f"probes file {args.probe_file!r} has no column 'prob' "
                                  f"(columns: {list(probes.columns)}).")
    if "judge" not in probes.columns or judges == [None]:
        return dict.fromkeys(judges, probes["prob"].to_numpy())
    warn_near_matches(judges, "predictions.judge", probes["judge"], "probes.judge")
    missing = [j for j in judges if j not in set(probes["judge"])]
    if missing:
        raise DataValidationError(
            f"probes file {args.probe_file!r} has no probe for judge(s) {show_values(missing)}; "
            f"add a row judge,prob for each judge of the predictions.")
    return {j: probes.loc[probes["judge"] == j, "prob"].to_numpy() for j in judges}


def _holdout(items: np.ndarray, fraction: float, seed: int) -> set:
    """A random ``fraction`` of the labelled items (by item, shared by every judge)."""
    n_out = int(round(fraction * len(items)))
    if not 0 < n_out < len(items):
        raise UsageError(f"--holdout {fraction:g} of {len(items)} labelled items leaves "
                         f"{len(items) - n_out} to fit and {n_out} to score; both need at least "
                         f"one item. Fix: change --holdout or label more items.")
    perm = np.random.default_rng(seed).permutation(len(items))
    return set(items[perm[:n_out]].tolist())


def calibrate_table(pred: pd.DataFrame, counts: AnnotationCounts, labelled: np.ndarray,
                    args: argparse.Namespace) -> tuple[pd.DataFrame, np.ndarray, list[str]]:
    r"""Calibrate every prediction row, one judge at a time (``bayesjudge calibrate``).

    With p = ``prob`` (P(B better)) of a row, each method maps
    :math:`\operatorname{logit} p' = (\operatorname{logit} p - b) / T`:

    * ``temperature`` -- T (and b with ``--bias``) of
      :class:`~bayesjudge.TemperatureScaling`, fitted on the judge's labelled
      rows (``in_fit``; all labelled rows unless ``--holdout``) by the binomial
      likelihood of k_B of k_A + k_B annotations, prob_swapped jointly;
    * ``contextual`` -- T = 1, b = logit q with q the mean content-free probe
      (Zhao et al. 2021, W = diag(p(y | N/A))^-1);
    * ``batch`` -- T = 1, b = logit of the mean of the judge's prob and
      prob_swapped over all its rows (Zhou et al. 2024).

    ``prob_swapped`` (P(A better) with A shown second) is mapped the same way: it
    is the probability of the response in the second slot, like ``prob``.

    Returns
    -------
    table : pandas.DataFrame
        One row per prediction row in input order: ``item``, ``judge`` (if
        given), ``prob``, ``prob_calibrated`` (``_lower``/``_upper`` under NUTS),
        the same for ``prob_swapped``, ``labelled`` and (temperature) ``in_fit``.
    score : ndarray of bool
        Rows the metric table is computed on (labelled; held out with --holdout).
    notes : list of str
        The fitted calibration of each judge, for printing.
    """
    # imported here, not at the top: `bayesjudge --help` and argument errors need no PyMC
    from bayesjudge import TemperatureScaling
    from bayesjudge.baselines.calibration import BatchCalibration, ContextualCalibration

    prob = pred["prob"].to_numpy(float)
    has_swap = "prob_swapped" in pred.columns
    swapped = pred["prob_swapped"].to_numpy(float) if has_swap else None
    out = pred[[c for c in ("item", "judge") if c in pred.columns]].copy()
    cols: dict[str, np.ndarray] = {}
    nuts = args.method == "temperature" and args.inference == "nuts"
    names = ["prob", "prob_swapped"] if has_swap else ["prob"]
    for name in names:
        cols[name] = pred[name].to_numpy(float)
        for suffix in ("", "_lower", "_upper") if nuts else ("",):
            cols[f"{name}_calibrated{suffix}"] = np.full(len(pred), np.nan)
    score = labelled.copy()
    in_fit = labelled.copy()
    if args.method == "temperature" and args.holdout is not None:
        held = _holdout(pd.unique(pred["item"][labelled]), args.holdout, args.seed)
        score = labelled & pred["item"].isin(held).to_numpy()
        in_fit = labelled & ~score
    judges = judge_names(pred)
    probes = _probes(args, judges) if args.method == "contextual" else {}
    notes = []
    for judge in judges:
        rows = judge_rows(pred, judge)
        try:
            if args.method == "temperature":
                if not (rows & in_fit).any():
                    raise DataValidationError("no labelled item left to fit the temperature on.")
                model = TemperatureScaling(bias=args.bias, random_seed=args.seed)
                with warnings.catch_warnings(record=True) as caught:  # say which judge
                    warnings.simplefilter("always")
                    model.fit(output_table(pred, rows & in_fit), counts, method=args.inference,
                              draws=args.draws, tune=args.tune, chains=args.chains,
                              cores=args.cores, progressbar=sys.stderr.isatty())
                    got = model.predict(output_table(pred, rows), ci_prob=args.level)
                for w in caught:
                    warnings.warn(who(judge) + str(w.message), w.category, stacklevel=2)
                for col in cols:
                    if col.endswith(("_calibrated", "_lower", "_upper")):
                        cols[col][rows] = got[col].to_numpy()
                notes.append(who(judge) + _fitted(model, args.level) +
                             f" (fitted on {int((rows & in_fit).sum())} labelled items)")
                continue
            if args.method == "contextual":
                corrector = ContextualCalibration().fit(probes[judge])
                what = f"content-free q = {corrector.prior_:.3f}"
            else:
                batch = prob[rows] if swapped is None else np.concatenate(
                    [prob[rows], swapped[rows][~np.isnan(swapped[rows])]])
                corrector = BatchCalibration().fit(batch)
                what = f"batch mean P(second response better) = {corrector.bias_:.3f}"
            for name in names:
                values = cols[name]
                has = rows & ~np.isnan(values)
                cols[f"{name}_calibrated"][has] = corrector.transform(values[has])
            notes.append(who(judge) + what)
        except DataValidationError as exc:
            if judge is None:
                raise
            raise DataValidationError(who(judge) + str(exc)) from None
    for col, values in cols.items():
        out[col] = values
    out["labelled"] = labelled
    if args.method == "temperature":
        out["in_fit"] = in_fit
    return out, score, notes


def _fitted(model: TemperatureScaling, level: float) -> str:
    table = model.summarize(ci_prob=level)
    lo = next(c for c in table.columns if c.endswith("_lb"))
    hi = next(c for c in table.columns if c.endswith("_ub"))
    point = "map" if "map" in table.columns else "mean"
    names = {"temperature": "T", "bias": "b"}  # exact 0/1 outputs: calibrated_one / _zero
    return ", ".join(f"{names.get(v, v)} = {table.loc[v, point]:.3f} [{table.loc[v, lo]:.3f}, "
                     f"{table.loc[v, hi]:.3f}]" for v in table.index)


def run_calibrate(args: argparse.Namespace) -> int:
    """``bayesjudge calibrate`` once its arguments are checked."""
    # imported here, not at the top: `bayesjudge --help` and argument errors need no PyMC
    from bayesjudge.metrics.table import metric_table

    pred = read_predictions(args.predictions)
    counts, _ = read_labels(args.labels)
    labelled = labelled_rows(pred, counts, args.labels)
    out, score, notes = calibrate_table(pred, counts, labelled, args)
    has_swap = "prob_swapped" in pred.columns
    kw = {"n_boot": args.boot, "ci_prob": args.level, "random_seed": args.seed}
    before = metric_table(output_table(pred, score), counts, **kw)
    after = metric_table(output_table(pred, score, out["prob_calibrated"].to_numpy(),
                                  out["prob_swapped_calibrated"].to_numpy() if has_swap
                                  else None), counts, **kw)
    write_csv(out, args.out)  # before printing: `| head` may close stdout
    how = f"{args.method} calibration" + (f" ({args.inference})" if args.method ==
                                         "temperature" else "")
    print(f"{how} of {len(pred)} prediction rows:")
    print("\n".join(f"  {note}" for note in notes))
    for note in coverage_notes(pred, counts, labelled, "are calibrated but not scored"):
        print(note)
    n_items = pd.unique(pred["item"][score]).size
    if args.method != "temperature":
        where = f"the {n_items} labelled items (the labels were not used to calibrate)"
    elif args.holdout is not None:
        where = f"the {n_items} held-out labelled items (left out of the fit)"
    else:
        where = (f"the {n_items} labelled items, the same the temperature was fitted on: "
                 f"'after' is optimistic; --holdout 0.3 scores items left out of the fit")
    print(f"metric table on {where}; {100 * args.level:g}% bootstrap intervals "
          f"({args.boot} resamples):")
    print(format_table({"before": before, "after": after}))
    print(f"wrote {args.out}")
    return 0


