"""What the library's warnings and errors say on the command line.

The library's messages give Python advice (``method='nuts'``, ``df.drop(...)``);
:func:`cli_words` puts it in the command's options, :func:`advice` adds what the command
line can do about a warning, and :class:`WarningPrinter` prints each warning once as one
``warning: ...`` line (``bayesjudge.cli.app.main``).
"""

from __future__ import annotations

import argparse
import re
import sys

from bayesjudge.cli.files import one_line
from bayesjudge.engine.messages import NOT_CONVERGED_ADVICE, ConvergenceWarning

# what more data means for each command (the fix for a weakly identified fit)
_MORE_DATA = {"rank": "comparisons", "metrics": "annotations", "calibrate": "labelled items"}
_FULL_POSTERIOR = {"aggregate": "--method nuts", "rank": "--method nuts",
                   "calibrate": "--inference nuts"}


def advice(category: type[Warning], text: str, args: argparse.Namespace) -> str:
    """What the CLI user can do about a library warning (no flag sets priors)."""
    from bayesjudge.estimators import BoundaryWarning  # (imported by the command that warned)
    from bayesjudge.models.misclassification.model import IdentifiabilityWarning

    data = _MORE_DATA.get(args.command, "calibration labels")
    if issubclass(category, ConvergenceWarning) and "NUTS" in text:
        if args.command == "demo":
            return f" With the CLI: rerun with a larger --draws (now {args.draws})."
        return (f" With the CLI: rerun with larger --tune and --draws (now {args.tune} and "
                f"{args.draws}) or more --chains (now {args.chains}); if it persists, add "
                f"{data}.")
    if issubclass(category, ConvergenceWarning):
        full = _FULL_POSTERIOR.get(args.command)
        hint = f" or try {full}" if full and getattr(args, "method", "") != "nuts" else ""
        return f" With the CLI: add {data}{hint} (no option sets priors)."
    if issubclass(category, IdentifiabilityWarning):
        return (" With the CLI: add calibration labels of both classes (no option sets "
                "priors); the affected rows are flagged in the table.")
    if issubclass(category, BoundaryWarning):
        return " With the CLI: rerun with --method bayes."
    if "prior" in text.lower():
        return f" With the CLI: add {data} (no option sets priors)."
    return ""


#: The library's Python advice in its messages, as the command line's options say it.
_CLI_WORDS = (
    ("refit with method='nuts', or with the default priors (priors=None) if you set others.",
     "rerun with {nuts}."),
    # the MAP warning's Python advice: the CLI's own advice follows (advice)
    (NOT_CONVERGED_ADVICE, ""),
    ("Read summarize()'s means for point values, or refit with method='nuts'.",
     "Rerun with {nuts} for point values from the whole posterior."),
    ("Refit with method='nuts'", "Rerun with {nuts}"),
    ("refit with method='nuts'", "rerun with {nuts}"),
    ("Fix: pass one of them as reference=", "Fix: pass one of them with --reference"),
    ("Fix: map your labels (", "Fix: map your labels with --outcomes LABEL=OUTCOME,... ("),
    ("Fix: map your labels, e.g. {'A': 'left', 'B': 'right', 'draw': 'tie'}.",
     "Fix: map your labels with --outcomes, e.g. --outcomes A=left,B=right,draw=tie."),
    ("Fix: pass levels=[...] with your labels in that order",
     "Fix: pass --levels with your labels in that order (comma-separated)"),
    ("but per_aspect=True asks for one", "but --per-aspect asks for one"),
    ("Fix: add the aspect column or use per_aspect=False.",
     "Fix: add the aspect column or drop --per-aspect."),
    ("(per_aspect=True)", "(--per-aspect)"),
    ("or per_aspect=False.", "or drop --per-aspect."),
    ("Rename your columns to", "Rename your columns{columns} to"),
    # the unused-column warning's pandas code: on the command line they are just ignored
    (re.compile(r"or drop the others \((df\.drop\(columns=\[.*?\]\)|df\[\[.*?\]\])\)"),
     "{unused}"),
)
#: only ``rank`` maps columns (``--columns``); the other commands' files name them as documented
_COLUMNS = {"rank": (" (or map them with --columns THEIRS=ROLE,...)",
                     "or map it with --columns THEIRS=ROLE; the others are ignored")}


def cli_words(text: str, command: str | None = None) -> str:
    nuts = _FULL_POSTERIOR.get(command, "--method nuts")
    columns, unused = _COLUMNS.get(command, ("", "otherwise it is ignored"))
    for python, cli in _CLI_WORDS:
        cli = cli.replace("{nuts}", nuts).replace("{columns}", columns).replace(
            "{unused}", unused)
        text = python.sub(cli, text) if isinstance(python, re.Pattern) else text.replace(
            python, cli)
    return text


class WarningPrinter:
    """``warnings.showwarning`` for a CLI run: one ``warning: ...`` line per message."""

    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.seen: set[str] = set()

    def __call__(self, message, category, filename, lineno, file=None, line=None):
        text = cli_words(one_line(message), self.args.command)
        text += advice(category, text, self.args)
        if text not in self.seen:
            self.seen.add(text)
            print(f"warning: {text}", file=sys.stderr)
