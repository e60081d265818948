"""``bayesjudge rank --model ordinal``: graded verdicts (``B>>A .. A>>B``) by :class:`OrdinalBT`.

The options of the ordered-logistic Bradley-Terry model (``--levels``, ``--cutpoints``,
``--per-judge-cutpoints``), checked before any file is read, and the model they build;
``cli.rank`` registers them on ``bayesjudge rank``.
"""

from __future__ import annotations

import argparse

from bayesjudge.cli.files import UsageError
from bayesjudge.data.vocabulary import DEFAULT_LEVELS, check_levels

EPILOG_ORDINAL = """\
  ordinal      graded verdicts (OrdinalBT): outcome holds one of --levels, listed from the
               strongest preference for right to the strongest for left (default
               "B>>A,B>A,A=B,A>B,A>>B", Arena-Hard's labels with A = left; letter case
               ignored); --cutpoints symmetric|free, --per-judge-cutpoints,
               --discriminators, --position-bias. --judges adds the cut points.
"""


def add_ordinal_options(parser: argparse.ArgumentParser) -> None:
    """``--levels``, ``--cutpoints`` and ``--per-judge-cutpoints`` (``--model ordinal``)."""
    parser.add_argument("--levels", default=None, metavar="L1,L2,...",
                        help="ordinal: the outcome labels, comma-separated, strongest "
                        f"preference for right first (default {','.join(DEFAULT_LEVELS)})")
    parser.add_argument("--cutpoints", choices=["symmetric", "free"], default="symmetric",
                        help="ordinal: cut points mirrored about the tie (default) or free")
    parser.add_argument("--per-judge-cutpoints", action="store_true",
                        help="ordinal: one set of cut points per judge")


def check_ordinal(args: argparse.Namespace) -> None:
    """Refuse ordinal options on other models and other models' options on ordinal."""
    if args.model != "ordinal":
        if args.levels is not None or args.cutpoints != "symmetric" or args.per_judge_cutpoints:
            raise UsageError("--levels, --cutpoints and --per-judge-cutpoints apply to --model "
                             "ordinal only. Fix: add --model ordinal or drop them.")
        return
    try:
        args.level_labels = list(check_levels(
            None if args.levels is None else [v.strip() for v in args.levels.split(",")]))
    except ValueError as exc:
        raise UsageError(f"--levels {args.levels!r}: {exc}. Fix: e.g. --levels "
                         f"\"{','.join(DEFAULT_LEVELS)}\".") from None
    for flag, given in (("--kind", args.kind is not None), ("--tie", args.tie != "global"),
                        ("--symmetrize / --no-symmetrize", args.symmetrize is not None),
                        ("--per-aspect", args.per_aspect)):
        if given:
            raise UsageError(f"{flag} does not apply to --model ordinal (graded verdicts are "
                             f"fitted as judged, by their levels). Fix: drop {flag}.")


def build_ordinal(args: argparse.Namespace):
    """The configured :class:`~bayesjudge.OrdinalBT` of a ``rank`` command line."""
    from bayesjudge import OrdinalBT

    return OrdinalBT(levels=args.level_labels, cutpoints=args.cutpoints,
                     per_judge_cutpoints=args.per_judge_cutpoints,
                     discriminators=args.discriminators, position_bias=args.position_bias,
                     random_seed=args.seed)
