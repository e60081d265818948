"""The ``bayesjudge`` command: the models on CSV files, and a demo on shipped data.

Subcommands
-----------
aggregate  Calibrate the Davidson aggregator on labelled items and decide every item.
report     Bias-adjusted accuracy (win rate) of an LLM judge's verdicts, with intervals.
demo       Run the calibrated aggregator on the shipped PandaLM judgments.

Contract (CONTRIBUTING.md): every argument and output path is checked before any
file is read or model fitted; a user error (bad argument, unreadable file, invalid
table) prints one line ``error: ...`` on stderr and exits with status 2, without a
traceback unless ``--debug`` is given; a warning prints one line ``warning: ...``.
Id columns are read as text and written back exactly as given.

References: the aggregator follows Dadkhahi et al. (2025), Distribution-Calibrated
Inference Time Compute for Thinking LLM-as-a-Judge, arXiv:2512.03019; the report
follows Lee, Zeng, Jeong, Sohn & Lee (2025), How to Correctly Report LLM-as-a-Judge
Evaluations, arXiv:2511.21140.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
import traceback
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from bayesjudge import __version__
from bayesjudge.constants import CI_PROB
from bayesjudge.data import ID_COLUMNS, DataValidationError
from bayesjudge.inference import (
    MIN_DRAWS,
    MIN_TUNE,
    ConvergenceWarning,
    FitError,
    check_nuts_settings,
)

PCT = f"{100 * CI_PROB:g}%"

FILES_NOTE = """\
reading files
  Files may be comma-, semicolon- or tab-separated: the delimiter is detected from
  the header line (with semicolons, decimal commas such as 0,75 are read as 0.75).
  Id columns (%(ids)s) are read as text, exactly as written: 007 stays
  007, 1.10 and 1.1 are different items, NA is an id like any other; an empty id is
  an error. Other columns: empty cells and NA/NaN/null are missing values, which are
  reported, never dropped.
""" % {"ids": ", ".join(ID_COLUMNS)}

EPILOG_AGGREGATE = """\
file formats
  VOTES.csv   one row per sampled vote:  item,vote        (vote in -1, 0, +1;
              +1 = first response better, -1 = second better, 0 = tie;
              optional column confidence in [0, 1])
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
""" % {"pct": PCT, "files": FILES_NOTE}


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
  judge score (eq. 2), the bias-adjusted estimate with its interval (%(pct)s by
  default, --level), the judge's specificity q0 and sensitivity q1 with intervals,
  the calibration sizes m0 (human_label 0) and m1 (human_label 1), and flag:
    boundary              (printed !) closed form: the estimate is clipped at 0 or 1
                          and the interval has zero width; use --method bayes.
    weakly-identified     (printed ?) bayes: q0 + q1 <= 1 is plausible (the lower
                          end of the credible interval of q0 + q1 is <= 1), so
                          the judge may be no better than chance.
    borrowed-calibration  (printed *) bayes, --by system: the system has no
                          calibration items of its own in a class (m0 = 0 or m1 = 0),
                          so the hierarchical model borrows its q0/q1 from the others.
  Methods (equations of Lee et al. (2025), arXiv:2511.21140):
    closed-form  Rogan-Gladen estimate (eq. 5), Lang-Reiczigel interval (eq. 6);
                 q0 = tn/m0, q1 = tp/m1 with Wilson score intervals. Needs
                 q0 + q1 > 1 (a judge better than chance on the calibration set).
    bayes        posterior mean and equal-tailed credible intervals (NUTS) of
                 MisclassificationModel, or with --by system of the hierarchical
                 model that partially pools q0, q1 across systems.

%(files)s
example
  bayesjudge report judgments.csv --calibration calibration.csv --by system --out table.csv
""" % {"pct": PCT, "files": FILES_NOTE}

# Files run_demo writes into --out-dir (checked before the demo runs).
DEMO_FILES = ("decisions.csv", "split_protocol_summary.csv", "decision_map_n2.png")
MIN_SPLITS = 2  # the demo reports the spread over splits: one split has none

