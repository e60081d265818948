"""Parser, argument checks and ``main`` of the ``bayesjudge`` command.

Every argument and output path is checked before any file is read or model fitted;
user errors print one line ``error: ...`` on stderr and exit with status 2, library
warnings print one line ``warning: ...`` with advice the command line can act on.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import math
import os
import re
import sys
import traceback
import warnings
from pathlib import Path

from bayesjudge.cli.calibrate_options import add_calibrate_parsers
from bayesjudge.cli.files import (
    FILES_HELP,
    UsageError,
    check_output_dir,
    check_output_file,
    one_line,
    read_table,
    write_csv,
)
from bayesjudge.cli.messages import WarningPrinter, advice, cli_words
from bayesjudge.cli.rank import add_rank_parser
from bayesjudge.cli.report import EPILOG_REPORT, run_report
from bayesjudge.constants import CI_PROB, __version__
from bayesjudge.data.messages import DataValidationError
from bayesjudge.engine.messages import (
    FitError,
    progress_log,
)
from bayesjudge.engine.nuts_settings import (
    MAX_CHAINS,
    MIN_CHAINS,
    MIN_DRAWS,
    MIN_TUNE,
    available_cores,
    check_cores,
    check_nuts_settings,
)

PCT = f"{100 * CI_PROB:g}%"

EPILOG_AGGREGATE = """\
file formats
  VOTES.csv   one row per sampled vote:  item,vote        (vote in -1, 0, +1;
              +1 = first response better, -1 = second better, 0 = tie; a
              confidence column is checked, in [0, 1], and not used: the
              aggregator counts the votes)
              or one row per item:       item,n_pos,n_tie,n_neg   (not both forms)
  LABELS.csv  gold labels for a small calibration subset: item,label (-1, 0, +1),
              with every label value present at least once

output
  DECISIONS.csv  one row per item of VOTES.csv, in input order, ids as written:
                 p_neg, p_tie, p_pos (eq. 4), risk_* (expected MAE, eq. 5),
                 decision (eq. 6) of Dadkhahi et al. (2025), arXiv:2512.03019;
                 with --method nuts also %(pct)s credible intervals p_*_lower/upper.

%(files)s
example
  bayesjudge aggregate votes.csv --calibration labels.csv --out decisions.csv
""" % {"pct": PCT, "files": FILES_HELP}


MIN_SPLITS = 2  # the demo reports the spread over splits: one split has none


class _ArgumentError(UsageError):
    """argparse's own complaint (unknown option, invalid int, missing argument)."""


class _Parser(argparse.ArgumentParser):
    """argparse, but errors raise (so ``main`` prints them as one line)."""

    def error(self, message: str):
        raise _ArgumentError(f"{self.prog}: {message} (see '{self.prog} --help')")


def _check_positive(value: float, flag: str, example: str) -> None:
    if not (math.isfinite(value) and value > 0):
        raise UsageError(f"{flag} must be a positive number, got {value:g}. Fix: e.g. "
                         f"{flag} {example}.")


def _check_level(level: float) -> None:
    if not (math.isfinite(level) and 0.5 < level < 1):
        hint = (f" (a proportion: --level {level / 100:g} for a {level:g}% interval)"
                if 50 < level < 100 else "")
        raise UsageError(f"--level must lie strictly between 0.5 and 1, got {level:g}{hint}. "
                         f"Fix: e.g. --level {CI_PROB}.")


def _check_seed(seed: int) -> None:
    if not 0 <= seed < 2**32:
        raise UsageError(f"--seed must lie in [0, 2**32), got {seed}. Fix: e.g. --seed 0.")


def _check_nuts(draws: int, tune: int, chains: int) -> None:
    try:
        check_nuts_settings(draws, tune, chains)
    except ValueError as exc:  # "draws=0 ..." -> "--draws 0 ..."
        raise UsageError(re.sub(r"\b(draws|tune|chains)=", r"--\1 ", str(exc))) from None


def _check_aggregate(args: argparse.Namespace) -> None:
    _check_positive(args.alpha, "--alpha", "1")
    _check_positive(args.kappa, "--kappa", "1")
    _check_nuts(args.draws, args.tune, args.chains)
    _check_seed(args.seed)
    check_output_file(args.out, "--out", (args.votes, args.calibration))


