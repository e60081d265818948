"""Vote baselines: hand-worked cases, brute-force references, bad inputs."""

from __future__ import annotations

import itertools
import math
import statistics

import numpy as np
import pandas as pd
import pytest

from bayesjudge.baselines import (
    ci_self_consistency,
    majority_vote,
    rounded_median,
    soft_self_consistency,
)
from bayesjudge.data import DataValidationError, validate_votes


def _votes(rows):
    return pd.DataFrame(rows, columns=["item", "vote", "confidence"])


def _reference_mode(n_pos, n_tie, n_neg):
    """Docstring rule written as a plain loop: unique maximum, else 0."""
    counts = {1: n_pos, 0: n_tie, -1: n_neg}
    best = max(counts.values())
    winners = [label for label, c in counts.items() if c == best]
    return winners[0] if len(winners) == 1 else 0


# --------------------------------------------------------------------------- majority vote


@pytest.mark.parametrize(
    ("counts", "expected"),
    [
        ((3, 1, 0), 1),
        ((0, 1, 3), -1),
        ((1, 3, 1), 0),
        ((2, 2, 0), 0),  # +1 tied with 0
        ((2, 0, 2), 0),  # opposite preferences tied: 0 although nobody voted 0
        ((0, 2, 2), 0),
        ((3, 3, 3), 0),
        ((5, 0, 4), 1),  # 5-to-4 and 9-to-0 are indistinguishable to SC
        ((9, 0, 0), 1),
    ],
)
def test_majority_vote_hand_cases(counts, expected):
    n_pos, n_tie, n_neg = counts
    assert majority_vote([n_pos], [n_tie], [n_neg]).tolist() == [expected]


def test_majority_vote_matches_loop_reference():
    rng = np.random.default_rng(1)
    counts = rng.integers(0, 5, size=(500, 3))
    counts[counts.sum(axis=1) == 0, 0] = 1
    got = majority_vote(counts[:, 0], counts[:, 1], counts[:, 2])
    expected = [_reference_mode(*row) for row in counts.tolist()]
    assert got.tolist() == expected
    assert got.dtype == np.int64


def test_majority_vote_random_tie_break_only_touches_ties():
    n = 4000
    n_pos = np.r_[np.full(n, 2), [3]]
    n_tie = np.r_[np.zeros(n, int), [0]]
    n_neg = np.r_[np.full(n, 2), [1]]
    got = majority_vote(n_pos, n_tie, n_neg, tie_break="random", random_seed=3)
    assert got[-1] == 1
    tied = got[:-1]
    assert set(np.unique(tied)) == {-1, 1}  # never the un-voted 0
    assert abs((tied == 1).mean() - 0.5) < 4 * math.sqrt(0.25 / n)
    again = majority_vote(n_pos, n_tie, n_neg, tie_break="random", random_seed=3)
    np.testing.assert_array_equal(got, again)


def test_majority_vote_random_three_way_tie_is_uniform():
    n = 6000
    ones = np.ones(n, int)
    got = majority_vote(ones, ones, ones, tie_break="random", random_seed=0)
    shares = [(got == label).mean() for label in (-1, 0, 1)]
    assert all(abs(s - 1 / 3) < 4 * math.sqrt(2 / 9 / n) for s in shares)


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (([1, 2], [0], [0, 1]), "one shape"),
        (([-1], [2], [0]), "non-negative"),
        (([0, 1], [0, 1], [0, 1]), "no votes"),
        (([1.5], [0], [0]), "whole numbers"),
        (([np.nan], [0], [1]), "whole numbers"),
        ((["a"], ["b"], ["c"]), "integers"),
        (([[1]], [[1]], [[1]]), "1-D"),
    ],
)
def test_majority_vote_rejects_bad_counts(args, match):
    with pytest.raises(DataValidationError, match=match):
        majority_vote(*args)


def test_majority_vote_rejects_unknown_tie_break():
    with pytest.raises(ValueError, match="tie_break"):
        majority_vote([1], [1], [0], tie_break="first")


# --------------------------------------------------------------------------- rounded median


