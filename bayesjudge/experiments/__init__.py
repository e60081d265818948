"""Experiment protocols, one folder (or module) per protocol, on any table of the right schema.

* :mod:`~bayesjudge.experiments.calibration` -- the calibration-split protocol,
  leave-one-rater-out and the top-cluster significance test of Dadkhahi, Trabelsi,
  Riley, Juraska, Mirzazadeh et al. (2025), "Distribution-Calibrated Inference Time
  Compute for Thinking LLM-as-a-Judge", arXiv:2512.03019, Section 5;
* :mod:`~bayesjudge.experiments.misclassification` -- the Monte Carlo studies and the
  real-data protocol (any table ``system, item, judge_label, human_label`` [``judge``];
  PandaLM is one data set) of Lee, Zeng, Jeong, Sohn & Lee (2025), "How to Correctly
  Report LLM-as-a-Judge Evaluations", arXiv:2511.21140, Sections 7-8;
* :mod:`~bayesjudge.experiments.anchored_ranking` -- rank sets from a few human votes and
  LLM judges on arena_ppr, scored against the human ranking (the protocol of Chatzi,
  Straitouri, Thejaswi & Gomez-Rodriguez 2024, arXiv:2402.17826, Section 5);
* :mod:`~bayesjudge.experiments.jury` -- simulated juries scored against their truth,
  after Qian, Sun, Gales & Knill (2026), arXiv:2602.16610, Sections 3-4.

Every study runs its tasks through :func:`~bayesjudge.experiments.runner.run_tasks`:
``executor=None`` (in-process), ``"joblib"`` or a ``dask.distributed.Client``.
"""

from bayesjudge.experiments.anchored_ranking import (
    RankSetStudy,
    crowd_rank_set_study,
    davidson_rank_sets,
    ppr_rank_sets,
    rank_set_study,
)
from bayesjudge.experiments.calibration import (
    BUILTIN_METHODS,
    Split,
    SplitProtocolResult,
    calibration_splits,
    leave_one_rater_out,
    rounded_median_from_counts,
    split_protocol,
)
from bayesjudge.experiments.calibration.significance import (
    PermutationTestResult,
    TopClusterResult,
    paired_permutation_test,
    top_cluster,
)
from bayesjudge.experiments.jury import JuryStudy, jury_simulation_study
from bayesjudge.experiments.misclassification import (
    MisclassificationStudy,
    PandaLMMisclassificationStudy,
    distribution_shift_study,
    misclassification_monte_carlo,
    misclassification_study,
    pandalm_misclassification_study,
    pandalm_misclassification_table,
)
from bayesjudge.experiments.runner import run_tasks, task_seeds

__all__ = [
    "BUILTIN_METHODS",
    "JuryStudy",
    "MisclassificationStudy",
    "PandaLMMisclassificationStudy",
    "PermutationTestResult",
    "RankSetStudy",
    "Split",
    "SplitProtocolResult",
    "TopClusterResult",
    "calibration_splits",
    "crowd_rank_set_study",
    "davidson_rank_sets",
    "distribution_shift_study",
    "jury_simulation_study",
    "leave_one_rater_out",
    "misclassification_monte_carlo",
    "misclassification_study",
    "paired_permutation_test",
    "pandalm_misclassification_study",
    "pandalm_misclassification_table",
    "ppr_rank_sets",
    "rank_set_study",
    "rounded_median_from_counts",
    "run_tasks",
    "split_protocol",
    "task_seeds",
    "top_cluster",
]
