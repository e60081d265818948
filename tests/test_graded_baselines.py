"""Baselines of graded verdicts against hand computations (bayesjudge.baselines.graded)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bayesjudge.baselines import arena_hard_score, linear_reward_score
from bayesjudge.data import DataValidationError

TABLE = pd.DataFrame({"judge": ["j1", "j1", "j2", "j2"],
                      "left": ["a", "a", "b", "c"], "right": ["b", "c", "c", "a"],
                      "outcome": ["A>>B", "A=B", "B>A", " b>>a"]})


def test_arena_hard_score_by_hand():
    # a: A>>B as left (3 wins of 3), A=B (0.5 of 1), B>>A as right (3 of 3) -> 6.5 / 7
    # b: 0 of 3 (lost strongly), 0 of 1 (B>A as left) -> 0 / 4
    # c: 0.5 of 1, 1 of 1 (B>A as right), 0 of 3 (B>>A as left) -> 1.5 / 5
    out = arena_hard_score(TABLE)
    assert out["item"].tolist() == ["a", "c", "b"]
    np.testing.assert_allclose(out["score"], [6.5 / 7, 1.5 / 5, 0.0], rtol=1e-12)
    assert out["n_battles"].tolist() == [7, 5, 4]
    assert out["n_comparisons"].tolist() == [3, 3, 2]
    assert out["rank"].tolist() == [1, 2, 3]
    # weight=1: every verdict one battle (a plain win rate with half-wins for ties)
    np.testing.assert_allclose(arena_hard_score(TABLE, weight=1)["score"],
                               [2.5 / 3, 1.5 / 3, 0.0], rtol=1e-12)
    with pytest.raises(ValueError, match="weight"):
        arena_hard_score(TABLE, weight=0)


def test_linear_reward_score_by_hand():
    # a: +2, 0, +2 -> 4/3;  c: 0, +1, -2 -> -1/3;  b: -2, -1 -> -3/2
    out = linear_reward_score(TABLE)
    assert out["item"].tolist() == ["a", "c", "b"]
    np.testing.assert_allclose(out["reward"], [4 / 3, -1 / 3, -1.5], rtol=1e-12)
    # four levels, no tie: -1.5, -0.5, 0.5, 1.5
    four = pd.DataFrame({"left": ["x", "y"], "right": ["y", "x"], "outcome": ["++", "-"]})
    out = linear_reward_score(four, levels=["--", "-", "+", "++"])
    np.testing.assert_allclose(out.set_index("item")["reward"].loc[["x", "y"]],
                               [1.0, -1.0], rtol=1e-12)


def test_groups_and_bad_labels():
    table = pd.concat([TABLE.assign(context="p1"), TABLE.assign(context="p2")],
                      ignore_index=True)
    table.loc[4:, "outcome"] = ["B>>A", "A=B", "A>B", "A>>B"]  # p2 reversed
    out = linear_reward_score(table)
    assert out["context"].tolist() == ["p1"] * 3 + ["p2"] * 3
    assert out["item"].tolist() == ["a", "c", "b", "b", "c", "a"]
    bad = TABLE.assign(outcome=["A>>B", "A=B", "better", "B>A"])
    with pytest.raises(DataValidationError, match=r"'better'.*'B>>A', 'B>A', 'A=B'"):
        arena_hard_score(bad)
