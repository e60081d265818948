"""``bayesjudge report``: the misclassification-adjusted accuracy table.

Follows Lee, Zeng, Jeong, Sohn & Lee (2025), How to Correctly Report
LLM-as-a-Judge Evaluations, arXiv:2511.21140: the Rogan-Gladen estimate with the
Lang-Reiczigel interval (closed form), or the posterior of the (hierarchical)
misclassification model; rows whose numbers need care are flagged.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from typing import TYPE_CHECKING

from bayesjudge.cli.files import FILES_HELP, read_table, write_csv
from bayesjudge.constants import CI_PROB
from bayesjudge.data.messages import DataValidationError

if TYPE_CHECKING:
    import pandas as pd

PCT = f"{100 * CI_PROB:g}%"

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
    clipped               (printed ^) closed form: the Rogan-Gladen value (eq. 5) lies
                          outside [0, 1] and the estimate is clipped to the end, while
                          the interval still has width; use --method bayes.
    weakly-identified     (printed ?) bayes: q0 + q1 <= 1 is plausible (the lower
                          end of the credible interval of q0 + q1 is <= 1), so
                          the judge may be no better than chance.
    calibration-conflict  (printed x) both methods: the test items' judged rate lies
                          outside [1 - q0, q1], what the calibrated judge can produce
                          at any accuracy (likelihood ratio, p < 0.001): the judge
                          behaved differently on the test items; no interval holds.
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
""" % {"pct": PCT, "files": FILES_HELP}

FLAGS = {  # CSV flag -> (printed mark, footnote)
    "boundary": (
        "!", "estimate at the boundary of [0, 1]: the closed-form interval has zero width "
        "and is not a valid uncertainty statement; rerun with --method bayes."
    ),
    "clipped": (
        "^", "the Rogan-Gladen value (eq. 5) lies outside [0, 1] (the judged rate is beyond "
        "the calibrated judge's range [1 - q0, q1]), so the estimate is clipped to the end of "
        "[0, 1]; rerun with --method bayes for an estimate and interval inside [0, 1]."
    ),
    "weakly-identified": (
        "?", "q0 + q1 <= 1 is plausible under the posterior (its credible interval reaches "
        "1): the judge may be no better than chance and the estimate is weakly identified; "
        "add calibration labels."
    ),
    "calibration-conflict": (
        "x", "the judged rate lies outside [1 - q0, q1], what the calibrated judge can "
        "produce at any accuracy (p < 0.001): the judge behaved differently on the test "
        "items than on the calibration items; neither interval can be trusted."
    ),
    "borrowed-calibration": (
        "*", "no calibration items of its own with human_label 0 or 1 (m0 = 0 or m1 = 0): "
        "its q0/q1 are borrowed from the other systems; label calibration items for it."
    ),
}


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
    cores: int | None = None,
    progressbar: bool = False,
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
    draws, tune, chains, seed, cores, progressbar
        NUTS settings (``method="bayes"``).

    Returns
    -------
    pandas.DataFrame
        Columns ``system``, ``n``, ``naive``, ``adjusted``, ``lower``, ``upper``,
        ``q0``, ``q0_lower``, ``q0_upper``, ``q1``, ``q1_lower``, ``q1_upper``,
        ``m0``, ``m1`` and ``flag``: ``""`` or ``";"``-joined codes from
        ``boundary`` (closed form clipped at 0 or 1: zero-width interval; replaces
        the estimator's BoundaryWarning), ``clipped`` (closed form: eq. 5 outside [0, 1],
        the estimate clipped to the end, the interval of non-zero width),
        ``weakly-identified`` (bayes: the lower
        end of the equal-tailed ``level`` credible interval of q0 + q1 is <= 1, i.e.
        posterior P(q0 + q1 <= 1) >= (1 - level) / 2, so a judge no better than
        chance is plausible) and ``borrowed-calibration`` (bayes, several systems:
        m0 = 0 or m1 = 0 for the system, whose q0/q1 then come from the others).
    """
    if not (isinstance(level, (int, float)) and 0.5 < level < 1):
        raise DataValidationError(f"level must lie in (0.5, 1), got {level!r}. "
                                  f"Fix: e.g. level={CI_PROB}.")
    # imported here, not at the top: `bayesjudge --help` and argument errors need no PyMC
    # (nor numpy or pandas)
    import numpy as np
    import pandas as pd

    from bayesjudge.data import validate_misclassification
    from bayesjudge.estimators import (
        BoundaryWarning,
        lang_reiczigel_interval,
        rogan_gladen,
        wilson_interval,
    )
    from bayesjudge.models.misclassification import (
        HierarchicalMisclassificationModel,
        MisclassificationModel,
    )
    from bayesjudge.models.misclassification.checks import CONFLICT_LR, conflict_statistic

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
            raw = rogan_gladen(row.judged_pos, row.n, row.tp, row.m1, row.tn, row.m0,
                               clip=False)
            if ci.at_boundary:
                flags[i].append("boundary")
            elif not 0 <= raw <= 1:
                flags[i].append("clipped")
        out[["adjusted", "lower", "upper"]] = rows
        out["q0"], out["q1"] = c["tn"] / c["m0"], c["tp"] / c["m1"]
        out["q0_lower"], out["q0_upper"] = wilson_interval(c["tn"].to_numpy(), c["m0"].to_numpy(),
                                                           ci_prob=level)
        out["q1_lower"], out["q1_upper"] = wilson_interval(c["tp"].to_numpy(), c["m1"].to_numpy(),
                                                           ci_prob=level)
    else:
        model = (HierarchicalMisclassificationModel(random_seed=seed) if len(counts) > 1
                 else MisclassificationModel(random_seed=seed))
        model.fit(counts, method="nuts", draws=draws, tune=tune, chains=chains, cores=cores,
                  progressbar=progressbar)
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
    conflict = conflict_statistic(counts)  # each system against its own calibration
    for i in np.flatnonzero(conflict > CONFLICT_LR):
        flags[i].append("calibration-conflict")
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


def format_report(table: pd.DataFrame, method: str, level: float) -> str:
    """The printed table: rounded numbers, a ``!`` column of marks and their footnotes."""
    import pandas as pd

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


def run_report(args: argparse.Namespace) -> int:
    """``bayesjudge report`` once its arguments are checked."""
    from bayesjudge.data.lookalikes import warn_near_matches

    judgments = read_table(args.judgments, "judgments")
    calibration = read_table(args.calibration, "calibration")
    for col, fix in (("system", "write each system the same way in both files"),
                     ("item", "if they are the same item, remove it from one file (test and "
                      "calibration items must differ, or its judge label counts twice)")):
        if col in judgments.columns and col in calibration.columns:
            warn_near_matches(judgments[col], f"judgments.{col}", calibration[col],
                              f"calibration.{col}", fix=fix)
    table = report_table(judgments, calibration, method=args.method, by_system=args.by == "system",
                         level=args.level, draws=args.draws, tune=args.tune, chains=args.chains,
                         seed=args.seed, cores=args.cores, progressbar=sys.stderr.isatty())
    if args.out:  # before printing: `| head` may close stdout
        write_csv(table, args.out)
    print(format_report(table, args.method, args.level))
    if args.out:
        print(f"wrote {args.out}")
    return 0