FLAGS = {  # CSV flag -> (printed mark, footnote)
    "boundary": (
        "!", "estimate at the boundary of [0, 1]: the closed-form interval has zero width "
        "and is not a valid uncertainty statement; rerun with --method bayes."
    ),
    "weakly-identified": (
        "?", "q0 + q1 <= 1 is plausible under the posterior (its credible interval reaches "
        "1): the judge may be no better than chance and the estimate is weakly identified; "
        "add calibration labels."
    ),
    "borrowed-calibration": (
        "*", "no calibration items of its own with human_label 0 or 1 (m0 = 0 or m1 = 0): "
        "its q0/q1 are borrowed from the other systems; label calibration items for it."
    ),
}

# pandas' default missing-value markers, applied to the value columns only (never to ids)
NA_STRINGS = [
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
    "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null",
]
DELIMITERS = {",": "comma", ";": "semicolon", "\t": "tab"}
_DECIMAL_COMMA = re.compile(r"^\s*[+-]?\d*,\d+\s*$")
_INTEGER = re.compile(r"^\s*[+-]?\d+\s*$")


class UsageError(Exception):
    """A bad argument, output path or input file: printed as one line, exit status 2."""


class _ArgumentError(UsageError):
    """argparse's own complaint (unknown option, invalid int, missing argument)."""


class _Parser(argparse.ArgumentParser):
    """argparse, but errors raise (so ``main`` prints them as one line)."""

    def error(self, message: str):
        raise _ArgumentError(f"{self.prog}: {message} (see '{self.prog} --help')")


# ---------------------------------------------------------------------------- reading


def read_table(path: str, what: str) -> pd.DataFrame:
    """Read a user's CSV file: id columns as exact strings, delimiter sniffed.

    Parameters
    ----------
    path : str
        The file; comma-, semicolon- or tab-separated (detected from the header).
    what : str
        What the file is ("votes", "calibration", ...), for error messages.

    Returns
    -------
    pandas.DataFrame
        Id columns (:data:`bayesjudge.data.ID_COLUMNS`) as ``str`` exactly as
        written; other columns parsed by pandas (missing markers become NaN).

    Raises
    ------
    UsageError
        Missing, unreadable, empty or malformed file, duplicated column names, or
        an empty id.
    """
    p = Path(path)
    where = f"{what} file {path!r}"
    if not p.exists():
        raise UsageError(f"{where} does not exist; check the path.")
    if p.is_dir():
        raise UsageError(f"{where} is a folder; pass a CSV file.")
    try:
        with open(p, encoding="utf-8-sig", newline="") as fh:
            header = fh.readline()
            has_rows = any(line.strip() for line in fh)
    except UnicodeDecodeError:
        hint = (" Decompress it first." if p.suffix.lower() in (".gz", ".bz2", ".xz", ".zip",
                                                                ".zst") else
                " Save it as CSV in UTF-8 (e.g. Excel: 'CSV UTF-8').")
        raise UsageError(f"{where} is not UTF-8 text.{hint}") from None
    except OSError as exc:
        raise UsageError(f"cannot read {where}: {exc.strerror or exc}.") from None
    if not header.strip():
        raise UsageError(f"{where} is empty: it needs a header line naming the columns "
                         f"and one line per row.")
    if not has_rows:
        raise UsageError(f"{where} has a header line but no rows.")
    sep = _sniff_delimiter(header)
    names = _split_header(header, sep)
    dup = sorted({c for c in names if names.count(c) > 1})
    if dup:
        raise UsageError(f"{where} names column(s) {dup} more than once in its header; "
                         f"rename or drop the duplicates.")
    ids = [c for c in names if c in ID_COLUMNS]
    try:
        df = pd.read_csv(
            p, sep=sep, encoding="utf-8-sig", dtype={c: str for c in ids},
            keep_default_na=False, na_values={c: NA_STRINGS for c in names if c not in ids},
        )
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as exc:
        raise UsageError(f"could not read {where} as {DELIMITERS[sep]}-separated CSV: "
                         f"{one_line(exc)}") from None
    if sep == ";":
        df = _decimal_commas(df, [c for c in df.columns if c not in ids])
    for col in ids:
        empty = df[col].str.strip() == ""
        if empty.any():
            lines = (np.flatnonzero(empty.to_numpy()) + 2).tolist()  # line 1 is the header
            shown = ", ".join(map(str, lines[:5])) + (f" ... ({len(lines)} in all)"
                                                       if len(lines) > 5 else "")
            raise UsageError(f"{where}: column {col!r} is empty on line(s) {shown}; every row "
                             f"needs an id. Fill in the ids or delete those rows.")
    return df


