"""Misclassification-adjusted reporting: the protocols of Lee, Zeng, Jeong, Sohn & Lee (2025).

"How to Correctly Report LLM-as-a-Judge Evaluations", arXiv:2511.21140:

* :mod:`~bayesjudge.experiments.misclassification.monte_carlo` with its replication
  chunks in :mod:`~bayesjudge.experiments.misclassification.tasks` -- the simulations of
  Section 8.1 / Figure 6 and Section 7 / Figure 5;
* :mod:`~bayesjudge.experiments.misclassification.study` with its table, truth, splits
  and result in :mod:`~bayesjudge.experiments.misclassification.result` -- the
  calibration-split protocol of Section 8.2 on any judgments table;
* :mod:`~bayesjudge.experiments.misclassification.pandalm` with its data in
  :mod:`~bayesjudge.experiments.misclassification.pandalm_data` -- that protocol on PandaLM.
"""

from bayesjudge.experiments.misclassification.monte_carlo import (
    distribution_shift_study,
    misclassification_monte_carlo,
)
from bayesjudge.experiments.misclassification.pandalm import (
    PandaLMMisclassificationStudy,
    pandalm_misclassification_study,
    pandalm_misclassification_table,
)
from bayesjudge.experiments.misclassification.study import (
    MisclassificationStudy,
    misclassification_study,
)

__all__ = [
    "MisclassificationStudy",
    "PandaLMMisclassificationStudy",
    "distribution_shift_study",
    "misclassification_monte_carlo",
    "misclassification_study",
    "pandalm_misclassification_study",
    "pandalm_misclassification_table",
]