def test_rounded_median_n2_is_the_papers_table():
    # Paper, Section 5: (0, 1) -> 1; by symmetry (0, -1) -> -1; (1, -1) -> 0.
    table = {
        (1, 1): 1, (0, 0): 0, (-1, -1): -1,
        (0, 1): 1, (1, 0): 1,
        (0, -1): -1, (-1, 0): -1,
        (1, -1): 0, (-1, 1): 0,
    }  # fmt: skip
    pairs = list(table)
    assert rounded_median(pairs).tolist() == [table[p] for p in pairs]


def _reference_rounded_median(row):
    m = statistics.median(row)
    return int(math.copysign(math.ceil(abs(m)), m)) if m != 0 else 0


@pytest.mark.parametrize("n", [1, 3, 4, 5, 6])
def test_rounded_median_all_vote_vectors(n):
    rows = list(itertools.product([-1, 0, 1], repeat=n))
    got = rounded_median(rows)
    assert got.tolist() == [_reference_rounded_median(r) for r in rows]
    # Order of the samples and the sign convention must not matter.
    np.testing.assert_array_equal(rounded_median(np.array(rows)[:, ::-1]), got)
    np.testing.assert_array_equal(rounded_median(-np.array(rows)), -got)


def test_rounded_median_odd_n_is_plain_median():
    rows = np.array(list(itertools.product([-1, 0, 1], repeat=5)))
    np.testing.assert_array_equal(rounded_median(rows), np.median(rows, axis=1))


@pytest.mark.parametrize(
    ("votes", "match"),
    [
        ([0, 1], "2-D"),
        (np.zeros((0, 2)), "non-empty"),
        ([[0, 2]], r"found \[2\]"),
        ([[0.5, 1.0]], r"found \[0.5\]"),
        ([[np.nan, 1.0]], "labels"),
        ([["a", "b"]], "numeric"),
    ],
)
def test_rounded_median_rejects_bad_votes(votes, match):
    with pytest.raises(DataValidationError, match=match):
        rounded_median(votes)


# --------------------------------------------------------------------------- long-table helpers


def test_vote_counts_keeps_first_appearance_order():
    votes = _votes([("z", 1, 1.0), ("a", -1, 1.0), ("z", 0, 1.0), ("a", -1, 1.0), ("m", 1, 1.0)])
    counts = validate_votes(votes[["item", "vote"]]).to_frame().set_index("item")
    assert counts.index.tolist() == ["z", "a", "m"]
    assert counts.index.name == "item"
    assert counts.to_numpy().tolist() == [[1, 1, 0], [0, 0, 2], [1, 0, 0]]


# --------------------------------------------------------------------------- Soft-SC


def test_soft_sc_reductions_disagree_as_worked_by_hand():
    votes = _votes(
        [
            # item "x": +1 {0.95, 0.6} vs -1 {0.75}: min 0.6<0.75, mean 0.775>0.75, prod 0.57<0.75
            ("x", 1, 0.95), ("x", 1, 0.6), ("x", -1, 0.75),
            # item "y": +1 {0.9, 0.9} vs -1 {0.85}: min 0.9>0.85, mean 0.9, prod 0.81<0.85
            ("y", 1, 0.9), ("y", -1, 0.85), ("y", 1, 0.9),
        ]
    )  # fmt: skip
    assert soft_self_consistency(votes, "min").tolist() == [-1, 1]
    assert soft_self_consistency(votes, "mean").tolist() == [1, 1]
    assert soft_self_consistency(votes, "prod").tolist() == [-1, -1]


@pytest.mark.parametrize("reduce", ["min", "mean", "prod"])
def test_soft_sc_label_without_votes_is_never_chosen(reduce):
    # Score 0 for the only voted label must still beat the labels nobody voted for
    # (and a vote of confidence 0 must not be treated as "no vote").
    votes = _votes([("a", 1, 0.0), ("a", 1, 0.0), ("b", -1, 0.0)])
    assert soft_self_consistency(votes, reduce).tolist() == [1, -1]


def test_soft_sc_score_ties_fall_back_to_counts_then_zero():
    votes = _votes(
        [
            ("more_pos", 1, 1.0), ("more_pos", 1, 1.0), ("more_pos", 0, 1.0),
            ("split", 1, 1.0), ("split", -1, 1.0),
        ]
    )  # fmt: skip
    got = soft_self_consistency(votes, "min")
    assert got.to_dict() == {"more_pos": 1, "split": 0}
    assert got.name == "prediction" and got.index.name == "item"


