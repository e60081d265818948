"""AnchoredBT recovers known skills and confusion matrices (a position-biased judge and a
judge no better than chance included), with calibrated 90% Laplace intervals."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import bayesjudge as bj
from bayesjudge.models.anchored.model import simulate_battles


@pytest.mark.slow
def test_recovery_and_coverage_on_simulated_battles():
    skill_hits, conf_hits, votes = [], [], []
    for seed in range(10):
        # 6 items: the structure the default tests compile; 15% of battles with the reference
        table, truth = simulate_battles(np.linspace(-1, 1, 6), 1500, random_seed=100 + seed,
                                        reference_share=0.15)
        model = bj.AnchoredBT(random_seed=seed).fit(table)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ranking = model.ranking(ci_prob=0.9).set_index("item")
            judges = model.judges(ci_prob=0.9)
        true_skill = dict(zip([f"m{i}" for i in range(6)], truth["skill"]))
        s = np.array([true_skill[k] for k in ranking.index])
        skill_hits.extend((ranking["skill_lower"] <= s) & (s <= ranking["skill_upper"]))
        order = {"judge-good": 0, "judge-left": 1, "judge-coin": 2}
        c = truth["confusion"][[order[j] for j in judges["judge"][::9]]].reshape(-1)
        conf_hits.extend((judges["lower"] <= c) & (c <= judges["upper"]))
        votes.append(judges.groupby("judge", sort=False)["reference_votes"].first())
    # 60 skill and 270 confusion intervals; the thresholds are > 4 binomial sd below 0.9
    assert np.mean(skill_hits) >= 0.75, np.mean(skill_hits)
    assert np.mean(conf_hits) >= 0.80, np.mean(conf_hits)
    worth = np.mean(votes, axis=0)  # good > position-biased > chance ~ 0
    assert worth[0] > worth[1] > worth[2] and worth[2] < 0.05, worth
