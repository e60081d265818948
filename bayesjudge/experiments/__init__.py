"""Experiment protocols: calibration splits, significance, Monte Carlo studies.

* calibration-split protocol and leave-one-rater-out of Dadkhahi, Trabelsi, Riley,
  Juraska, Mirzazadeh et al. (2025), "Distribution-Calibrated Inference Time Compute
  for Thinking LLM-as-a-Judge", arXiv:2512.03019, Section 5
  (:mod:`~bayesjudge.experiments.calibration`);
* paired permutation tests and top clusters (:mod:`~bayesjudge.experiments.significance`);
* the misclassification study after Lee, Zeng, Jeong, Sohn & Lee (2025), "How to
  Correctly Report LLM-as-a-Judge Evaluations", arXiv:2511.21140, Section 8.2, on any
  table ``system, item, judge_label, human_label`` [``judge``]
  (:mod:`~bayesjudge.experiments.misclassification_study`; PandaLM is one data set:
  :mod:`~bayesjudge.experiments.pandalm_misclassification`).

Every study runs its tasks through :func:`~bayesjudge.experiments.runner.run_tasks`:
``executor=None`` (in-process), ``"joblib"`` or a ``dask.distributed.Client``.
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
from bayesjudge.experiments.jury_study import JuryStudy, jury_simulation_study
from bayesjudge.experiments.misclassification import (
    distribution_shift_study,
    misclassification_monte_carlo,
)
from bayesjudge.experiments.misclassification_study import (
    MisclassificationStudy,
    misclassification_study,
)
from bayesjudge.experiments.pandalm_misclassification import (
    PandaLMMisclassificationStudy,
    pandalm_misclassification_study,
    pandalm_misclassification_table,
)
from bayesjudge.experiments.runner import run_tasks, task_seeds
from bayesjudge.experiments.significance import (
    PermutationTestResult,
    TopClusterResult,
    paired_permutation_test,
    top_cluster,
)

__all__ = [
    "BUILTIN_METHODS",
    "JuryStudy",
    "MisclassificationStudy",
    "PandaLMMisclassificationStudy",
    "PermutationTestResult",
    "Split",
    "SplitProtocolResult",
    "TopClusterResult",
    "calibration_splits",
    "distribution_shift_study",
    "jury_simulation_study",
    "leave_one_rater_out",
    "misclassification_monte_carlo",
    "misclassification_study",
    "paired_permutation_test",
    "pandalm_misclassification_study",
    "pandalm_misclassification_table",
    "rounded_median_from_counts",
    "run_tasks",
    "split_protocol",
    "task_seeds",
    "top_cluster",
]
