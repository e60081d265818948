"""``--columns`` and ``--outcomes``: a comparisons file with its own column names and labels.

The command-line form of :func:`bayesjudge.data.arena.comparisons_table`:
``--columns model_x=left,model_y=right,verdict=outcome --outcomes A=left,B=right,C=tie``.
The options are parsed and checked before any file is read; the named columns are
checked against the file's header as soon as it is read.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from bayesjudge.cli.files import UsageError
from bayesjudge.data.vocabulary import ARENA_COLUMNS, COLUMN_ROLES, ONE_JUDGE

if TYPE_CHECKING:
    import pandas as pd

MAPPING_HELP = """\
your own column names and labels (a Chatbot Arena export needs neither)
  --columns THEIRS=ROLE,...     rename columns, ROLE one of
                                %(roles)s;
                                e.g. --columns model_x=left,model_y=right,verdict=outcome
  --outcomes LABEL=OUTCOME,...  map verdict labels (any letter case) to left, right
                                or tie, e.g. --outcomes A=left,B=right,C=tie or
                                1=left,2=right,0=tie (verdicts are read as text)
  A Chatbot Arena export (model_a, model_b, winner = model_a | model_b | tie |
  tie (bothbad)) is read as it is: model_a -> left, model_b -> right, winner ->
  outcome, both ties -> tie. Without a judge column every row is one judge,
  %(one)r. Other columns (question_id, ...) are ignored: a question id is not a
  context (one battle per context would leave nothing to compare; a context column
  of such ids is refused).
  --judge-columns COL,...       a wide file, one verdict column per judge (arena_ppr's
                                battles_wide.csv): each row becomes one row per judge
                                with a verdict, the column's name its judge id; an
                                empty cell is a verdict not given. --judge-values prob
                                if the columns hold P(left beats right)
