"""``bayesjudge rank --model anchored``: the ranking a reference judge would give, with the
other judges' verdicts as noisy channels of its outcomes (:class:`bayesjudge.AnchoredBT`)."""

from __future__ import annotations

import argparse
import sys

from bayesjudge.cli.files import write_csv, wrote

#: Columns that hold a battle id in the files users bring (arena_ppr's battles.csv: item;
#: an Arena or MT-Bench export: question_id), suggested when ``battle`` is missing.
BATTLE_LIKE = ("item", "battle_id", "question_id", "id", "instance", "pair_id")


def check_battle_column(raw, comparisons, args: argparse.Namespace) -> None:
    """A UsageError naming the file's own columns and the ``--columns`` fix when the
    table has no ``battle`` column (the library's message lists the mapped table's)."""
    from bayesjudge.cli.files import UsageError
    from bayesjudge.data.comparisons import wide_table_hint

    cols = [str(c) for c in raw.columns]
    if "battle" in comparisons.columns:
        if "judge" not in comparisons.columns or (
                args.judge_columns is None and "judge" not in raw.columns
                and "judge" not in (args.columns or {}).values()):
            raise UsageError(f"--model anchored needs a judge column (the reference's rows "
                             f"and the other judges' verdicts on the same battles); "
                             f"{args.comparisons!r} has {cols}. Fix: add one, or map yours "
                             f"with --columns THEIRS=judge.{wide_table_hint(raw)}")
        return
    # (a column named 'Battle' or ' battle' was refused before: cli.mapping)
    like = [c for c in cols if c.casefold() in BATTLE_LIKE]
    arena = ("" if args.columns or not {"model_a", "model_b", "winner"} <= set(cols) else
             ",model_a=left,model_b=right,winner=outcome" + (",judge=judge" if "judge" in
                                                             cols else ""))
    hint = (f"Fix: --columns {like[0]}=battle{arena} if {like[0]!r} is one id per judged "
            f"instance (the same two responses to the same prompt)" if like else
            "Fix: add a battle column (one id per judged instance: the same two "
            "responses to the same prompt), or map yours with --columns THEIRS=battle")
    if args.columns:
        hint += f", together with the roles you map now ({', '.join(args.columns)})"
    raise UsageError(f"--model anchored needs a battle column; {args.comparisons!r} has "
                     f"{cols}: {hint}.")


def run_anchored(args: argparse.Namespace, comparisons, notes: list[str]) -> int:
    """Fit :class:`bayesjudge.AnchoredBT` on a battle table and write its tables
    (``notes``: what was mapped on reading, printed as the other models' are)."""
    from bayesjudge import AnchoredBT

    effects = args.judge_effects is not False  # on unless --no-judge-effects
    reference = "human" if args.reference is None else args.reference
    model = AnchoredBT(reference=reference, discrimination=effects, item_bias=effects,
                       consensus=args.consensus, random_seed=args.seed)
    model.fit(comparisons, method=args.method, draws=args.draws, tune=args.tune,
              chains=args.chains, cores=args.cores, progressbar=sys.stderr.isatty())
    ranking = model.ranking(ci_prob=args.level, joint=args.joint)
    write_csv(ranking, args.out)
    judges = model.judges(ci_prob=args.level)
    if args.judges:
        write_csv(judges, args.judges)
    if args.differences:
        write_csv(model.differences(ci_prob=args.level), args.differences)
    fmt = {"float_format": lambda v: f"{v:.3f}", "index": False}
    st = model._state_
    sets = "simultaneous rank sets" if args.joint else "marginal rank intervals"
    print(f"AnchoredBT ({args.method}) on {len(comparisons)} rows: {st['n_battles']} battles, "
          f"{st['n_reference']} judged by the reference {reference!r}; {len(ranking)} "
          f"items ({sets}):")
    for note in notes:
        print(f"  ({note})")
    print(ranking.to_string(**fmt))
    if len(judges):
        print("judges (confusion P(verdict | reference outcome), agreement, worth in "
              "reference votes):")
        print(judges.to_string(**fmt))
    print(wrote(args.out, args.judges, args.differences))
    return 0
