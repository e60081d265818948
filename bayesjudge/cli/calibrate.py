"""``bayesjudge calibrate``: recalibrate a probabilistic judge post hoc, scored before and after.

Implements the post-hoc calibration baselines of Z. Li, X. Li, C. Huang et al.
(2025), "Judging with Confidence: Calibrating Autoraters to Preference
Distributions", arXiv:2510.00263 (Sections 4 and 5.1) on CSV files: Bayesian
temperature scaling fitted on the human annotations (calibration to the
preference distribution, Section 2.1), contextual calibration (Zhao et al. 2021)
and batch calibration (Zhou et al. 2024), one judge at a time, with the paper's
metric table (appendix C.1, Section 5.2) before and after. Registers the
``calibrate`` and ``metrics`` subcommands (the latter in
:mod:`~bayesjudge.cli.scoring`).
"""

from __future__ import annotations

import argparse
import sys
import warnings
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from bayesjudge.cli.files import FILES_HELP, UsageError, check_output_file, read_table
from bayesjudge.cli.scoring import (
    EPILOG_METRICS,
    INPUTS_HELP,
    MIN_BOOT,
    coverage_notes,
    format_table,
    judge_names,
    judge_rows,
    labelled_rows,
    output_table,
    read_labels,
    read_predictions,
    run_metrics,
    who,
)
from bayesjudge.constants import CI_PROB
from bayesjudge.data import DataValidationError, show_values
from bayesjudge.data.annotations import AnnotationCounts
from bayesjudge.data.lookalikes import warn_near_matches

if TYPE_CHECKING:
    from bayesjudge import TemperatureScaling

METHODS = ("temperature", "contextual", "batch")

EPILOG_CALIBRATE = INPUTS_HELP + """\
  PROBES.csv       (--probe-file) the judge's P(B better) on content-free inputs
                   (e.g. "N/A" as both responses): prob[,judge]; rows averaged
                   per judge (without a judge column: for every judge)

methods (Li et al. 2025, arXiv:2510.00263, Sections 4 and 5.1)
  temperature  p' = sigmoid((logit p - b) / T): T (and b with --bias) fitted on the
               labelled items by the binomial likelihood of the B votes among the
               A and B votes (ties left out), both prompt orders jointly when
               prob_swapped is given; --inference map (default) or nuts.
  contextual   logit p' = logit p - logit q, q = the judge's P(B better) on a
               content-free probe (--probe or --probe-file; Zhao et al. 2021,
               arXiv:2102.09690). Does not use the labels.
  batch        logit p' = logit p - logit(mean p), the mean over all rows of the
               judge, prob and prob_swapped alike (both are P(second shown response
               better); Zhou et al. 2024, arXiv:2309.17249). Does not use the labels.

output
  CALIBRATED.csv  one row per row of PREDICTIONS.csv, in input order, ids as written:
                  item, judge (if given), prob, prob_calibrated (and with
                  --inference nuts prob_calibrated_lower / _upper, the %(pct)s credible
                  interval, --level), the same for prob_swapped if given, labelled (the
                  item has labels), and for temperature in_fit (row used to fit).
  printed: the fitted calibration per judge, and the metric table before and
  after calibration (see 'bayesjudge metrics --help'). With temperature the table
  is computed on the items the fit used, so 'after' is optimistic; --holdout 0.3
  fits on a random 70 percent of the labelled items and scores the other 30.

%(files)s
example
  bayesjudge calibrate predictions.csv --labels annotations.csv --out calibrated.csv
""" % {"pct": f"{100 * CI_PROB:g}%", "files": FILES_HELP}

