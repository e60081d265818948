"""``bayesjudge rank``: rank items from pairwise judgments of several judges.

Fits the Bradley-Terry family of Qian, Sun, Gales & Knill (2026), Who can we
trust? LLM-as-a-jury for Comparative Assessment, arXiv:2602.16610 (soft / hard
BT, eqs. 1-2; BT-sigma, eq. 13), or Davidson's tie model with optional judge
discriminators and positional bias, and writes one ranking row per (context,
item) with rank credible intervals and P(best).
"""

from __future__ import annotations

import argparse
import sys
import warnings

from bayesjudge.cli.files import (
    FILES_HELP,
    UsageError,
    check_distinct_outputs,
    check_output_file,
    read_table,
    write_csv,
    wrote,
)
from bayesjudge.cli.mapping import (
    ID_ROLES,
    MAPPING_HELP,
    add_mapping_options,
    check_mapping_options,
    id_columns,
    label_columns,
    map_comparisons,
    verdict_labels,
)
from bayesjudge.cli.ordinal import (
    EPILOG_ORDINAL,
    add_ordinal_options,
    build_ordinal,
    check_ordinal,
)
from bayesjudge.constants import CI_PROB

PCT = f"{100 * CI_PROB:g}%"

EPILOG_RANK = """\
file format
  COMPARISONS.csv  one row per judgment: judge,left,right and either
                   prob     P(left beats right) in [0, 1]     (soft judges), or
                   outcome  left, right or tie                 (hard verdicts);
                   optional context (items are compared only within it: an article,
                   a prompt) and aspect. Sparse designs and pairs judged in one order
                   only are fine. Pairs judged in both orders are symmetrised first
                   (eq. 3) by bt and bt-sigma (--no-symmetrize: fit each order as
                   judged; --symmetrize: davidson-bt too); every row counts either way.

%(mapping)s
models (Qian, Sun, Gales & Knill 2026, arXiv:2602.16610)
  bt           soft (eq. 2) or hard (eq. 1) Bradley-Terry, every judge trusted alike
  bt-sigma     BT-sigma (eq. 13): one discriminator sigma_k per judge, learned from the
               comparisons alone; 1/sigma_k is the judge's reliability (default)
  davidson-bt  Davidson's model with ties (hard outcomes), --tie global|per-judge;
               --discriminators adds sigma_k, --position-bias a per-judge bias toward
               the left slot (use it when pairs were judged in one order only)
%(ordinal)s
  anchored     AnchoredBT: the ranking --reference (default human) would give; the file
               needs a battle column (one id per judged instance) and the other judges'
               verdicts enter through a confusion matrix each (--joint: simultaneous
               rank sets; each judge's own scale and item preferences are modelled
               unless --no-judge-effects; --consensus for several LLM judges that share
               errors on a battle)

output
  RANKING.csv  one row per (context, item): skill (MAP, or posterior mean with --method
               nuts) with its %(pct)s interval (--level), rank (1 = best) with its
               interval, P(best) and its Monte Carlo error p_best_mcse. --judges writes
               each judge's discriminator sigma_k and reliability 1/sigma_k (and tie /
               bias parameters) with intervals (--position-bias: position_bias_identified
               False where the design leaves a judge's bias to the prior, e.g. a
               baseline always on the left); davidson-bt adds tie_logit = log nu and
               p_tie_equal = nu / (2 + nu), P(tie) between equal skills (--tie global:
               one value, repeated on every judge). --method map gives a Laplace
               approximation around the MAP; --method nuts the full posterior.
  PAIRS.csv    (--differences) one row per pair of items of a context, item_a ranked
               above item_b: skill difference with its interval, prob_a_better =
               P(a better than b) and its Monte Carlo error prob_a_better_mcse.

%(files)s
example
  bayesjudge rank comparisons.csv --model bt-sigma --out ranking.csv --judges judges.csv
""" % {"pct": PCT, "files": FILES_HELP, "mapping": MAPPING_HELP, "ordinal": EPILOG_ORDINAL}

MODELS = ("bt", "bt-sigma", "davidson-bt", "ordinal", "anchored")