def _check_report(args: argparse.Namespace) -> None:
    _check_level(args.level)
    _check_nuts(args.draws, args.tune, args.chains)
    _check_seed(args.seed)
    if args.out is not None:
        check_output_file(args.out, "--out", (args.judgments, args.calibration))


def _check_demo(args: argparse.Namespace) -> None:
    if args.splits < MIN_SPLITS:
        raise UsageError(f"--splits must be at least {MIN_SPLITS} (the demo reports the spread "
                         f"over splits), got {args.splits}. Fix: e.g. --splits 100.")
    from bayesjudge.demo import DEMO_CHAINS, DEMO_FILES

    _check_nuts(args.draws, args.tune, DEMO_CHAINS)
    check_output_dir(args.out_dir, "--out-dir", DEMO_FILES)


def _cmd_aggregate(args: argparse.Namespace) -> int:
    from bayesjudge import DavidsonAggregator  # PyMC: only once the arguments are checked
    from bayesjudge.data.lookalikes import warn_near_matches

    votes = read_table(args.votes, "votes")
    labels = read_table(args.calibration, "calibration")
    if "item" in votes.columns and "item" in labels.columns:  # (else validation says so)
        warn_near_matches(votes["item"], "votes.item", labels["item"], "calibration.item")
    model = DavidsonAggregator(tie=args.tie, alpha=args.alpha, kappa=args.kappa,
                               random_seed=args.seed)
    model.fit(votes, labels, method=args.method, draws=args.draws, tune=args.tune,
              chains=args.chains, cores=args.cores, progressbar=sys.stderr.isatty())
    decisions = model.predict(votes)
    write_csv(decisions, args.out)
    summary = model.summarize()
    print(f"calibrated on {len(labels)} labelled items ({args.method}, tie={args.tie}):")
    print(summary.to_string(float_format=lambda v: f"{v:.3f}"))
    counts = decisions["decision"].value_counts().reindex([1, 0, -1], fill_value=0)
    print(f"decisions for {len(decisions)} items: +1: {counts[1]}, 0: {counts[0]}, "
          f"-1: {counts[-1]}")
    print(f"wrote {args.out}")
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from bayesjudge.demo import run_demo  # loads the data sets and experiments: only here

    print(run_demo(out_dir=Path(args.out_dir), n_splits=args.splits, draws=args.draws,
                   tune=args.tune, cores=args.cores))
    return 0


def _add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                        help="show Python tracebacks on errors")


def _cores(text: str) -> int:
    """``--cores``: a positive integer (:func:`bayesjudge.engine.samplers.check_cores`)."""
    try:
        return check_cores(int(text))
    except ValueError:
        n = available_cores()
        raise argparse.ArgumentTypeError(
            f"--cores must be a positive integer (at most {MAX_CHAINS}), got {text!r}. Fix: "
            f"e.g. --cores {min(4, n)}, or leave it out (one core per chain, up to this "
            f"machine's {n} CPUs).") from None


def _add_nuts_options(parser: argparse.ArgumentParser, when: str = "nuts") -> None:
    parser.add_argument("--draws", type=int, default=1000,
                        help=f"NUTS draws per chain, >= {MIN_DRAWS} ({when}; default 1000)")
    parser.add_argument("--tune", type=int, default=1000,
                        help=f"NUTS tuning steps per chain, >= {MIN_TUNE} ({when}; default 1000)")
    parser.add_argument("--chains", type=int, default=4,
                        help=f"NUTS chains, >= {MIN_CHAINS} ({when}; default 4)")
    parser.add_argument("--cores", type=_cores, default=None,
                        help=f"chains sampled in parallel ({when}; default one per chain, up "
                        f"to the {available_cores()} CPUs; more CPUs than the machine has "
                        f"only share them)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")