@pytest.mark.parametrize("reduce", ["min", "mean", "prod"])
def test_soft_sc_matches_groupby_reference(reduce):
    rng = np.random.default_rng(7)
    n = 600
    votes = pd.DataFrame(
        {
            "item": rng.integers(0, 80, n),
            "vote": rng.integers(-1, 2, n),
            "confidence": rng.uniform(0.05, 1.0, n),  # continuous: no score ties
        }
    )
    scores = votes.groupby(["item", "vote"], sort=False)["confidence"].agg(reduce).unstack()
    expected = scores.idxmax(axis=1)  # NaN (no votes) is skipped by idxmax
    got = soft_self_consistency(votes, reduce)
    assert got.index.tolist() == list(pd.unique(votes["item"]))
    pd.testing.assert_series_equal(
        got, expected.loc[got.index].astype(np.int64), check_names=False
    )


# --------------------------------------------------------------------------- CI-SC


def test_ci_sc_is_confidence_weighted_not_counted():
    votes = _votes([("a", 1, 0.3), ("a", 1, 0.3), ("a", -1, 0.9)])
    assert ci_self_consistency(votes).tolist() == [-1]  # 0.9 > 0.6
    assert majority_vote([2], [0], [1]).tolist() == [1]


def test_ci_sc_temperature_limits():
    votes = _votes([("a", 1, 0.3), ("a", 1, 0.3), ("a", -1, 0.9)])
    # T -> infinity: equal weights, i.e. majority vote; T -> 0: most confident vote.
    assert ci_self_consistency(votes, temperature=1e6).tolist() == [1]
    assert ci_self_consistency(votes, temperature=1e-3).tolist() == [-1]


def test_ci_sc_tiny_temperature_does_not_overflow():
    # exp(0.99 / 1e-4) overflows; without the per-item shift both labels score inf,
    # tie, and the count tie-break wrongly picks -1.
    votes = _votes([("a", 1, 0.99), ("a", -1, 0.98), ("a", -1, 0.2)])
    with np.errstate(over="raise"):
        assert ci_self_consistency(votes, temperature=1e-4).tolist() == [1]


def test_ci_sc_softmax_matches_explicit_formula():
    votes = _votes([("a", 1, 0.2), ("a", 1, 0.5), ("a", 0, 0.7), ("a", -1, 0.65)])
    t = 0.1
    w = np.exp(votes["confidence"] / t) / np.exp(votes["confidence"] / t).sum()
    by_label = w.groupby(votes["vote"]).sum()
    assert ci_self_consistency(votes, temperature=t).tolist() == [int(by_label.idxmax())]


def test_ci_sc_matches_groupby_reference():
    rng = np.random.default_rng(11)
    n = 500
    votes = pd.DataFrame(
        {
            "item": rng.choice(list("abcdefghijklmnop"), n),
            "vote": rng.integers(-1, 2, n),
            "confidence": rng.uniform(0, 1, n),
        }
    )
    sums = votes.groupby(["item", "vote"])["confidence"].sum().unstack()
    got = ci_self_consistency(votes)
    expected = sums.idxmax(axis=1).loc[got.index].astype(np.int64)
    pd.testing.assert_series_equal(got, expected, check_names=False)


# --------------------------------------------------------------------------- bad tables


@pytest.mark.parametrize("func", [soft_self_consistency, ci_self_consistency])
@pytest.mark.parametrize(
    ("table", "match"),
    [
        (pd.DataFrame({"item": [1], "vote": [1]}), "missing column"),
        (pd.DataFrame({"item": [1], "vote": [2], "confidence": [0.5]}), r"found \[2\]"),
        (pd.DataFrame({"item": [1], "vote": [1], "confidence": [1.2]}), r"\[0, 1\]"),
        (pd.DataFrame({"item": [1], "vote": [1], "confidence": [np.nan]}), "missing value"),
        (pd.DataFrame({"item": [], "vote": [], "confidence": []}), "empty"),
    ],
)
def test_long_table_baselines_reject_bad_tables(func, table, match):
    with pytest.raises(DataValidationError, match=match):
        func(table)


def test_bad_options_raise():
    votes = _votes([("a", 1, 0.5)])
    with pytest.raises(ValueError, match="reduce"):
        soft_self_consistency(votes, "max")
    with pytest.raises(ValueError, match="temperature"):
        ci_self_consistency(votes, temperature=0.0)