def _sniff_delimiter(header: str) -> str:
    """The most frequent of comma, semicolon and tab outside quotes (comma if none)."""
    counts = dict.fromkeys(DELIMITERS, 0)
    quoted = False
    for ch in header:
        if ch == '"':
            quoted = not quoted
        elif not quoted and ch in counts:
            counts[ch] += 1
    best = max(counts, key=counts.get)  # ties go to the comma (first key)
    return best if counts[best] else ","


def _split_header(header: str, sep: str) -> list[str]:
    import csv

    return next(csv.reader([header.rstrip("\r\n")], delimiter=sep))


def _decimal_commas(df: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """Semicolon files: read text columns written with decimal commas (0,75) as numbers."""
    for col in columns:
        if not pd.api.types.is_string_dtype(df[col]):  # "str" (pandas 3) or object
            continue
        values = df[col].dropna().astype(str)
        comma = values.str.match(_DECIMAL_COMMA)
        if comma.any() and (comma | values.str.match(_INTEGER)).all():
            df[col] = pd.to_numeric(df[col].str.replace(",", ".", regex=False))
    return df


# ---------------------------------------------------------------------------- checks


def one_line(exc: BaseException | str) -> str:
    """An exception's (or warning's) message on one line."""
    return " ".join(str(exc).split())


def _check_output_file(path: str, flag: str, inputs: tuple[str, ...] = ()) -> None:
    p = Path(path)
    if p.is_dir():
        raise UsageError(f"{flag} {path!r} is a folder; give a file name, e.g. "
                         f"{flag} {p / 'table.csv'}.")
    folder = p.parent
    if not folder.exists():
        raise UsageError(f"{flag} {path!r}: the folder {str(folder)!r} does not exist; "
                         f"create it first (mkdir -p {folder}) or choose another path.")
    if not folder.is_dir():
        raise UsageError(f"{flag} {path!r}: {str(folder)!r} is a file, not a folder.")
    if not os.access(folder, os.W_OK | os.X_OK) or (p.exists() and not os.access(p, os.W_OK)):
        raise UsageError(f"{flag} {path!r} is not writable; choose another path.")
    for source in inputs:
        if Path(source).exists() and p.exists() and p.samefile(source):
            raise UsageError(f"{flag} {path!r} is an input file and would be overwritten; "
                             f"choose another output path.")


def _check_output_dir(path: str, flag: str, files: tuple[str, ...] = ()) -> None:
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise UsageError(f"{flag} {path!r} is a file, not a folder; give a folder name "
                         f"(it is created if missing).")
    existing = p
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise UsageError(f"{flag} {path!r} cannot be created: {str(existing)!r} is a file.")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise UsageError(f"{flag} {path!r} is not writable; choose another folder.")
    for name in files:
        if (p / name).is_dir():
            raise UsageError(f"{flag} {path!r} holds a folder {name!r} where the output file "
                             f"{name} goes; remove it or choose another folder.")


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
    _check_output_file(args.out, "--out", (args.votes, args.calibration))


def _check_report(args: argparse.Namespace) -> None:
    _check_level(args.level)
    _check_nuts(args.draws, args.tune, args.chains)
    _check_seed(args.seed)
    if args.out:
        _check_output_file(args.out, "--out", (args.judgments, args.calibration))


def _check_demo(args: argparse.Namespace) -> None:
    if args.splits < MIN_SPLITS:
        raise UsageError(f"--splits must be at least {MIN_SPLITS} (the demo reports the spread "
                         f"over splits), got {args.splits}. Fix: e.g. --splits 100.")
    smallest = max(MIN_DRAWS, MIN_TUNE)
    if args.draws < smallest:
        raise UsageError(f"--draws {args.draws} is too small to diagnose NUTS: the demo uses it "
                         f"for both the draws and the tuning steps per chain, so the minimum is "
                         f"{smallest}. Fix: e.g. --draws 1000 (the default).")
    _check_nuts(args.draws, args.draws, 2)
    _check_output_dir(args.out_dir, "--out-dir", DEMO_FILES)


# ---------------------------------------------------------------------------- aggregate


def _cmd_aggregate(args: argparse.Namespace) -> int:
    from bayesjudge import DavidsonAggregator

    votes = read_table(args.votes, "votes")
    labels = read_table(args.calibration, "calibration")
    model = DavidsonAggregator(tie=args.tie, alpha=args.alpha, kappa=args.kappa,
                               random_seed=args.seed)
    model.fit(votes, labels, method=args.method, draws=args.draws, tune=args.tune,
              chains=args.chains)
    decisions = model.predict(votes)
    decisions.to_csv(args.out, index=False)
    summary = model.summarize()
    print(f"calibrated on {len(labels)} labelled items ({args.method}, tie={args.tie}):")
    print(summary.to_string(float_format=lambda v: f"{v:.3f}"))
    counts = decisions["decision"].value_counts().reindex([1, 0, -1], fill_value=0)
    print(f"decisions for {len(decisions)} items: +1: {counts[1]}, 0: {counts[0]}, "
          f"-1: {counts[-1]}")
    print(f"wrote {args.out}")
    return 0


# ---------------------------------------------------------------------------- report


def report_table(
    judgments: pd.DataFrame,
    calibration: pd.DataFrame,
    method: str = "closed-form",
    by_system: bool = False,
    level: float = CI_PROB,
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 4,
    seed: int = 0,
) -> pd.DataFrame:
    """The table ``bayesjudge report`` prints: one row per system (or ``all``).

    Implements the reporting of Lee, Zeng, Jeong, Sohn & Lee (2025), How to
    Correctly Report LLM-as-a-Judge Evaluations, arXiv:2511.21140.

    Parameters
    ----------
    judgments, calibration : pandas.DataFrame
        The tables of ``bayesjudge report --help``.
    method : {"closed-form", "bayes"}
        Rogan-Gladen estimate with the Lang-Reiczigel interval and Wilson intervals
        for q0, q1; or posterior means and equal-tailed credible intervals (NUTS).
    by_system : bool
        One row per value of the ``system`` column.
    level : float, default CI_PROB (0.95)
        Interval level, in (0.5, 1).
    draws, tune, chains, seed
        NUTS settings (``method="bayes"``).

    Returns
    -------
    pandas.DataFrame
        Columns ``system``, ``n``, ``naive``, ``adjusted``, ``lower``, ``upper``,
        ``q0``, ``q0_lower``, ``q0_upper``, ``q1``, ``q1_lower``, ``q1_upper``,
        ``m0``, ``m1`` and ``flag``: ``""`` or ``";"``-joined codes from
        ``boundary`` (closed form clipped at 0 or 1: zero-width interval; replaces
        the estimator's BoundaryWarning), ``weakly-identified`` (bayes: the lower
        end of the equal-tailed ``level`` credible interval of q0 + q1 is <= 1, i.e.
        posterior P(q0 + q1 <= 1) >= (1 - level) / 2, so a judge no better than
        chance is plausible) and ``borrowed-calibration`` (bayes, several systems:
        m0 = 0 or m1 = 0 for the system, whose q0/q1 then come from the others).
    """
    from bayesjudge.estimators import BoundaryWarning, lang_reiczigel_interval, wilson_interval

    if not (isinstance(level, (int, float)) and 0.5 < level < 1):
        raise DataValidationError(f"level must lie in (0.5, 1), got {level!r}. "
                                  f"Fix: e.g. level={CI_PROB}.")
    if method not in ("closed-form", "bayes"):
        raise DataValidationError(f"method must be 'closed-form' or 'bayes', got {method!r}.")
    if not by_system:
        for name, table in (("judgments", judgments), ("calibration", calibration)):
            if isinstance(table, pd.DataFrame) and "system" in table.columns \
                    and table["system"].nunique() > 1:
                raise DataValidationError(
                    f"{name}.system holds {table['system'].nunique()} systems "
                    f"({', '.join(map(str, table['system'].unique()[:5]))}); pass --by system "
                    f"for one row per system, or filter the files to one system."
                )
    from bayesjudge.data import validate_misclassification

    counts = validate_misclassification(judgments, calibration, by_system=by_system)
    c = counts.to_frame()
    out = pd.DataFrame({"system": c["system"], "n": c["n"], "naive": c["judged_pos"] / c["n"]})
    flags: list[list[str]] = [[] for _ in range(len(c))]
    if method == "closed-form":
        rows = []
        for i, row in enumerate(c.itertuples(index=False)):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", BoundaryWarning)  # flagged below instead
                    ci = lang_reiczigel_interval(row.judged_pos, row.n, row.tp, row.m1, row.tn,
                                                 row.m0, alpha=1 - level)
            except DataValidationError as exc:
                raise DataValidationError(_closed_form_hint(exc, row, by_system)) from None
            rows.append((ci.estimate, ci.lower, ci.upper))
            if ci.at_boundary:
                flags[i].append("boundary")
        out[["adjusted", "lower", "upper"]] = rows
        out["q0"], out["q1"] = c["tn"] / c["m0"], c["tp"] / c["m1"]
        out["q0_lower"], out["q0_upper"] = wilson_interval(c["tn"].to_numpy(), c["m0"].to_numpy(),
                                                           ci_prob=level)
        out["q1_lower"], out["q1_upper"] = wilson_interval(c["tp"].to_numpy(), c["m1"].to_numpy(),
                                                           ci_prob=level)
    else:
        from bayesjudge.models.misclassification import MisclassificationModel
        from bayesjudge.models.misclassification_hierarchical import (
            HierarchicalMisclassificationModel,
        )

        model = (HierarchicalMisclassificationModel(random_seed=seed) if len(counts) > 1
                 else MisclassificationModel(random_seed=seed))
        model.fit(counts, method="nuts", draws=draws, tune=tune, chains=chains)
        post = model.idata_["posterior"].to_dataset()
        tail = (1 - level) / 2
        draws_of = {}
        for name, var in (("adjusted", "accuracy"), ("q0", "specificity"), ("q1", "sensitivity")):
            x = post[var].values.reshape(-1, len(counts))
            draws_of[name] = x
            lo, hi = np.quantile(x, [tail, 1 - tail], axis=0)
            prefix = "" if name == "adjusted" else f"{name}_"
            out[name] = x.mean(axis=0)
            out[f"{prefix}lower"], out[f"{prefix}upper"] = lo, hi
        youden_lower = np.quantile(draws_of["q0"] + draws_of["q1"], tail, axis=0)
        for i in range(len(c)):
            if youden_lower[i] <= 1:
                flags[i].append("weakly-identified")
            if len(c) > 1 and (c["m0"].iloc[i] == 0 or c["m1"].iloc[i] == 0):
                flags[i].append("borrowed-calibration")
    out["m0"], out["m1"] = c["m0"], c["m1"]
    out["flag"] = [";".join(f) for f in flags]
    cols = ["system", "n", "naive", "adjusted", "lower", "upper", "q0", "q0_lower", "q0_upper",
            "q1", "q1_lower", "q1_upper", "m0", "m1", "flag"]
    return out[cols]


def _closed_form_hint(exc: DataValidationError, row, by_system: bool) -> str:
    where = f"system {row.system!r}: " if by_system else ""
    hint = ""
    if "q0 + q1 <= 1" in str(exc):
        hint = (" In the CSV files, judge_label = 1 and human_label = 1 must both mean "
                "'correct' (a win); --method bayes stays defined here, but its interval "
                "will be wide.")
    elif by_system and (row.m0 == 0 or row.m1 == 0):
        hint = (" With --method bayes the hierarchical model borrows this system's q0, q1 "
                "from the other systems (its row is then flagged).")
    return f"{where}{exc}{hint}"


def _format_report(table: pd.DataFrame, method: str, level: float) -> str:
    pct = f"{100 * level:g}%"
    what = ("closed form: Rogan-Gladen estimate, Lang-Reiczigel interval; Wilson intervals "
            "for q0, q1" if method == "closed-form"
            else "Bayes: posterior means, equal-tailed credible intervals")
    codes = [[f for f in str(flag).split(";") if f] for flag in table["flag"].fillna("")]
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
    if any(codes):
        shown["!"] = ["".join(FLAGS[f][0] for f in fs) for fs in codes]
    lines = [f"misclassification-adjusted accuracy ({what}):", shown.to_string(index=False)]
    present = {f for fs in codes for f in fs}
    lines += [f"{mark} {note}" for flag, (mark, note) in FLAGS.items() if flag in present]
    return "\n".join(lines)


def _cmd_report(args: argparse.Namespace) -> int:
    judgments = read_table(args.judgments, "judgments")
    calibration = read_table(args.calibration, "calibration")
    table = report_table(judgments, calibration, method=args.method, by_system=args.by == "system",
                         level=args.level, draws=args.draws, tune=args.tune, chains=args.chains,
                         seed=args.seed)
    print(_format_report(table, args.method, args.level))
    if args.out:
        table.to_csv(args.out, index=False)
        print(f"wrote {args.out}")
    return 0


# ---------------------------------------------------------------------------- demo


def _cmd_demo(args: argparse.Namespace) -> int:
    from bayesjudge.demo import run_demo

    print(run_demo(out_dir=Path(args.out_dir), n_splits=args.splits, draws=args.draws))
    return 0


# ---------------------------------------------------------------------------- parser


def _add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                        help="show Python tracebacks on errors")


