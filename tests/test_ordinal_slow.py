"""OrdinalBT recovery and interval coverage on simulated graded verdicts (slow).

30 data sets from the ordered-logit model (simulated independently of the library,
``test_ordinal.simulate``: latent margin + logistic noise, cut at fixed cut points),
6 items x every ordered pair x 2 judges x 4 rows, Arena-Hard's five levels with
symmetric cut points +-0.5, +-2.0; MAP fits with Laplace intervals (``ranking()``,
``judges()``).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from test_ordinal import simulate

import bayesjudge as bj
from bayesjudge import CI_PROB

SKILLS = np.array([1.2, 0.7, 0.2, -0.2, -0.7, -1.2])  # zero-sum
CUT = np.array([-2.0, -0.5, 0.5, 2.0])
REPS = 30


@pytest.mark.slow
def test_recovery_and_coverage():
    rng = np.random.default_rng(2026)
    est, covered = [], []
    for _ in range(REPS):
        table = simulate(SKILLS, CUT, n_rep=4, rng=rng, judges=("j1", "j2"))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a rare unused level in a small replicate
            model = bj.OrdinalBT().fit(table)
            rank = model.ranking().set_index("item").loc[[f"m{i}" for i in range(6)]]
            judges = model.judges().iloc[0]
        cut_lo = np.array([judges[f"cutpoint[{a}]_lower"] for a in ("A=B|A>B", "A>B|A>>B")])
        cut_hi = np.array([judges[f"cutpoint[{a}]_upper"] for a in ("A=B|A>B", "A>B|A>>B")])
        est.append(np.r_[model.map_["skill"], model.map_["cutpoint"][2:]])
        covered.append(np.r_[(rank["skill_lower"] <= SKILLS) & (SKILLS <= rank["skill_upper"]),
                             (cut_lo <= CUT[2:]) & (CUT[2:] <= cut_hi)])
    est, covered = np.array(est), np.array(covered)
    truth = np.r_[SKILLS, CUT[2:]]
    # recovery: the mean MAP within 3.5 Monte Carlo standard errors of the truth, plus
    # 0.05 for the small-sample bias of the MAP (measured: skills |bias| <= 0.035, the
    # outer cut point +0.08 +- 0.025, pulled outwards by its prior and the small sample)
    se = est.std(axis=0, ddof=1) / np.sqrt(REPS)
    bias = est.mean(axis=0) - truth
    print("bias", np.round(bias, 3), "mc se", np.round(se, 3))
    assert (np.abs(bias) < 3.5 * se + 0.05).all(), (bias, se)
    # coverage of the CI_PROB intervals: 240 intervals; binomial sd at nominal
    # sqrt(p (1 - p) / 240) inflated x sqrt(2) for the intervals of one data set sharing
    # its noise; 3.3 sd one-sided: false alarm < 1e-3
    rate = covered.mean()
    sd = np.sqrt(CI_PROB * (1 - CI_PROB) / covered.size * 2)
    print("coverage", rate, "nominal", CI_PROB, "bound", CI_PROB - 3.3 * sd)
    assert rate > CI_PROB - 3.3 * sd
    assert rate <= 1.0
