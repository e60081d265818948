"""The ``bayesjudge`` command: the models on CSV files, and a demo on shipped data.

Subcommands
-----------
aggregate  Calibrate the Davidson aggregator on labelled items and decide every item.
demo       Run the calibrated aggregator on the shipped PandaLM judgments.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

EPILOG_AGGREGATE = """\
file formats
  VOTES.csv   one row per sampled vote:  item,vote        (vote in -1, 0, +1;
              +1 = first response better, -1 = second better, 0 = tie;
              optional column confidence in [0, 1])
              or one row per item:       item,n_pos,n_tie,n_neg
  LABELS.csv  gold labels for a small calibration subset: item,label (-1, 0, +1),
              with every label value present at least once

output
  DECISIONS.csv  one row per item of VOTES.csv, in input order: p_neg, p_tie,
                 p_pos (eq. 4), risk_* (expected MAE, eq. 5), decision (eq. 6);
                 with --method nuts also 95%% credible intervals p_*_lower/upper.

example
  bayesjudge aggregate votes.csv --calibration labels.csv --out decisions.csv
"""


def _read_csv(path: str, what: str) -> pd.DataFrame:
    try:
        return pd.read_csv(path)
    except FileNotFoundError:
        raise SystemExit(f"error: {what} file {path!r} does not exist.") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise SystemExit(f"error: could not read {what} file {path!r} as CSV: {exc}") from None


def _cmd_aggregate(args: argparse.Namespace) -> int:
    from bayesjudge import DavidsonAggregator

    votes = _read_csv(args.votes, "votes")
    labels = _read_csv(args.calibration, "calibration")
    model = DavidsonAggregator(tie=args.tie, alpha=args.alpha, kappa=args.kappa,
                               random_seed=args.seed)
    model.fit(votes, labels, method=args.method, draws=args.draws, tune=args.draws,
              chains=args.chains)
    decisions = model.predict(votes)
    decisions.to_csv(args.out, index=False)
    summary = model.summarize()
    print(f"calibrated on {len(labels)} labelled items ({args.method}, tie={args.tie}):")
    print(summary.to_string(float_format=lambda v: f"{v:.3f}"))
    counts = decisions["decision"].value_counts().reindex([1, 0, -1], fill_value=0)
    print(f"decisions for {len(decisions)} items: +1: {counts[1]}, 0: {counts[0]}, -1: {counts[-1]}")
    print(f"wrote {args.out}")
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from bayesjudge.demo import run_demo

    print(run_demo(out_dir=Path(args.out_dir), n_splits=args.splits, draws=args.draws))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bayesjudge",
        description="Bayesian models for LLM-as-a-judge evaluation (PyMC + ArviZ).",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    agg = sub.add_parser(
        "aggregate",
        help="calibrate the Davidson vote aggregator and decide every item",
        description="Aggregate n sampled judge votes per item with the calibrated "
        "Bradley-Terry-Davidson model (ties allowed) and the MAE Bayes action.",
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
    agg.add_argument("--alpha", type=float, default=1.0, help="margin smoothing (eq. 2), default 1")
    agg.add_argument("--kappa", type=float, default=1.0, help="tie smoothing (eq. 3), default 1")
    agg.add_argument("--draws", type=int, default=1000, help="NUTS draws and tuning steps per chain")
    agg.add_argument("--chains", type=int, default=4, help="NUTS chains")
    agg.add_argument("--seed", type=int, default=0, help="random seed")
    agg.add_argument("--out", required=True, metavar="DECISIONS.csv", help="output CSV")
    agg.set_defaults(func=_cmd_aggregate)

    demo = sub.add_parser(
        "demo",
        help="run the calibrated aggregator on the shipped PandaLM data",
        description="Calibrate the Davidson aggregator on 5%% of the PandaLM items "
        "(GPT-3.5 and PandaLM-7B verdicts as votes, human majority as gold), compare "
        "with majority vote over calibration splits, and write the results.",
    )
    demo.add_argument("--out-dir", default="demo-output", help="folder for CSVs and figures")
    demo.add_argument("--splits", type=int, default=100, help="calibration splits (default 100)")
    demo.add_argument("--draws", type=int, default=1000, help="NUTS draws per chain")
    demo.set_defaults(func=_cmd_demo)
    return parser


def main(argv: list[str] | None = None) -> int:
    from bayesjudge.data import DataValidationError

    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except DataValidationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
