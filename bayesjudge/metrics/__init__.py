"""Meta-evaluation metrics: pure, vectorised functions.

* :mod:`~bayesjudge.metrics.votes` -- MAE and pairwise accuracy on ordinal labels
  (Dadkhahi et al. 2025, arXiv:2512.03019).
* :mod:`~bayesjudge.metrics.calibration`, :mod:`~bayesjudge.metrics.positional`,
  :mod:`~bayesjudge.metrics.intervals`, :mod:`~bayesjudge.metrics.table` -- probabilistic
  judges: MSE to p-hat, agreement, macro P/R/F1, ECE, Brier, swap consistency, symmetry
  deviation, bootstrap intervals, the per-judge metric table and win-rate prediction
  (Li, Li, Huang et al. 2025, arXiv:2510.00263).
* :mod:`~bayesjudge.metrics.ranking` -- cycle inconsistency rate, per-context Spearman
  (SRC) and reliability correlations of the LLM-as-a-jury setting (Qian, Sun, Gales &
  Knill 2026, arXiv:2602.16610).
"""

from bayesjudge.metrics.calibration import (
    PRF,
    TERNARY_LABELS,
    agreement,
    brier_score,
    expected_calibration_error,
    macro_prf,
    mse_to_phat,
    predicted_label,
)
from bayesjudge.metrics.intervals import Difference, bootstrap_interval, compare_judges
from bayesjudge.metrics.positional import (
    absolute_symmetry_deviation,
    swap_consistency,
    symmetry_deviation,
)
from bayesjudge.metrics.ranking import (
    comparison_probs,
    cycle_rate,
    reliability_correlation,
    spearman_per_context,
)
from bayesjudge.metrics.table import (
    TABLE_METRICS,
    metric_table,
    predicted_win_rate,
    reference_labels,
)
from bayesjudge.metrics.votes import mae, pairwise_accuracy

__all__ = [
    "mae",
    "pairwise_accuracy",
    "PRF",
    "TERNARY_LABELS",
    "TABLE_METRICS",
    "Difference",
    "absolute_symmetry_deviation",
    "agreement",
    "bootstrap_interval",
    "brier_score",
    "compare_judges",
    "expected_calibration_error",
    "macro_prf",
    "metric_table",
    "mse_to_phat",
    "predicted_label",
    "predicted_win_rate",
    "reference_labels",
    "swap_consistency",
    "symmetry_deviation",
    "comparison_probs",
    "cycle_rate",
    "reliability_correlation",
    "spearman_per_context",
]