def add_calibrate_parsers(sub, add_nuts_options, add_common, check_level, check_nuts,
                          check_seed) -> None:
    """Register ``calibrate`` and ``metrics`` on ``sub`` (helpers come from ``cli.app``)."""

    def check_boot(boot: int) -> None:
        if boot < MIN_BOOT:
            raise UsageError(f"--boot must be at least {MIN_BOOT} (fewer resamples cannot "
                             f"place the interval's tails), got {boot}. Fix: e.g. --boot 1000.")

    def check_calibrate(args: argparse.Namespace) -> None:
        check_level(args.level)
        check_boot(args.boot)
        check_seed(args.seed)
        temperature = args.method == "temperature"
        if args.inference == "nuts":
            check_nuts(args.draws, args.tune, args.chains)
        for flag, given in (("--inference nuts", args.inference == "nuts"),
                            ("--bias", args.bias), ("--holdout", args.holdout is not None)):
            if given and not temperature:
                raise UsageError(f"{flag} applies to --method temperature only ({args.method} "
                                 f"calibration fits nothing on the labels). Fix: drop {flag}.")
        if args.holdout is not None and not 0 < args.holdout < 1:
            raise UsageError(f"--holdout must lie strictly between 0 and 1 (the share of "
                             f"labelled items left out of the fit), got {args.holdout:g}. "
                             f"Fix: e.g. --holdout 0.3.")
        probe = args.probe is not None or args.probe_file is not None
        if args.method == "contextual" and not probe:
            raise UsageError("--method contextual needs the judge's P(B better) on a "
                             "content-free input. Fix: add --probe 0.62 (your judge's value) "
                             "or --probe-file PROBES.csv.")
        if probe and args.method != "contextual":
            raise UsageError("--probe and --probe-file apply to --method contextual only. "
                             "Fix: drop them or add --method contextual.")
        if args.probe is not None and args.probe_file is not None:
            raise UsageError("give --probe or --probe-file, not both.")
        for q in args.probe or ():
            if not 0 <= q <= 1:
                raise UsageError(f"--probe must be a probability in [0, 1], got {q:g}. Fix: "
                                 f"e.g. --probe 0.62.")
        check_output_file(args.out, "--out", (args.predictions, args.labels,
                                              args.probe_file or args.predictions))

    def check_metrics(args: argparse.Namespace) -> None:
        check_level(args.level)
        check_boot(args.boot)
        check_seed(args.seed)
        if args.out:
            check_output_file(args.out, "--out", (args.predictions, args.labels))

    def inputs(parser) -> None:
        parser.add_argument("predictions", metavar="PREDICTIONS.csv",
                            help="the judge's P(B better) per item (see the formats below)")
        parser.add_argument("--labels", required=True, metavar="ANNOTATIONS.csv",
                            help="human labels: item,annotator,label or item,label")

    def scoring(parser, level_what: str) -> None:
        parser.add_argument("--level", type=float, default=CI_PROB,
                            help=f"{level_what} level in (0.5, 1), default {CI_PROB}")
        parser.add_argument("--boot", type=int, default=1000,
                            help=f"bootstrap resamples of the metric table, >= {MIN_BOOT} "
                            f"(default 1000)")

    cal = sub.add_parser(
        "calibrate",
        help="recalibrate a probabilistic judge's P(B better) and score it before and after",
        description="Recalibrate a judge's probabilities post hoc (temperature scaling, "
        "contextual or batch calibration) and print the metric table before and after "
        "(Li, Li, Huang et al. 2025, Judging with Confidence: Calibrating Autoraters to "
        "Preference Distributions, arXiv:2510.00263).",
        epilog=EPILOG_CALIBRATE, formatter_class=argparse.RawDescriptionHelpFormatter)
    inputs(cal)
    cal.add_argument("--method", choices=METHODS, default="temperature",
                     help="temperature (default), contextual or batch")
    cal.add_argument("--inference", choices=["map", "nuts"], default="map",
                     help="temperature: MAP (fast, default) or NUTS (credible intervals)")
    cal.add_argument("--bias", action="store_true",
                     help="temperature: also fit a bias b toward B (or the second slot)")
    cal.add_argument("--holdout", type=float, default=None, metavar="FRACTION",
                     help="temperature: fit on a random 1 - FRACTION of the labelled items "
                     "and score the table on the rest (seeded by --seed)")
    cal.add_argument("--probe", type=float, nargs="+", default=None, metavar="P",
                     help="contextual: the judge's P(B better) on content-free input(s), "
                     "averaged, for every judge")
    cal.add_argument("--probe-file", default=None, metavar="PROBES.csv",
                     help="contextual: probe probabilities per judge (prob[,judge])")
    scoring(cal, "interval")
    add_nuts_options(cal, "--inference nuts")
    cal.add_argument("--out", required=True, metavar="CALIBRATED.csv",
                     help="output CSV (its folder must exist)")
    add_common(cal)
    cal.set_defaults(func=run_calibrate, check=check_calibrate)

    met = sub.add_parser(
        "metrics",
        help="the metric table of a probabilistic judge against human labels",
        description="Score a judge's P(B better) against human preferences: the metric "
        "table of Li, Li, Huang et al. (2025), arXiv:2510.00263, per judge with bootstrap "
        "intervals, and the noise-corrected alignment error with several annotators.",
        epilog=EPILOG_METRICS, formatter_class=argparse.RawDescriptionHelpFormatter)
    inputs(met)
    scoring(met, "interval")
    met.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    met.add_argument("--out", default=None, metavar="TABLE.csv",
                     help="also write the table as CSV (its folder must exist)")
    add_common(met)
    met.set_defaults(func=run_metrics, check=check_metrics)


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
    out.to_csv(args.out, index=False)
    print(f"wrote {args.out}")
    return 0