def build_parser() -> argparse.ArgumentParser:
    """The ``bayesjudge`` argument parser."""
    parser = _Parser(
        prog="bayesjudge",
        description="Bayesian models for LLM-as-a-judge evaluation (PyMC + ArviZ).",
    )
    parser.add_argument("--version", action="version", version=f"bayesjudge {__version__}")
    parser.add_argument("--debug", action="store_true", default=False,
                        help="show Python tracebacks on errors")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    agg = sub.add_parser(
        "aggregate",
        help="calibrate the Davidson vote aggregator and decide every item",
        description="Aggregate n sampled judge votes per item with the calibrated "
        "Bradley-Terry-Davidson model (ties allowed) and the MAE Bayes action "
        "(Dadkhahi et al. 2025, arXiv:2512.03019).",
        epilog=EPILOG_AGGREGATE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    agg.add_argument("votes", metavar="VOTES.csv", help="votes per item (see formats below)")
    agg.add_argument("--calibration", required=True, metavar="LABELS.csv",
                     help="gold labels of a calibration subset (item,label)")
    agg.add_argument("--method", choices=["map", "nuts"], default="map",
                     help="MAP (fast, default) or NUTS (full posterior, credible intervals)")
    agg.add_argument("--tie", choices=["global", "local"], default="global",
                     help="global tie logit eta0 (default) or local tie term gamma * t")
    agg.add_argument("--alpha", type=float, default=1.0,
                     help="margin smoothing (eq. 2), > 0, default 1")
    agg.add_argument("--kappa", type=float, default=1.0,
                     help="tie smoothing (eq. 3), > 0, default 1")
    _add_nuts_options(agg)
    agg.add_argument("--out", required=True, metavar="DECISIONS.csv",
                     help="output CSV (its folder must exist)")
    _add_common(agg)
    agg.set_defaults(func=_cmd_aggregate, check=_check_aggregate)

    rep = sub.add_parser(
        "report",
        help="bias-adjusted accuracy of an LLM judge's verdicts, with intervals",
        description="Correct the judge's accuracy (or win rate) for its misclassification "
        "errors, estimated on a human-labelled calibration set, and report it with a "
        "confidence or credible interval (Lee, Zeng, Jeong, Sohn & Lee 2025, How to "
        "Correctly Report LLM-as-a-Judge Evaluations, arXiv:2511.21140, Sec. 4).",
        epilog=EPILOG_REPORT,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    rep.add_argument("judgments", metavar="JUDGMENTS.csv", help="judge verdicts on the test items")
    rep.add_argument("--calibration", required=True, metavar="CALIBRATION.csv",
                     help="human-labelled calibration items (item,judge_label,human_label)")
    rep.add_argument("--method", choices=["closed-form", "bayes"], default="closed-form",
                     help="closed-form Lang-Reiczigel (default) or Bayesian posterior (NUTS)")
    rep.add_argument("--by", choices=["system"], default=None,
                     help="one row per value of the system column (default: one overall row)")
    rep.add_argument("--level", type=float, default=CI_PROB,
                     help=f"interval level in (0.5, 1), default {CI_PROB}")
    _add_nuts_options(rep, "bayes")
    rep.add_argument("--out", default=None, metavar="TABLE.csv",
                     help="also write the table as CSV (its folder must exist)")
    _add_common(rep)
    rep.set_defaults(func=run_report, check=_check_report)

    add_rank_parser(sub, _add_nuts_options, _add_common, _check_level, _check_nuts, _check_seed)
    add_calibrate_parsers(sub, _add_nuts_options, _add_common, _check_level, _check_nuts,
                          _check_seed)

    demo = sub.add_parser(
        "demo",
        help="run the calibrated aggregator on the shipped PandaLM data",
        description="Calibrate the Davidson aggregator on 5% of the PandaLM items "
        "(GPT-3.5 and PandaLM-7B verdicts as votes, human majority as gold), compare "
        "with majority vote over calibration splits, and write the results.",
    )
    demo.add_argument("--out-dir", default="demo-output",
                      help="folder for CSVs and figures (created if missing)")
    demo.add_argument("--splits", type=int, default=100,
                      help=f"calibration splits, >= {MIN_SPLITS} (default 100)")
    demo.add_argument("--draws", type=int, default=1000,
                      help=f"NUTS draws per chain, >= {MIN_DRAWS} (default 1000)")
    demo.add_argument("--tune", type=int, default=1000,
                      help=f"NUTS tuning steps per chain, >= {MIN_TUNE} (default 1000)")
    demo.add_argument("--cores", type=_cores, default=None,
                      help="chains sampled in parallel (default one per chain)")
    _add_common(demo)
    demo.set_defaults(func=_cmd_demo, check=_check_demo)
    return parser


def run() -> None:
    """The ``bayesjudge`` command: :func:`main` on ``sys.argv``, exiting with its status.

    After Ctrl-C (status 130) the process ends by ``os._exit(130)``: when the
    KeyboardInterrupt was raised inside Python code that a sampler runs through the C API
    (nutpie's PyO3 bindings), CPython remembers it as unhandled even though :func:`main`
    caught it, and at exit kills the process by SIGINT (status -2, seen under heavy load)
    instead of exiting 130.
    """
    status = main()
    if status == 130:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):  # a closed pipe: nothing left to say
                stream.flush()
        os._exit(130)
    sys.exit(status)


def main(argv: list[str] | None = None) -> int:
    """Run ``bayesjudge`` with ``argv`` (default ``sys.argv[1:]``); returns the exit status.

    0 success, 2 user error (bad argument, output path or input file, invalid
    table), 1 a failed fit or an internal error, 130 interrupted. Errors print one
    line on stderr; ``--debug`` re-raises them with their traceback. The command itself
    runs :func:`run`.
    """
    try:
        args = build_parser().parse_args(argv)
    except _ArgumentError as exc:
        print(f"error: {one_line(exc)}", file=sys.stderr)
        return 2
    except SystemExit as exc:  # --help, --version
        return exc.code if isinstance(exc.code, int) else 0
    with warnings.catch_warnings():
        if not sys.warnoptions:  # respect -W / PYTHONWARNINGS
            warnings.simplefilter("default")
            warnings.simplefilter("ignore", DeprecationWarning)
            warnings.simplefilter("ignore", PendingDeprecationWarning)
        warnings.showwarning = WarningPrinter(args)
        # the sampler's stages ("sampling 4 chains ...", "sampled in 3.2 s") on stderr
        progress = logging.StreamHandler(sys.stderr)
        progress.setFormatter(logging.Formatter("progress: %(message)s"))
        level, propagate = progress_log.level, progress_log.propagate
        progress_log.addHandler(progress)
        progress_log.setLevel(logging.INFO)
        progress_log.propagate = False
        try:
            args.check(args)  # every argument and output path, before any work
            status = args.func(args)
            sys.stdout.flush()  # a closed pipe (| head) raises here, not at exit
            return status
        except (UsageError, DataValidationError) as exc:
            if args.debug:
                raise
            print(f"error: {cli_words(one_line(exc), args.command)}", file=sys.stderr)
            return 2
        except FitError as exc:
            if args.debug:
                raise
            print(f"error: the fit failed: {cli_words(one_line(exc), args.command)}",
                  file=sys.stderr)
            return 1
        except Warning as exc:  # turned into an error by -W error / PYTHONWARNINGS
            if args.debug:
                raise
            text = one_line(exc)
            print(f"error: {text}{advice(type(exc), text, args)}", file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            print("error: interrupted", file=sys.stderr)
            return 130
        except BrokenPipeError:  # the reader (e.g. `| head`) stopped reading: not an error
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 141  # 128 + SIGPIPE, what a shell reports for a killed writer
        except OSError as exc:  # a full disk, a vanished folder: the system's, not a bug
            if args.debug:
                raise
            name = f" {exc.filename}" if exc.filename else ""
            print(f"error: could not read or write{name}: {exc.strerror or one_line(exc)}",
                  file=sys.stderr)
            return 1
        except Exception as exc:  # a bug: say so, in one line unless --debug
            if args.debug:
                raise
            where = traceback.extract_tb(exc.__traceback__)[-1]
            print(f"error: internal error {type(exc).__name__}: {one_line(exc)} (at "
                  f"{Path(where.filename).name}:{where.lineno}); rerun with --debug for the "
                  f"traceback and please report it.", file=sys.stderr)
            return 1
        finally:
            progress_log.removeHandler(progress)
            progress_log.setLevel(level)
            progress_log.propagate = propagate