""" % {"roles": ", ".join(COLUMN_ROLES), "one": ONE_JUDGE}

#: The comparisons table's id columns (the file's columns of these names, or mapped to them).
ID_ROLES = ("judge", "left", "right", "context", "aspect", "battle")


def parse_mapping(text: str | None, flag: str, allowed: tuple[str, ...],
                  example: str) -> dict[str, str] | None:
    """``"a=b,c=d"`` as ``{"a": "b", "c": "d"}``; a UsageError naming ``flag`` if malformed."""
    if text is None:
        return None
    fix = f"Fix: e.g. {flag} {example}."
    pairs = [p for p in text.split(",") if p.strip()]
    if not pairs:
        raise UsageError(f"{flag} is empty. {fix}")
    out: dict[str, str] = {}
    # verdict labels are matched ignoring letter case and surrounding spaces, column names
    # exactly: two --outcomes keys that differ only in case are one label mapped twice
    same = (lambda k: k.casefold()) if flag == "--outcomes" else (lambda k: k)
    seen: dict[str, str] = {}
    for pair in pairs:
        # split at the last "=": the values (roles, outcomes) hold none, while a label may
        # (graded verdicts' "A=B" is a tie: --outcomes A=B=tie)
        name, eq, value = pair.rpartition("=")
        name, value = name.strip(), value.strip()
        if not eq or not name or not value:
            raise UsageError(f"{flag}: {pair.strip()!r} is not NAME=VALUE. {fix}")
        if value.casefold() not in allowed:
            raise UsageError(f"{flag}: {pair.strip()!r} maps to {value!r}, which is not one of "
                             f"{', '.join(allowed)}. {fix}")
        if same(name) in seen:
            also = "" if seen[same(name)] == name else (
                f" ({seen[same(name)]!r} and {name!r}: labels are matched ignoring letter case)")
            raise UsageError(f"{flag} names {name!r} twice{also}. {fix}")
        seen[same(name)] = name
        out[name] = value.casefold()
    if flag == "--columns":
        roles = list(out.values())
        twice = sorted({r for r in roles if roles.count(r) > 1})
        if twice:
            raise UsageError(f"--columns maps several columns to {', '.join(twice)}; map one "
                             f"column to each. {fix}")
    return out


def add_mapping_options(parser) -> None:
    """The ``--columns`` / ``--outcomes`` options of a command reading comparisons."""
    parser.add_argument("--columns", default=None, metavar="THEIRS=ROLE,...",
                        help="rename your columns to the comparisons columns, e.g. "
                        "model_x=left,model_y=right,verdict=outcome (see below)")
    parser.add_argument("--outcomes", default=None, metavar="LABEL=OUTCOME,...",
                        help="map your verdict labels to left / right / tie, e.g. "
                        "A=left,B=right,C=tie (see below)")
    parser.add_argument("--judge-columns", default=None, metavar="COL,...",
                        help="a wide file: these columns hold one judge's verdicts each "
                        "(the column's name is the judge id; see below)")
    parser.add_argument("--judge-values", choices=("outcome", "prob"), default=None,
                        help="with --judge-columns: verdict labels (outcome, default) or "
                        "P(left beats right) (prob)")


def check_mapping_options(args: argparse.Namespace) -> None:
    """Parse ``--columns`` / ``--outcomes`` in place (before any work)."""
    args.columns = parse_mapping(args.columns, "--columns", COLUMN_ROLES,
                                 "model_x=left,model_y=right,verdict=outcome")
    args.outcomes = parse_mapping(args.outcomes, "--outcomes", ("left", "right", "tie"),
                                  "A=left,B=right,C=tie")
    args.judge_columns = parse_judge_columns(args.judge_columns)
    if args.judge_values is not None and args.judge_columns is None:
        raise UsageError("--judge-values applies with --judge-columns only (a wide file). "
                         "Fix: add --judge-columns COL,... or drop --judge-values.")
    mapped = [c for c in args.judge_columns or () if c in (args.columns or {})]
    if mapped:
        raise UsageError(f"--columns maps {mapped}, which --judge-columns makes judges' "
                         f"verdict columns. Fix: name each column in one option only.")


def parse_judge_columns(text: str | None) -> list[str] | None:
    """``"human,gpt-4"`` as ``["human", "gpt-4"]``; a UsageError if empty or repeated."""
    if text is None:
        return None
    cols = [c.strip() for c in text.split(",") if c.strip()]
    twice = sorted({c for c in cols if cols.count(c) > 1})
    if not cols or twice:
        what = f"names {', '.join(twice)} twice" if cols else "is empty"
        raise UsageError(f"--judge-columns {what}. Fix: e.g. --judge-columns human,gpt-4 "
                         f"(each judge's verdict column once).")
    return cols


def judge_values(args: argparse.Namespace) -> str:
    """What ``--judge-columns`` hold: ``outcome`` (default) or ``prob``."""
    return args.judge_values or "outcome"


def id_columns(args: argparse.Namespace) -> list[str]:
    """Columns of the file to read as ids (exact strings): those mapped to an id role.

    Arena's ``model_a`` / ``model_b`` count unless ``--columns`` maps them elsewhere: the
    library maps them itself after the columns ``--columns`` names, so read as numbers
    ``007`` and ``7`` would have become one item.
    """
    mapping = {**ARENA_COLUMNS, **(args.columns or {})}
    return [c for c, role in mapping.items() if role in ID_ROLES]


def label_columns(args: argparse.Namespace) -> list[str]:
    """Columns of the file to read as text labels: the one holding the verdicts.

    Verdicts are labels, not numbers: a file's ``1`` / ``2`` / ``0`` must meet
    ``--outcomes 1=left,...`` or ``--levels 1,2,3,4,5`` as written (read as numbers they
    matched no key, and ``1.0`` would not be ``1``).
    """
    mapping = {**ARENA_COLUMNS, **(args.columns or {})}
    named = [c for c, role in mapping.items() if role == "outcome"]
    wide = list(args.judge_columns or ()) if judge_values(args) == "outcome" else []
    return named + wide + ([] if "outcome" in mapping else ["outcome"])


def verdict_labels(args: argparse.Namespace) -> list[str]:
    """The labels ``--outcomes`` / ``--levels`` name: verdicts, never missing markers."""
    return [*(args.outcomes or ()), *(getattr(args, "level_labels", None) or ())]


def _refuse_near_role_names(df: pd.DataFrame, args: argparse.Namespace, path: str) -> None:
    """A column named like a role but for letter case or spaces (``Judge``, `` left``) would
    be ignored -- every row one judge, or a missing-column error listing a default column the
    user never wrote: refuse it, with the --columns that maps it."""
    mapped = {**ARENA_COLUMNS, **(args.columns or {})}
    taken = ({role for c, role in mapped.items() if c in df.columns}
             | {c for c in df.columns if c in COLUMN_ROLES})
    near = {c: c.strip().lower() for c in df.columns if isinstance(c, str)}
    near = {c: role for c, role in near.items()
            if role in COLUMN_ROLES and role not in taken and c not in mapped}
    spaced = [c for c in near if c != c.strip()]
    if spaced:  # --columns strips its names, so it cannot map these: the header must change
        raise UsageError(f"{path!r} has column(s) {spaced} with spaces around the name, "
                         f"named like {[near[c] for c in spaced]}; they would be ignored. "
                         f"{_SPACED_FIX}")
    if near:
        fix = ",".join(f"{c}={role}" for c, role in near.items())
        raise UsageError(f"{path!r} has column(s) {list(near)} named like {list(near.values())} "
                         f"but for letter case; they would be ignored. Fix: rename "
                         f"them, or map them: --columns {fix!r}.")


_SPACED_FIX = ("Fix: remove the spaces around the names in the header line (a file written "
               "with ', ' between fields: write it with ',' alone).")


def _missing_columns(names, df: pd.DataFrame, flag: str, path: str) -> None:
    """UsageError for the names ``flag`` gives that ``df`` lacks (a column written with
    spaces around its name named as the fix)."""
    missing = [c for c in names if c not in df.columns]
    if missing:
        spaced = [c for c in df.columns if isinstance(c, str) and c != c.strip()
                  and c.strip() in missing]
        fix = (f"the file writes {spaced} with spaces around the names. {_SPACED_FIX}"
               if spaced else "Fix: use those names" + (" on the left of each THEIRS=ROLE."
                                                        if flag == "--columns" else "."))
        raise UsageError(f"{flag} names column(s) {missing} that {path!r} does not have; "
                         f"its columns are {list(df.columns)}; {fix}")


def map_comparisons(df: pd.DataFrame, args: argparse.Namespace, path: str):
    """The file's table as the long comparisons table, and a note saying what was mapped."""
    _missing_columns(args.columns or (), df, "--columns", path)
    _missing_columns(args.judge_columns or (), df, "--judge-columns", path)
    _refuse_near_role_names(df, args, path)
    from bayesjudge.data.arena import comparisons_table
    from bayesjudge.data.comparisons import wide_verdict_columns

    verdicts = [] if args.judge_columns is not None or {"outcome", "prob"} & (
        set(df.columns) | set((args.columns or {}).values())) else wide_verdict_columns(df)
    if len(verdicts) and not {"model_a", "model_b", "winner"} <= set(df.columns):
        raise UsageError(f"{path!r} has no outcome (or prob) column, and its columns "
                         f"{verdicts} hold left / right / tie verdicts: a wide file with one "
                         f"column per judge. Fix: --judge-columns {','.join(verdicts)}.")

    out = comparisons_table(df, columns=args.columns, outcomes=args.outcomes,
                            judge_columns=args.judge_columns, judge_values=judge_values(args))
    notes = []
    if args.judge_columns is not None:
        empty = len(df) * len(args.judge_columns) - len(out)
        notes.append(f"wide file: {len(args.judge_columns)} judge columns x {len(df)} rows -> "
                     f"{len(out)} verdicts ({empty} empty cell{'' if empty == 1 else 's'}: "
                     f"verdicts not given)")
    if args.columns is None and {"model_a", "model_b"} <= set(df.columns) \
            and "left" not in df.columns:
        notes.append("read as a Chatbot Arena export (model_a -> left, model_b -> right, "
                     "winner -> outcome, both ties -> tie)")
    elif args.columns:
        notes.append("columns " + ", ".join(f"{c} -> {r}" for c, r in args.columns.items()))
    if "judge" not in df.columns and args.judge_columns is None and (
            args.columns is None or "judge" not in args.columns.values()):
        notes.append(f"no judge column: every row is one judge, {ONE_JUDGE!r}")
    return out, notes
