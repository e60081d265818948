"""Closed-form frequentist estimators for misclassification-adjusted reporting.

Pure, vectorised functions implementing Sections 4-7 and Appendices A-B of Lee,
Zeng, Jeong, Sohn & Lee (2025), "How to Correctly Report LLM-as-a-Judge
Evaluations", arXiv:2511.21140: the Rogan-Gladen bias-adjusted accuracy (eq. 5)
and its delta-method variance (eq. 9), the Lang-Reiczigel adjusted Wald interval
(eqs. 6-8), the adaptive calibration allocation (Algorithm 1 / Proposition 5.2),
the judge-versus-human variance comparison (Proposition 6.1) and the Table 1
estimators compared under distribution shift (Section 7), plus the Wilson score
interval of a binomial proportion. Every count-level function takes counts, not
proportions, broadcasts numpy arrays of them (one element per Monte Carlo
replication, say) and raises :class:`~bayesjudge.data.DataValidationError`
naming the argument, the offending values and the fix.

The rate-level functions :func:`rogan_gladen_rates`, :func:`lang_reiczigel_rates`
and :func:`conditional_calibration_rates` compute the same formulas from rates
and sample sizes and return NaN where an estimate is undefined instead of
raising: they serve simulation studies, where an undefined replication is
counted, not fatal.

Modules: :mod:`~bayesjudge.estimators.bias_adjusted` (eqs. 5, 9),
:mod:`~bayesjudge.estimators.lang_reiczigel` (eqs. 6-8),
:mod:`~bayesjudge.estimators.intervals` (Wald, Wilson),
:mod:`~bayesjudge.estimators.allocation` (Algorithm 1, Proposition 6.1),
:mod:`~bayesjudge.estimators.table1` (Table 1, Section 7) and
:mod:`~bayesjudge.estimators.validation` (shared checks); everything public is
re-exported here.

Notation (paper -> arguments): test set of ``n`` items of which the judge calls
``judged_pos`` 'correct' (p_hat = judged_pos / n, eq. 2); calibration set of
``m1`` human-'correct' items of which the judge calls ``tp`` 'correct'
(sensitivity q1_hat = tp / m1) and ``m0`` human-'incorrect' items of which the
judge calls ``tn`` 'incorrect' (specificity q0_hat = tn / m0), eq. 3.
"""


from bayesjudge.estimators.allocation import (
    HumanComparison,
    allocate_calibration,
    judge_beats_human,
)
from bayesjudge.estimators.bias_adjusted import (
    rogan_gladen,
    rogan_gladen_rates,
    rogan_gladen_variance,
)
from bayesjudge.estimators.intervals import Interval, wald_interval, wilson_interval
from bayesjudge.estimators.lang_reiczigel import (
    BoundaryWarning,
    LangReiczigelInterval,
    lang_reiczigel_interval,
    lang_reiczigel_rates,
)
from bayesjudge.estimators.table1 import (
    Table1Name,
    calibration_only_estimate,
    conditional_calibration_estimate,
    conditional_calibration_rates,
    difference_estimate,
    naive_estimate,
    table1_estimates,
)
from bayesjudge.estimators.validation import (
    Float,
    as_counts,
    check_alpha,
    validate_count_table,
)

__all__ = [
    "BoundaryWarning",
    "Float",
    "HumanComparison",
    "Interval",
    "LangReiczigelInterval",
    "Table1Name",
    "allocate_calibration",
    "as_counts",
    "calibration_only_estimate",
    "check_alpha",
    "conditional_calibration_estimate",
    "conditional_calibration_rates",
    "difference_estimate",
    "judge_beats_human",
    "lang_reiczigel_interval",
    "lang_reiczigel_rates",
    "naive_estimate",
    "rogan_gladen",
    "rogan_gladen_rates",
    "rogan_gladen_variance",
    "table1_estimates",
    "validate_count_table",
    "wald_interval",
    "wilson_interval",
]
