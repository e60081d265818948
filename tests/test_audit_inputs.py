"""Inputs that used to give a wrong answer without a word (a session's audit, 2026-11-28)."""

import numpy as np
import pandas as pd
import pytest

import bayesjudge as bj
from bayesjudge.data import DataValidationError
from bayesjudge.data.vocabulary import DEFAULT_LEVELS, check_levels
from bayesjudge.metrics import brier_score, mae, symmetry_deviation

VOTES = pd.DataFrame({"item": list("aabbcc"), "vote": [1, 1, -1, 0, 1, -1]})
LABELS = pd.DataFrame({"item": list("abc"), "label": [1, -1, 0]})


def test_boolean_votes_and_labels_are_refused_not_read_as_ties():
    # before: False was read as 0, a tie
    with pytest.raises(DataValidationError, match=r"votes\.vote holds True/False.*tie"):
        bj.DavidsonAggregator().fit(VOTES.assign(vote=[True, True, False, False, True, False]),
                                    LABELS)
    with pytest.raises(DataValidationError, match=r"labels\.label holds True/False"):
        bj.DavidsonAggregator().fit(VOTES, LABELS.assign(label=np.array([True, False, True],
                                                                        dtype=object)))


@pytest.mark.parametrize("table", ["n", "counts"])
def test_a_count_past_2_to_53_is_refused(table):
    # before: 1e19 wrapped to a negative int64 and its row was dropped (n), or gave NaN
    if table == "n":
        votes = VOTES.assign(n=[1e19, 1, 1, 1, 1, 1])
        match = r"votes\.n .*2\*\*53"
    else:
        votes = pd.DataFrame({"item": list("abc"), "n_pos": [1e19, 0, 1],
                              "n_tie": [0, 1, 0], "n_neg": [1, 1, 1]})
        match = r"votes\.n_pos .*2\*\*53"
    with pytest.raises(DataValidationError, match=match):
        bj.DavidsonAggregator().fit(votes, LABELS)


def test_ids_python_counts_equal_are_refused_not_merged():
    # before: 1 and 1.0 (and True) hashed alike and became one item
    df = pd.DataFrame({"left": [1, 2, 3, 1.0, 2, 3], "right": [2, 3, 1.0, 2, 3, 1],
                       "outcome": ["left", "tie", "right"] * 2}, dtype=object)
    with pytest.raises(DataValidationError, match=r"comparisons\.left/right .* 1 / 1\.0"):
        bj.DavidsonBT().fit(df)
    ann = pd.DataFrame({"item": [1, True, 2], "annotator": ["u", "w", "u"],
                        "label": ["A", "B", "A"]}, dtype=object)
    with pytest.raises(DataValidationError, match=r"annotations\.item .* 1 / True"):
        bj.PreferenceDistribution().fit(ann)
    # int and numpy int are one kind of number; 7 and "7" stay two ids
    kept = pd.DataFrame({"left": [1, np.int64(2), 7] * 3, "right": [np.int64(2), "7", 1] * 3,
                         "outcome": ["left", "tie", "right"] * 3}, dtype=object)
    assert len(bj.DavidsonBT().fit(kept).ranking()) == 4


def test_metrics_refuse_series_whose_indexes_differ():
    prob = pd.Series([0.9, 0.1, 0.8, 0.2], index=list("abcd"))
    label = pd.Series([0, 1, 0, 1], index=list("dcba"))
    # before: paired by position, 0.725 instead of 0.025
    with pytest.raises(DataValidationError, match=r"`prob` and `label` .*reindex"):
        brier_score(prob, label)
    assert brier_score(prob, label.reindex(prob.index)) == pytest.approx(0.025)
    assert brier_score(prob.to_numpy(), label.to_numpy()) == pytest.approx(0.725)
    with pytest.raises(DataValidationError, match=r"`y_pred` and `y_true`"):
        mae(pd.Series([1.0, 0.0], index=[0, 1]), pd.Series([1.0, 0.0], index=[1, 0]))
    with pytest.raises(DataValidationError, match=r"`p_orig` and `p_swap`"):
        symmetry_deviation(prob, 1 - label.astype(float))


def test_reversed_arena_hard_levels_warn():
    with pytest.warns(UserWarning, match="ranking comes out reversed"):
        check_levels(list(reversed(DEFAULT_LEVELS)))
    assert check_levels(["B>>A", "B>A", "A=B", "A>B", "A>>B"]) == DEFAULT_LEVELS
    assert check_levels(["lose", "tie", "win"]) == ("lose", "tie", "win")
