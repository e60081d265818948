"""Calibration-split protocol and leave-one-rater-out comparison of the Davidson aggregator.

The experimental protocol of Section 5 of Dadkhahi, Trabelsi, Riley, Juraska,
Mirzazadeh et al. (2025), "Distribution-Calibrated Inference Time Compute for
Thinking LLM-as-a-Judge", arXiv:2512.03019, split along its seams:

* :mod:`bayesjudge.experiments.splits` draws the random calibration / evaluation
  splits (:func:`calibration_splits`, :class:`Split`);
* :mod:`bayesjudge.experiments.split_runner` fits the aggregator on every split,
  in-process or in ``joblib`` workers, redrawing or skipping failed fits;
* :mod:`bayesjudge.experiments.split_protocol` scores it and the baselines on the
  same evaluation items (:func:`split_protocol`, Figure 2, Tables 3-4), with the
  result type in :mod:`bayesjudge.experiments.split_result`;
* :mod:`bayesjudge.experiments.leave_one_out` compares each human rater with the
  calibrated judge (:func:`leave_one_rater_out`, Table 5).

This module re-exports their public names, so ``bayesjudge.experiments.calibration``
keeps working as an import path.
"""

from bayesjudge.experiments.leave_one_out import leave_one_rater_out
from bayesjudge.experiments.split_protocol import (
    BUILTIN_METHODS,
    rounded_median_from_counts,
    split_protocol,
)
from bayesjudge.experiments.split_result import SplitProtocolResult
from bayesjudge.experiments.split_runner import OnFailure, SplitRun
from bayesjudge.experiments.splits import Seed, Split, calibration_splits

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