def _add_nuts_options(parser: argparse.ArgumentParser, when: str = "nuts") -> None:
    parser.add_argument("--draws", type=int, default=1000,
                        help=f"NUTS draws per chain, >= {MIN_DRAWS} ({when}; default 1000)")
    parser.add_argument("--tune", type=int, default=1000,
                        help=f"NUTS tuning steps per chain, >= {MIN_TUNE} ({when}; default 1000)")
    parser.add_argument("--chains", type=int, default=4,
                        help=f"NUTS chains, >= 2 ({when}; default 4)")
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
    rep.set_defaults(func=_cmd_report, check=_check_report)

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
                      help=f"NUTS draws and tuning steps per chain, >= {max(MIN_DRAWS, MIN_TUNE)} "
                      f"(default 1000)")
    _add_common(demo)
    demo.set_defaults(func=_cmd_demo, check=_check_demo)
    return parser


# ---------------------------------------------------------------------------- main


def _advice(category: type[Warning], text: str, args: argparse.Namespace) -> str:
    """What the CLI user can do about a library warning (no flag sets priors)."""
    from bayesjudge.estimators import BoundaryWarning
    from bayesjudge.models.misclassification import IdentifiabilityWarning

    if issubclass(category, ConvergenceWarning) and "NUTS" in text:
        if args.command == "demo":
            return f" With the CLI: rerun with a larger --draws (now {args.draws})."
        return (f" With the CLI: rerun with larger --tune and --draws (now {args.tune} and "
                f"{args.draws}) or more --chains (now {args.chains}); if it persists, add "
                f"calibration labels.")
    if issubclass(category, ConvergenceWarning):
        hint = " or try --method nuts" if args.command == "aggregate" else ""
        return f" With the CLI: add calibration labels{hint} (no option sets priors)."
    if issubclass(category, IdentifiabilityWarning):
        return (" With the CLI: add calibration labels of both classes (no option sets "
                "priors); the affected rows are flagged in the table.")
    if issubclass(category, BoundaryWarning):
        return " With the CLI: rerun with --method bayes."
    if "prior" in text.lower():
        return " With the CLI: add calibration labels (no option sets priors)."
    return ""


