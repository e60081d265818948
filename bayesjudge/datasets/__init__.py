"""Loaders for the real data shipped with bayesjudge, and simulators with known truth.

The loaders read the *upstream* file formats (nothing pre-digested) and return the
package's long tables (see the data contracts in CONTRIBUTING.md):

* :mod:`~bayesjudge.datasets.wmt23`: WMT23 zh-en side-by-side MQM ratings (Google's
  ``wmt-mqm-human-evaluation``) become per-rater MQM penalties and ternary
  system-vs-system preferences, the input of the Davidson aggregator of Dadkhahi,
  Trabelsi, Riley, Juraska, Mirzazadeh et al. (2025), "Distribution-Calibrated
  Inference Time Compute for Thinking LLM-as-a-Judge", arXiv:2512.03019 (Section 5),
  and of leave-one-rater-out comparisons;
* :mod:`~bayesjudge.datasets.pandalm`: the PandaLM test set (three human annotators,
  GPT-3.5-turbo and PandaLM-7B verdicts) becomes votes, labels and binary judgments
  for the misclassification model of Lee, Zeng, Jeong, Sohn & Lee (2025), "How to
  Correctly Report LLM-as-a-Judge Evaluations", arXiv:2511.21140 (Section 3);
* :mod:`~bayesjudge.datasets.simulate`: simulators whose generating parameters are
  exactly the parameters of those models (Dadkhahi et al. (2025), eqs. 2-4; Lee et
  al. (2025), eqs. 1 and 3). Every simulator takes one ``random_seed`` and never
  touches global RNG state.

Files are found by :func:`~bayesjudge.datasets.files.resolve_data_file`.
"""

from bayesjudge.datasets.pandalm import (
    PANDALM_FILES,
    PANDALM_JUDGES,
    load_pandalm,
    pandalm_judgments,
    pandalm_labels,
    pandalm_votes,
)
from bayesjudge.datasets.simulate import simulate_davidson_votes, simulate_misclassification
from bayesjudge.datasets.wmt23 import (
    MQM_WEIGHTS,
    WMT23_SXS_FILE,
    load_wmt23_sxs,
    wmt23_preferences,
)

__all__ = [
    "MQM_WEIGHTS",
    "PANDALM_FILES",
    "PANDALM_JUDGES",
    "WMT23_SXS_FILE",
    "load_pandalm",
    "load_wmt23_sxs",
    "pandalm_judgments",
    "pandalm_labels",
    "pandalm_votes",
    "simulate_davidson_votes",
    "simulate_misclassification",
    "wmt23_preferences",
]
