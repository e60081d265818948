"""The options, checks and help of ``bayesjudge calibrate`` and ``bayesjudge metrics``.

Registered on the parser by :mod:`~bayesjudge.cli.app`; plain Python, so ``--help`` and
the argument checks import neither numpy nor pandas. The commands themselves run
:func:`bayesjudge.cli.calibrate.run_calibrate` and :func:`bayesjudge.cli.scoring.run_metrics`
(Z. Li, X. Li, C. Huang et al. (2025), "Judging with Confidence: Calibrating Autoraters to
Preference Distributions", arXiv:2510.00263).
"""

from __future__ import annotations

import argparse

from bayesjudge.cli.files import FILES_HELP, UsageError, check_output_file
from bayesjudge.constants import CI_PROB

MIN_BOOT = 100  # fewer resamples cannot place the tails of a 95% interval
# past this the resampling error of a 95% limit is far below the data's own sampling error
# (and a typo such as --boot 1000000000 would run for hours holding gigabytes of scores)
MAX_BOOT = 100_000

INPUTS_HELP = """\
file formats
  PREDICTIONS.csv  the judge's outputs, one row per item (per judge and item):
                   item,prob  with prob = P(B better) in [0, 1]; optional columns
                   prob_swapped (P(A better) from the prompt with A and B swapped;
                   empty where an item was judged in one order only) and judge
                   (several judges: each is calibrated and scored on its own)
  ANNOTATIONS.csv  human labels, one row per annotator and item:
                   item,annotator,label  (label A, B or tie; or 1 = B better,
                   0 = A better), or one label per item: item,label
"""
TABLE_HELP = """\
  metric table (Li et al. 2025, appendix C.1 and Section 5.2), per judge, on the
  PREDICTIONS rows whose item has labels: mse (to p-hat, the annotators' share
  of B with a tie as half), agreement and macro precision / recall / f1 of the
  verdict (B if prob > 0.5, A if < 0.5, tie at 0.5) with the majority label over
  A / tie / B, ece (10 bins)
  and brier against the majority label (items with a tied majority left out),
  and with prob_swapped consistency and abs_symmetry_deviation E|prob +
  prob_swapped - 1|; each with a percentile-bootstrap interval over items.
"""

EPILOG_METRICS = INPUTS_HELP + """
output (printed, and written to --out as CSV: judge,metric,estimate,lower,upper,n_items)
""" + TABLE_HELP + """\
  With several annotators per item, also alignment_error: the noise-corrected
  E[(prob - p*)^2] against the preference distribution p* (a hierarchical
  Beta-binomial fitted to the annotations, MAP), with its interval, and
  noise_floor, the part of mse that no judge can remove (Lemma 2).

%(files)s
example
  bayesjudge metrics predictions.csv --labels annotations.csv --out table.csv
""" % {"files": FILES_HELP}


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
        if boot > MAX_BOOT:
            raise UsageError(f"--boot must be at most {MAX_BOOT:,} (more resamples change the "
                             f"interval by less than its own sampling error), got {boot:,}. "
                             f"Fix: e.g. --boot 1000.")

    def check_calibrate(args: argparse.Namespace) -> None:
        check_level(args.level)
        check_boot(args.boot)
        check_seed(args.seed)
        temperature = args.method == "temperature"
        check_nuts(args.draws, args.tune, args.chains)  # a wrong value, whatever the method
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
        if args.probe and not 0 < sum(args.probe) / len(args.probe) < 1:
            raise UsageError(f"--probe gives a mean content-free P(B better) of "
                             f"{sum(args.probe) / len(args.probe):g}; contextual calibration "
                             f"divides by q and 1 - q, so it needs 0 < q < 1. Fix: the judge's "
                             f"soft probability on the probe (token probabilities), e.g. "
                             f"--probe 0.62, not a hard verdict.")
        check_output_file(args.out, "--out", (args.predictions, args.labels,
                                              args.probe_file or args.predictions))

    def check_metrics(args: argparse.Namespace) -> None:
        check_level(args.level)
        check_boot(args.boot)
        check_seed(args.seed)
        if args.out is not None:
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
                            help=f"bootstrap resamples of the metric table, {MIN_BOOT} to "
                            f"{MAX_BOOT:,} (default 1000)")

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
    cal.set_defaults(func=_run_calibrate, check=check_calibrate)

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
    met.set_defaults(func=_run_metrics, check=check_metrics)


def _run_calibrate(args: argparse.Namespace) -> int:
    from bayesjudge.cli.calibrate import run_calibrate  # numpy, pandas: after the checks

    return run_calibrate(args)


def _run_metrics(args: argparse.Namespace) -> int:
    from bayesjudge.cli.scoring import run_metrics  # numpy, pandas: after the checks

    return run_metrics(args)
