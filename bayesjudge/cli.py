"""The ``bayesjudge`` command: the models on CSV files, and a demo on shipped data.

Subcommands
-----------
aggregate  Calibrate the Davidson aggregator on labelled items and decide every item.
report     Bias-adjusted accuracy (win rate) of an LLM judge's verdicts, with intervals.
demo       Run the calibrated aggregator on the shipped PandaLM judgments.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
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
                 with --method nuts also 95% credible intervals p_*_lower/upper.

example
  bayesjudge aggregate votes.csv --calibration labels.csv --out decisions.csv
"""


EPILOG_REPORT = """\
file formats
  JUDGMENTS.csv    the judge's verdicts on the test items:   item,judge_label
                   (judge_label 1 = the judge calls the response 'correct' / a win,
                   0 = not; optional column system for several evaluated systems)
  CALIBRATION.csv  a human-labelled calibration set, judged by the same judge:
                   item,judge_label,human_label   (both in 0, 1; optional system)
                   Its items must not appear in JUDGMENTS.csv, and it needs items of
                   both human classes (human_label 0 and 1).

output (printed, and written to --out as CSV)
  one row per system (--by system) or one row "all": n test items, the naive
  judge score (eq. 2), the bias-adjusted estimate with its %(pct)s%% interval,
  the judge's specificity q0 and sensitivity q1 with %(pct)s%% intervals, and the
  calibration sizes m0 (human_label 0) and m1 (human_label 1).
    closed-form  Rogan-Gladen estimate (eq. 5), Lang-Reiczigel interval (eq. 6);
                 q0 = tn/m0, q1 = tp/m1 with Wilson score intervals. Needs
                 q0 + q1 > 1 (a judge better than chance on the calibration set).
    bayes        posterior mean and equal-tailed credible intervals (NUTS) of
                 MisclassificationModel, or with --by system of the hierarchical
                 model that partially pools q0, q1 across systems.

example
  bayesjudge report judgments.csv --calibration calibration.csv --by system --out table.csv
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


def _wilson(successes: np.ndarray, trials: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval of a binomial proportion (vectorised)."""
    from scipy.stats import norm

    z = norm.ppf(0.5 + level / 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = successes / trials
        centre = (p + z**2 / (2 * trials)) / (1 + z**2 / trials)
        half = z / (1 + z**2 / trials) * np.sqrt(p * (1 - p) / trials + z**2 / (4 * trials**2))
    return np.clip(centre - half, 0, 1), np.clip(centre + half, 0, 1)


def report_table(
    judgments: pd.DataFrame,
    calibration: pd.DataFrame,
    method: str = "closed-form",
    by_system: bool = False,
    level: float = 0.95,
    draws: int = 1000,
    chains: int = 4,
    seed: int = 0,
) -> pd.DataFrame:
    """The table ``bayesjudge report`` prints: one row per system (or ``all``).

    Columns ``system``, ``n``, ``naive``, ``adjusted``, ``lower``, ``upper``, ``q0``,
    ``q0_lower``, ``q0_upper``, ``q1``, ``q1_lower``, ``q1_upper``, ``m0``, ``m1``
    (see ``bayesjudge report --help``).
    """
    from bayesjudge.data import DataValidationError, validate_misclassification
    from bayesjudge.estimators import lang_reiczigel_interval

    if not 0 < level < 1:
        raise DataValidationError(f"--level must lie in (0, 1), got {level}. Fix: e.g. --level 0.95.")
    if not by_system:
        for name, table in (("judgments", judgments), ("calibration", calibration)):
            if "system" in table.columns and table["system"].nunique() > 1:
                raise DataValidationError(
                    f"{name}.system holds {table['system'].nunique()} systems "
                    f"({', '.join(map(str, table['system'].unique()[:5]))}); pass --by system for "
                    f"one row per system, or filter the files to one system."
                )
    counts = validate_misclassification(judgments, calibration, by_system=by_system)
    c = counts.to_frame()
    out = pd.DataFrame({"system": c["system"], "n": c["n"], "naive": c["judged_pos"] / c["n"]})
    if method == "closed-form":
        rows = []
        for row in c.itertuples(index=False):
            try:
                ci = lang_reiczigel_interval(row.judged_pos, row.n, row.tp, row.m1, row.tn, row.m0,
                                             alpha=1 - level)
            except DataValidationError as exc:
                where = f"system {row.system!r}: " if by_system else ""
                hint = (" In the CSV files, judge_label = 1 and human_label = 1 must both mean "
                        "'correct' (a win); --method bayes stays defined here, but its interval "
                        "will be wide." if "q0 + q1 <= 1" in str(exc) else "")
                raise DataValidationError(f"{where}{exc}{hint}") from None
            rows.append((ci.estimate, ci.lower, ci.upper))
        out[["adjusted", "lower", "upper"]] = rows
        out["q0"], out["q1"] = c["tn"] / c["m0"], c["tp"] / c["m1"]
        out["q0_lower"], out["q0_upper"] = _wilson(c["tn"].to_numpy(float), c["m0"].to_numpy(float), level)
        out["q1_lower"], out["q1_upper"] = _wilson(c["tp"].to_numpy(float), c["m1"].to_numpy(float), level)
    elif method == "bayes":
        from bayesjudge.models.misclassification import MisclassificationModel
        from bayesjudge.models.misclassification_hierarchical import HierarchicalMisclassificationModel

        model = (HierarchicalMisclassificationModel(random_seed=seed) if len(counts) > 1
                 else MisclassificationModel(random_seed=seed))
        model.fit(counts, method="nuts", draws=draws, tune=draws, chains=chains)
        post = model.idata_["posterior"].to_dataset()
        tail = (1 - level) / 2
        for name, var in (("adjusted", "accuracy"), ("q0", "specificity"), ("q1", "sensitivity")):
            x = post[var].values.reshape(-1, len(counts))
            lo, hi = np.quantile(x, [tail, 1 - tail], axis=0)
            prefix = "" if name == "adjusted" else f"{name}_"
            out[name] = x.mean(axis=0)
            out[f"{prefix}lower"], out[f"{prefix}upper"] = lo, hi
    else:
        raise DataValidationError(f"--method must be closed-form or bayes, got {method!r}.")
    out["m0"], out["m1"] = c["m0"], c["m1"]
    cols = ["system", "n", "naive", "adjusted", "lower", "upper", "q0", "q0_lower", "q0_upper",
            "q1", "q1_lower", "q1_upper", "m0", "m1"]
    return out[cols]


def _format_report(table: pd.DataFrame, method: str, level: float) -> str:
    pct = f"{100 * level:g}%"
    what = ("closed form: Rogan-Gladen estimate, Lang-Reiczigel interval; Wilson intervals for q0, q1"
            if method == "closed-form" else "Bayes: posterior means, equal-tailed credible intervals")
    shown = pd.DataFrame({
        "system": table["system"],
        "n": table["n"],
        "naive": table["naive"].map("{:.3f}".format),
        "adjusted": table["adjusted"].map("{:.3f}".format),
        f"{pct} interval": [f"[{a:.3f}, {b:.3f}]" for a, b in zip(table["lower"], table["upper"])],
        "q0 (specificity)": [f"{q:.3f} [{a:.3f}, {b:.3f}]"
                             for q, a, b in zip(table["q0"], table["q0_lower"], table["q0_upper"])],
        "q1 (sensitivity)": [f"{q:.3f} [{a:.3f}, {b:.3f}]"
                             for q, a, b in zip(table["q1"], table["q1_lower"], table["q1_upper"])],
        "m0": table["m0"],
        "m1": table["m1"],
    })
    return f"misclassification-adjusted accuracy ({what}):\n" + shown.to_string(index=False)


def _cmd_report(args: argparse.Namespace) -> int:
    judgments = _read_csv(args.judgments, "judgments")
    calibration = _read_csv(args.calibration, "calibration")
    table = report_table(judgments, calibration, method=args.method, by_system=args.by == "system",
                         level=args.level, draws=args.draws, chains=args.chains, seed=args.seed)
    print(_format_report(table, args.method, args.level))
    if args.out:
        table.to_csv(args.out, index=False)
        print(f"wrote {args.out}")
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from bayesjudge.demo import run_demo

    print(run_demo(out_dir=Path(args.out_dir), n_splits=args.splits, draws=args.draws))
    return 0


def _add_nuts_options(parser: argparse.ArgumentParser, when: str = "nuts") -> None:
    parser.add_argument("--draws", type=int, default=1000,
                        help=f"NUTS draws and tuning steps per chain ({when})")
    parser.add_argument("--chains", type=int, default=4, help=f"NUTS chains ({when})")
    parser.add_argument("--seed", type=int, default=0, help="random seed")


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
    _add_nuts_options(agg)
    agg.add_argument("--out", required=True, metavar="DECISIONS.csv", help="output CSV")
    agg.set_defaults(func=_cmd_aggregate)

    rep = sub.add_parser(
        "report",
        help="bias-adjusted accuracy of an LLM judge's verdicts, with intervals",
        description="Correct the judge's accuracy (or win rate) for its misclassification "
        "errors, estimated on a human-labelled calibration set, and report it with a "
        "confidence or credible interval (misclassification_adjusted_reporting, Sec. 4).",
        epilog=EPILOG_REPORT % {"pct": "95"},
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    rep.add_argument("judgments", metavar="JUDGMENTS.csv", help="judge verdicts on the test items")
    rep.add_argument("--calibration", required=True, metavar="CALIBRATION.csv",
                     help="human-labelled calibration items (item,judge_label,human_label)")
    rep.add_argument("--method", choices=["closed-form", "bayes"], default="closed-form",
                     help="closed-form Lang-Reiczigel (default) or Bayesian posterior (NUTS)")
    rep.add_argument("--by", choices=["system"], default=None,
                     help="one row per value of the system column (default: one overall row)")
    rep.add_argument("--level", type=float, default=0.95, help="interval level, default 0.95")
    _add_nuts_options(rep, "bayes")
    rep.add_argument("--out", default=None, metavar="TABLE.csv", help="also write the table as CSV")
    rep.set_defaults(func=_cmd_report)

    demo = sub.add_parser(
        "demo",
        help="run the calibrated aggregator on the shipped PandaLM data",
        description="Calibrate the Davidson aggregator on 5% of the PandaLM items "
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
