"""Calibration-split protocol and leave-one-rater-out comparison of the Davidson aggregator.

The experimental protocol of Section 5 of Dadkhahi, Trabelsi, Riley, Juraska,
Mirzazadeh et al. (2025), "Distribution-Calibrated Inference Time Compute for
Thinking LLM-as-a-Judge", arXiv:2512.03019, split along its seams:

* :mod:`bayesjudge.experiments.calibration.splits` draws the random calibration / evaluation
  splits (:func:`calibration_splits`, :class:`Split`);
* :mod:`bayesjudge.experiments.calibration.fits` fits the aggregator on every split,
  in-process or in ``joblib`` workers, redrawing or skipping failed fits;
* :mod:`bayesjudge.experiments.calibration.protocol` scores it and the baselines on the
  same evaluation items (:func:`split_protocol`, Figure 2, Tables 3-4), with the
  result type in :mod:`bayesjudge.experiments.calibration.result`;
* :mod:`bayesjudge.experiments.calibration.significance` finds the top cluster of
  methods by paired permutation tests (the bold entries of Tables 3-4);
* :mod:`bayesjudge.experiments.calibration.leave_one_out` compares each human rater with the
  calibrated judge (:func:`leave_one_rater_out`, Table 5).

This package re-exports their public names.
"""

from bayesjudge.experiments.calibration.fits import OnFailure, SplitRun
from bayesjudge.experiments.calibration.leave_one_out import leave_one_rater_out
from bayesjudge.experiments.calibration.protocol import (
    BUILTIN_METHODS,
    rounded_median_from_counts,
    split_protocol,
)
from bayesjudge.experiments.calibration.result import SplitProtocolResult
from bayesjudge.experiments.calibration.splits import Split, calibration_splits
from bayesjudge.experiments.runner import Seed

__all__ = [
    "BUILTIN_METHODS",
    "OnFailure",
    "Seed",
    "Split",
    "SplitProtocolResult",
    "SplitRun",
    "calibration_splits",
    "leave_one_rater_out",
    "rounded_median_from_counts",
    "split_protocol",
]
