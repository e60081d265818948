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
  Correctly Report LLM-as-a-Judge Evaluations", arXiv:2511.21140 (Section 3), and the
  battle table of :class:`~bayesjudge.AnchoredBT` (``pandalm_battles``: the three
  annotators as a human crowd, the LLM judges' verdicts beside them);
* :mod:`~bayesjudge.datasets.simulate`: simulators whose generating parameters are
  exactly the parameters of those models (Dadkhahi et al. (2025), eqs. 2-4; Lee et
  al. (2025), eqs. 1 and 3). Every simulator takes one ``random_seed`` and never
  touches global RNG state.
* :mod:`~bayesjudge.datasets.summeval`, :mod:`~bayesjudge.datasets.topical_chat`:
  human scores of SummEval and Topical-Chat (with UniEval as one real judge), the
  ground truth of Qian, Sun, Gales & Knill (2026), "Who can we trust? LLM-as-a-jury
  for Comparative Assessment", arXiv:2602.16610;
* :mod:`~bayesjudge.datasets.preferences`: PandaLM and WMT23 zh-en as annotations
  (preference distributions) and judge outputs for Li, Li, Huang et al. (2025),
  "Judging with Confidence: Calibrating Autoraters to Preference Distributions",
  arXiv:2510.00263; :mod:`~bayesjudge.datasets.simulate_autorater`: probabilistic
  judges of stated miscalibration against a known p*;
* :mod:`~bayesjudge.datasets.juries`: PandaLM and WMT23 zh-en as real juries in the
  comparisons table; :mod:`~bayesjudge.datasets.simulate_jury`: judges of stated
  reliability, positional bias and sparse designs on top of real human scores.
* :mod:`~bayesjudge.datasets.arena`, :mod:`~bayesjudge.datasets.llmfao_crowd`,
  :mod:`~bayesjudge.datasets.position_bias`: Chatbot Arena battles judged by their
  human voter and three LLMs (Chatzi et al. (2024), "Prediction-Powered Ranking of
  Large Language Models", arXiv:2402.17826), LLMFAO's crowd votes and LLM-judge
  verdicts, and the repeated, order-swapped judge votes of Shi et al. (2024),
  "Judging the Judges", arXiv:2406.07791, as comparisons, annotations and votes.

Files are found by :func:`~bayesjudge.datasets.files.resolve_data_file`.
"""

from bayesjudge.datasets.arena import (
    ARENA_PPR_JUDGES,
    ARENA_WINNERS,
    arena_ppr,
    arena_ppr_export,
)
from bayesjudge.datasets.juries import PANDALM_JURY, pandalm_jury, wmt23_jury
from bayesjudge.datasets.llmfao_crowd import (
    LLMFAO_JUDGES,
    llmfao,
    llmfao_annotations,
    llmfao_items,
    llmfao_judge_labels,
    llmfao_votes,
)
from bayesjudge.datasets.pandalm import (
    PANDALM_FILES,
    PANDALM_JUDGES,
    load_pandalm,
    pandalm_battles,
    pandalm_judgments,
    pandalm_labels,
    pandalm_votes,
)
from bayesjudge.datasets.position_bias import (
    POSITION_BIAS_BENCHMARKS,
    position_bias_rep,
    position_bias_rep_winrates,
)
from bayesjudge.datasets.preferences import (
    pandalm_annotations,
    pandalm_judge_outputs,
    wmt23_annotations,
)
from bayesjudge.datasets.simulate import simulate_davidson_votes, simulate_misclassification
from bayesjudge.datasets.simulate_autorater import SimulatedAutorater, simulate_autorater
from bayesjudge.datasets.simulate_jury import simulate_jury
from bayesjudge.datasets.summeval import SUMMEVAL_ASPECTS, SUMMEVAL_FILE, load_summeval
from bayesjudge.datasets.topical_chat import (
    TOPICAL_CHAT_ASPECTS,
    TOPICAL_CHAT_DIMENSIONS,
    TOPICAL_CHAT_FILE,
    load_topical_chat,
    topical_chat_unieval_judge,
)
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
    "pandalm_battles",
    "load_wmt23_sxs",
    "pandalm_judgments",
    "pandalm_labels",
    "pandalm_votes",
    "simulate_davidson_votes",
    "simulate_misclassification",
    "wmt23_preferences",
    "PANDALM_JURY",
    "SUMMEVAL_ASPECTS",
    "SUMMEVAL_FILE",
    "TOPICAL_CHAT_ASPECTS",
    "TOPICAL_CHAT_DIMENSIONS",
    "TOPICAL_CHAT_FILE",
    "load_summeval",
    "load_topical_chat",
    "pandalm_jury",
    "simulate_jury",
    "topical_chat_unieval_judge",
    "wmt23_jury",
    "SimulatedAutorater",
    "pandalm_annotations",
    "pandalm_judge_outputs",
    "simulate_autorater",
    "wmt23_annotations",
    "ARENA_PPR_JUDGES",
    "ARENA_WINNERS",
    "LLMFAO_JUDGES",
    "POSITION_BIAS_BENCHMARKS",
    "arena_ppr",
    "arena_ppr_export",
    "llmfao",
    "llmfao_annotations",
    "llmfao_items",
    "llmfao_judge_labels",
    "llmfao_votes",
    "position_bias_rep",
    "position_bias_rep_winrates",
]
