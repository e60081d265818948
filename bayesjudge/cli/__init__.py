"""The ``bayesjudge`` command: the models on CSV files, and a demo on shipped data.

Subcommands
-----------
aggregate  Calibrate the Davidson aggregator on labelled items and decide every item.
report     Bias-adjusted accuracy (win rate) of an LLM judge's verdicts, with intervals.
rank       Rank items from pairwise judgments of several judges (BT, BT-sigma, Davidson),
           with each judge's reliability.
calibrate  Recalibrate a probabilistic judge's P(B better) (temperature, contextual or
           batch calibration), with the metric table before and after.
metrics    The metric table of a probabilistic judge against human labels, with
           intervals and the noise-corrected alignment error.
demo       Run the calibrated aggregator on the shipped PandaLM judgments.

Contract (CONTRIBUTING.md): every argument and output path is checked before any
file is read or model fitted; a user error (bad argument, unreadable file, invalid
table) prints one line ``error: ...`` on stderr and exits with status 2, without a
traceback unless ``--debug`` is given; a warning prints one line ``warning: ...``.
Id columns are read as text and written back exactly as given.

Modules: :mod:`~bayesjudge.cli.files` (input files, output paths),
:mod:`~bayesjudge.cli.report` (the report table), :mod:`~bayesjudge.cli.rank`
(``rank``), :mod:`~bayesjudge.cli.calibrate` (``calibrate``),
:mod:`~bayesjudge.cli.scoring` (``metrics`` and the tables both share),
:mod:`~bayesjudge.cli.app` (parser, checks, ``main``), :mod:`~bayesjudge.cli.messages` (the
library's messages in the command's words).

References: the aggregator follows Dadkhahi et al. (2025), Distribution-Calibrated
Inference Time Compute for Thinking LLM-as-a-Judge, arXiv:2512.03019; the report
follows Lee, Zeng, Jeong, Sohn & Lee (2025), How to Correctly Report LLM-as-a-Judge
Evaluations, arXiv:2511.21140; rank follows Qian, Sun, Gales & Knill (2026), Who can
we trust? LLM-as-a-jury for Comparative Assessment, arXiv:2602.16610; calibrate and
metrics follow Li, Li, Huang et al. (2025), Judging with Confidence: Calibrating
Autoraters to Preference Distributions, arXiv:2510.00263.
"""

from bayesjudge.cli.app import build_parser, main, run
from bayesjudge.cli.files import UsageError, read_table
from bayesjudge.cli.report import report_table

__all__ = ["UsageError", "build_parser", "main", "read_table", "report_table", "run"]
