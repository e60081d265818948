"""``bayesjudge rank --model anchored``: the ranking a reference judge would give, with the
other judges' verdicts as noisy channels of its outcomes (:class:`bayesjudge.AnchoredBT`)."""

from __future__ import annotations

import argparse
import sys


def run_anchored(args: argparse.Namespace, comparisons) -> int:
    """Fit :class:`bayesjudge.AnchoredBT` on a battle table and write its tables."""
    from bayesjudge import AnchoredBT

    effects = args.judge_effects is not False  # on unless --no-judge-effects
    reference = "human" if args.reference is None else args.reference
    model = AnchoredBT(reference=reference, discrimination=effects, item_bias=effects,
                       consensus=args.consensus, random_seed=args.seed)
    model.fit(comparisons, method=args.method, draws=args.draws, tune=args.tune,
              chains=args.chains, cores=args.cores, progressbar=sys.stderr.isatty())
    ranking = model.ranking(ci_prob=args.level, joint=args.joint)
    ranking.to_csv(args.out, index=False)
    judges = model.judges(ci_prob=args.level)
    if args.judges:
        judges.to_csv(args.judges, index=False)
    fmt = {"float_format": lambda v: f"{v:.3f}", "index": False}
    st = model._state_
    sets = "simultaneous rank sets" if args.joint else "marginal rank intervals"
    print(f"AnchoredBT ({args.method}) on {len(comparisons)} rows: {st['n_battles']} battles, "
          f"{st['n_reference']} judged by the reference {reference!r}; {len(ranking)} "
          f"items ({sets}):")
    print(ranking.to_string(**fmt))
    if len(judges):
        print("judges (confusion P(verdict | reference outcome), agreement, worth in "
              "reference votes):")
        print(judges.to_string(**fmt))
    print(f"wrote {args.out}" + (f" and {args.judges}" if args.judges else ""))
    return 0