class _WarningPrinter:
    """``warnings.showwarning`` for a CLI run: one ``warning: ...`` line per message."""

    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.seen: set[str] = set()

    def __call__(self, message, category, filename, lineno, file=None, line=None):
        text = one_line(message)
        text += _advice(category, text, self.args)
        if text not in self.seen:
            self.seen.add(text)
            print(f"warning: {text}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """Run ``bayesjudge`` with ``argv`` (default ``sys.argv[1:]``); returns the exit status.

    0 success, 2 user error (bad argument, output path or input file, invalid
    table), 1 a failed fit or an internal error, 130 interrupted. Errors print one
    line on stderr; ``--debug`` re-raises them with their traceback.
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
        warnings.showwarning = _WarningPrinter(args)
        try:
            args.check(args)  # every argument and output path, before any work
            return args.func(args)
        except (UsageError, DataValidationError) as exc:
            if args.debug:
                raise
            print(f"error: {one_line(exc)}", file=sys.stderr)
            return 2
        except FitError as exc:
            if args.debug:
                raise
            print(f"error: the fit failed: {one_line(exc)}", file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            print("error: interrupted", file=sys.stderr)
            return 130
        except Exception as exc:  # a bug: say so, in one line unless --debug
            if args.debug:
                raise
            where = traceback.extract_tb(exc.__traceback__)[-1]
            print(f"error: internal error {type(exc).__name__}: {one_line(exc)} (at "
                  f"{Path(where.filename).name}:{where.lineno}); rerun with --debug for the "
                  f"traceback and please report it.", file=sys.stderr)
            return 1


if __name__ == "__main__":
    sys.exit(main())