def add_rank_parser(sub, add_nuts_options, add_common, check_level, check_nuts, check_seed):
    """Register ``rank`` on the subparsers ``sub`` (helpers come from ``cli.app``)."""

    def check(args: argparse.Namespace) -> None:
        check_level(args.level)
        check_mapping_options(args)
        check_nuts(args.draws, args.tune, args.chains)  # a wrong value, whatever the method
        check_seed(args.seed)
        check_ordinal(args)
        if args.model == "davidson-bt" and args.kind == "soft":
            raise UsageError("--kind soft does not apply to --model davidson-bt (Davidson's "
                             "model is for hard outcomes with ties). Fix: drop --kind, or "
                             "use --model bt-sigma for soft probabilities.")
        if args.model not in ("davidson-bt", "ordinal") and (
                args.position_bias or args.discriminators or args.tie != "global"):
            raise UsageError("--tie, --discriminators and --position-bias apply to --model "
                             "davidson-bt only (--discriminators and --position-bias also to "
                             "--model ordinal). Fix: add --model davidson-bt or drop them.")
        if args.model != "anchored":
            effects = {True: "--judge-effects", False: "--no-judge-effects", None: None}
            for flag in (effects[args.judge_effects],
                         "--reference" if args.reference is not None else None,
                         "--consensus" if args.consensus else None):
                if flag:
                    raise UsageError(f"{flag} applies to --model anchored only. Fix: add "
                                     f"--model anchored or drop {flag}.")
        else:
            for flag, given in (("--kind", args.kind is not None),
                                ("--symmetrize / --no-symmetrize", args.symmetrize is not None)):
                if given:
                    raise UsageError(f"{flag} does not apply to --model anchored (a battle's "
                                     f"verdicts are fitted as shown, left and right, as "
                                     f"outcomes). Fix: drop {flag}.")
        if args.symmetrize and args.position_bias:
            raise UsageError("--symmetrize turns every pair judged in both orders to one "
                             "orientation, which leaves --position-bias nothing to learn from. "
                             "Fix: drop --symmetrize (the bias model replaces eq. 3) or "
                             "--position-bias.")
        if args.per_aspect and args.model != "bt-sigma":
            raise UsageError("--per-aspect applies to --model bt-sigma only (one "
                             "discriminator per judge and aspect).")
        check_output_file(args.out, "--out", (args.comparisons,))
        extra = {f: v for f, v in (("--judges", args.judges),
                                   ("--differences", args.differences)) if v is not None}
        for flag, path in extra.items():
            check_output_file(path, flag, (args.comparisons,))
        if extra:
            check_distinct_outputs({"--out": args.out, **extra})

    rank = sub.add_parser(
        "rank",
        help="rank items from pairwise judgments of several judges (BT, BT-sigma, Davidson)",
        description="Rank items with credible intervals from pairwise comparisons by "
        "several judges of unknown reliability, learning how far to trust each judge "
        "(BT-sigma of Qian, Sun, Gales & Knill 2026, arXiv:2602.16610), with ties and "
        "positional bias by Davidson's model.",
        epilog=EPILOG_RANK,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    rank.add_argument("comparisons", metavar="COMPARISONS.csv",
                      help="pairwise judgments (see the format below)")
    rank.add_argument("--model", choices=MODELS, default="bt-sigma",
                      help="bt, bt-sigma (default), davidson-bt, ordinal or anchored")
    rank.add_argument("--reference", default=None,
                      help="anchored: the reference judge's id (default human)")
    rank.add_argument("--joint", action="store_true",
                      help="simultaneous rank sets instead of marginal intervals: with "
                      "probability --level every item's rank lies in its set at once")
    rank.add_argument("--judge-effects", action=argparse.BooleanOptionalAction, default=None,
                      help="anchored: each judge's own scale and item preferences "
                      "(discrimination=True, item_bias=True; the default); "
                      "--no-judge-effects: one confusion matrix per judge for every pair")
    rank.add_argument("--consensus", action="store_true",
                      help="anchored, two or more judges besides the reference: they read "
                      "one battle-level outcome (a channel of the reference's) and share "
                      "its errors, instead of being independent given the reference's")
    rank.add_argument("--kind", choices=["soft", "hard"], default=None,
                      help="bt / bt-sigma: soft (probabilities) or hard (outcomes); default: "
                      "hard if the file has an outcome column, else soft (davidson-bt is "
                      "always hard)")
    rank.add_argument("--per-aspect", action="store_true",
                      help="bt-sigma: one discriminator per judge and aspect (BT-sigma-asp)")
    rank.add_argument("--tie", choices=["global", "per-judge"], default="global",
                      help="davidson-bt: one tie parameter (default) or one per judge")
    rank.add_argument("--discriminators", action="store_true",
                      help="davidson-bt: add a discriminator sigma_k per judge")
    rank.add_argument("--position-bias", action="store_true",
                      help="davidson-bt: add a per-judge bias toward the left slot")
    rank.add_argument("--symmetrize", action=argparse.BooleanOptionalAction, default=None,
                      help="average the two orders of each pair judged in both (eq. 3) before "
                      "fitting; every row still counts. Default: on for bt and bt-sigma, off "
                      "for davidson-bt")
    rank.add_argument("--method", choices=["map", "nuts"], default="map",
                      help="MAP with a Laplace approximation (fast, default) or NUTS")
    rank.add_argument("--level", type=float, default=CI_PROB,
                      help=f"credible interval level in (0.5, 1), default {CI_PROB}")
    add_mapping_options(rank)
    add_ordinal_options(rank)
    add_nuts_options(rank)
    rank.add_argument("--out", required=True, metavar="RANKING.csv",
                      help="output CSV (its folder must exist)")
    rank.add_argument("--judges", default=None, metavar="JUDGES.csv",
                      help="also write each judge's reliability table as CSV")
    rank.add_argument("--differences", default=None, metavar="PAIRS.csv",
                      help="also write P(a better than b) and the skill difference with "
                           "its interval for every pair of items (within a context) as CSV")
    add_common(rank)
    rank.set_defaults(func=run_rank, check=check)
    return rank


def build_model(args: argparse.Namespace):
    """The configured model of a ``rank`` command line."""
    from bayesjudge import BradleyTerry, BTSigma, DavidsonBT

    if args.model == "ordinal":
        return build_ordinal(args)
    sym = {} if args.symmetrize is None else {"symmetrize": args.symmetrize}
    if args.model == "bt":
        return BradleyTerry(kind=args.kind or "soft", random_seed=args.seed, **sym)
    if args.model == "bt-sigma":
        return BTSigma(kind=args.kind or "soft", per_aspect=args.per_aspect,
                       random_seed=args.seed, **sym)
    return DavidsonBT(discriminators=args.discriminators,
                      tie=args.tie.replace("-", "_"),
                      position_bias=args.position_bias, random_seed=args.seed, **sym)


def add_tie_columns(model, judges, level: float):
    """Davidson fits: the tie parameter on every judge row, also on the probability scale.

    ``judges()`` reports a per-judge ``tie_logit``; a global one (``--tie global``) is
    taken from ``summarize()`` and repeated on every row, so both modes report it in
    the same columns. ``p_tie_equal`` = nu / (2 + nu), nu = exp(tie_logit), is the
    probability of a tie between equal skills (for a judge without positional bias);
    the map is increasing, so its interval is the image of tie_logit's equal-tailed
    interval.
    """
    from bayesjudge import DavidsonBT

    if not isinstance(model, DavidsonBT):
        return judges
    judges = judges.copy()
    if "tie_logit" not in judges:
        with warnings.catch_warnings():
            # summarize() names flagged rows by parameter (skill[0], ...): the ranking's
            # warning named them by item already, and the tie row's flag is kept below
            warnings.filterwarnings("ignore", message=".*laplace_ok=False", category=UserWarning)
            table = model.summarize(ci_prob=level)
        row = table.loc["tie_logit"]
        if "laplace_ok" in table and "laplace_ok" in judges:
            judges["laplace_ok"] = judges["laplace_ok"].to_numpy(bool) & bool(row["laplace_ok"])
        point = row["map"] if "map" in table else row["mean"]
        judges["tie_logit"] = point
        judges["tie_logit_lower"] = row[next(c for c in table if c.endswith("_lb"))]
        judges["tie_logit_upper"] = row[next(c for c in table if c.endswith("_ub"))]
    import numpy as np

    for suffix in ("", "_lower", "_upper"):
        nu = np.exp(judges[f"tie_logit{suffix}"].to_numpy(float))
        judges[f"p_tie_equal{suffix}"] = nu / (2.0 + nu)
    return judges


def run_rank(args: argparse.Namespace) -> int:
    # only the id columns rank reads must be filled in (LLMFAO's annotator is not one)
    raw = read_table(args.comparisons, "comparisons", ids=id_columns(args), required=ID_ROLES,
                     text=label_columns(args), labels=verdict_labels(args))
    comparisons, notes = map_comparisons(raw, args, args.comparisons)
    if args.model == "anchored":
        from bayesjudge.cli.anchored import check_battle_column, run_anchored

        check_battle_column(raw, comparisons, args)
        return run_anchored(args, comparisons, notes)
    if args.kind is None:  # follow the file: outcomes are hard, probabilities soft
        args.kind = "hard" if "outcome" in comparisons.columns else "soft"
    if args.model == "davidson-bt" and "outcome" not in comparisons.columns:
        notes.append("prob read as outcomes: p > 0.5 left, p = 0.5 tie, p < 0.5 right; "
                     "--model bt or bt-sigma fit the probabilities themselves")
    elif args.kind == "hard" and "outcome" not in comparisons.columns:
        notes.append("prob read as outcomes (--kind hard): p > 0.5 left, p = 0.5 tie (half a "
                     "win each), p < 0.5 right; leave --kind out to fit the probabilities "
                     "themselves")
    model = build_model(args)
    from bayesjudge.data.comparisons import BattleContextWarning

    with warnings.catch_warnings():
        # a ranking per battle is no ranking: refused before any fitting (validation warns)
        warnings.simplefilter("error", BattleContextWarning)
        try:
            model.fit(comparisons, method=args.method, draws=args.draws, tune=args.tune,
                      chains=args.chains, cores=args.cores, progressbar=sys.stderr.isatty())
        except BattleContextWarning as warning:
            raise UsageError(f"{warning.finding} Fix: drop the column, or map it elsewhere "
                             f"(--columns context=battle), to rank the items over all "
                             f"rows.") from None
    ranking = model.ranking(ci_prob=args.level, joint=args.joint)
    write_csv(ranking, args.out)
    judges = model.judges(ci_prob=args.level)
    judges["n_comparisons"] = judges["n_comparisons"].astype(int)  # a count, stored as float
    judges = add_tie_columns(model, judges, args.level)
    if args.judges:
        write_csv(judges, args.judges)
    if args.differences:
        write_csv(model.differences(ci_prob=args.level), args.differences)
    fmt = {"float_format": lambda v: f"{v:.3f}", "index": False}
    n_ctx = ranking["context"].nunique() if "context" in ranking else 1
    # every row is an observation, symmetrised or not (eq. 3 keeps the rows' weight)
    sym = ", both orders symmetrised (eq. 3)" if getattr(model, "symmetrize", False) else ""
    sets = "; simultaneous rank sets" if args.joint else ""
    counted = ""
    if "n" in comparisons.columns:  # a counts table: each row is n comparisons
        counted = f" ({len(comparisons)} rows counted by n)"
        n_rows = int(comparisons["n"].fillna(0).sum())
    else:
        n_rows = len(comparisons)
    print(f"{type(model).__name__} ({args.method}{sym}) on {n_rows} comparisons{counted}, "
          f"{len(ranking)} items in {n_ctx} context(s){sets}:")
    for note in notes:
        print(f"  ({note})")
    head = ranking if n_ctx == 1 else ranking.groupby("context", sort=False).head(3)
    print(head.head(30).to_string(**fmt))
    if len(judges):
        print("judges:")
        print(judges.to_string(**fmt))
    if "p_tie_equal" in judges:
        shared = (" (--tie global: one parameter shared by all judges, repeated on every row)"
                  if args.tie == "global" else "")
        print(f"tie_logit = log nu{shared}; p_tie_equal = nu / (2 + nu), the probability of a "
              f"tie between two items of equal skill.")
    print(wrote(args.out, args.judges, args.differences))
    return 0

