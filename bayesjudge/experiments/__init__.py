"""Experiment protocols: calibration splits, significance, Monte Carlo studies.

* calibration-split protocol and leave-one-rater-out of Dadkhahi, Trabelsi, Riley,
  Juraska, Mirzazadeh et al. (2025), "Distribution-Calibrated Inference Time Compute
  for Thinking LLM-as-a-Judge", arXiv:2512.03019, Section 5
  (:mod:`~bayesjudge.experiments.calibration`);
* paired permutation tests and top clusters (:mod:`~bayesjudge.experiments.significance`);
* the PandaLM misclassification study after Lee, Zeng, Jeong, Sohn & Lee (2025), "How
  to Correctly Report LLM-as-a-Judge Evaluations", arXiv:2511.21140, Section 8.2
  (:mod:`~bayesjudge.experiments.pandalm_misclassification`).
"""

from bayesjudge.experiments.calibration import (
    BUILTIN_METHODS,
    Split,
    SplitProtocolResult,
    calibration_splits,
    leave_one_rater_out,
    rounded_median_from_counts,
    split_protocol,
)
from bayesjudge.experiments.pandalm_misclassification import (
    PandaLMMisclassificationStudy,
    pandalm_misclassification_study,
)
from bayesjudge.experiments.significance import (
    PermutationTestResult,
    TopClusterResult,
    paired_permutation_test,
    top_cluster,
)

__all__ = [
    "BUILTIN_METHODS",
    "PandaLMMisclassificationStudy",
    "PermutationTestResult",
    "Split",
    "SplitProtocolResult",
    "TopClusterResult",
    "calibration_splits",
    "leave_one_rater_out",
    "paired_permutation_test",
    "pandalm_misclassification_study",
    "rounded_median_from_counts",
    "split_protocol",
    "top_cluster",
]
