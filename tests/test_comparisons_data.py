"""The comparisons table: validation errors, collapse to cells, and symmetrisation (eq. 3).

Checked against hand computations; no PyMC graph is built here.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from bayesjudge import DataValidationError, datasets, symmetrize
from bayesjudge.data import Comparisons, validate_comparisons
from bayesjudge.data.comparisons import (
    PAIR_CONTEXTS,
    BattleContextWarning,
    all_tie_judges,
    separated_items,
)


def table(**cols) -> pd.DataFrame:
    base = {"judge": ["k", "k", "k"], "left": ["a", "b", "c"], "right": ["b", "c", "a"],
            "prob": [0.7, 0.6, 0.2]}
    base.update(cols)
    return pd.DataFrame({k: v for k, v in base.items() if v is not None})


# ------------------------------------------------------------------ errors
@pytest.mark.parametrize("cols, column, fix", [
    ({"right": ["b", "b", "a"]}, "left == right", "drop those rows"),
    ({"prob": [0.7, 1.2, 0.2]}, "comparisons.prob", "Fix"),
    ({"prob": [0.7, np.nan, 0.2]}, "comparisons.prob", "Fix"),
    ({"prob": [0.7, -0.1, 0.2]}, "comparisons.prob", "Fix"),
    ({"prob": None, "outcome": ["left", "win", "tie"]}, "comparisons.outcome", "Fix"),
    ({"prob": None, "outcome": ["left", None, "tie"]}, "comparisons.outcome", "Fix"),
    ({"outcome": ["left", "right", "tie"]}, "both a prob column", "Fix"),
    ({"prob": None}, "neither a prob column", "Add one"),
    ({"judge": ["k", None, "k"]}, "comparisons.judge", "drop or fill"),
])
def test_bad_tables_raise_naming_the_column_and_the_fix(cols, column, fix):
    with pytest.raises(DataValidationError) as err:
        validate_comparisons(table(**cols))
    assert column in str(err.value) and fix in str(err.value)


def test_bad_values_are_shown():
    with pytest.raises(DataValidationError, match=r"1\.2"):
        validate_comparisons(table(prob=[0.7, 1.2, 0.2]))
    with pytest.raises(DataValidationError, match="'win'"):
        validate_comparisons(table(prob=None, outcome=["left", "win", "tie"]))


def test_item_compared_only_with_itself_and_one_item_context_are_self_comparisons():
    df = pd.DataFrame({"context": ["x", "x", "y"], "judge": "k", "left": ["a", "b", "c"],
                       "right": ["b", "a", "c"], "prob": 0.5})
    with pytest.raises(DataValidationError, match=r"itself.*'c'.*context\(s\) \['y'\]"):
        validate_comparisons(df)


def test_disconnected_items_name_both_groups():
    df = pd.DataFrame({"context": "art-1", "judge": "k", "left": ["a", "c", "a"],
                       "right": ["b", "d", "b"], "prob": [0.6, 0.3, 0.8]})
    with pytest.raises(DataValidationError) as err:
        validate_comparisons(df)
    msg = str(err.value)
    assert "context 'art-1'" in msg and "['a', 'b']" in msg and "['c', 'd']" in msg
    # the same items in two separate contexts are fine: skills are per context
    df["context"] = ["art-1", "art-2", "art-1"]
    assert len(validate_comparisons(df)) == 2


def test_disconnected_check_is_per_aspect():
    df = pd.DataFrame({"aspect": ["coh", "coh", "flu"], "judge": "k", "left": ["a", "b", "a"],
                       "right": ["b", "c", "b"], "prob": 0.6})
    validate_comparisons(df)  # flu has a-b only: connected
    df.loc[2, ["left", "right"]] = ["c", "d"]
    df.loc[3] = ["flu", "k", "a", "b", 0.4]
    with pytest.raises(DataValidationError, match="aspect 'flu'"):
        validate_comparisons(df)


def test_a_question_id_taken_for_a_context_is_named_with_an_example():
    """arena_ppr's question ids as ``context``: 26,910 two-item rankings (the CLI's MAP over
    ~27,000 skills ran four minutes and failed): a warning naming a battle, at validation
    (``bayesjudge rank`` refuses it: tests/test_cli_rank.py)."""
    arena = datasets.arena_ppr().rename(columns={"question_id": "context"})
    with pytest.warns(BattleContextWarning) as record:
        comps = validate_comparisons(arena.drop(columns=["battle", "winner_raw"]))
    assert comps.n_contexts == 26_910
    msg = str(record[0].message)
    first = arena.iloc[0]
    assert "comparisons.context: 26,910 of its 26,910 ranking groups" in msg
    assert f"context {first['context']!r}: {first['left']!r} vs {first['right']!r}" in msg
    assert "method='nuts'" in msg and "drop the column" in msg
    # below the threshold, or with several items per context, the groups are rankings
    few = pd.DataFrame({"context": [f"q{i // 2}" for i in range(2 * (PAIR_CONTEXTS - 1))],
                        "judge": "k", "left": "a", "right": "b", "prob": 0.6})
    rows = [(f"q{c}", lft, rgt) for c in range(PAIR_CONTEXTS)
            for lft, rgt in (("a", "b"), ("b", "c"))]
    three = pd.DataFrame(rows, columns=["context", "left", "right"]).assign(judge="k", prob=0.6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert validate_comparisons(few).n_contexts == PAIR_CONTEXTS - 1
        assert validate_comparisons(three).n_contexts == PAIR_CONTEXTS


@pytest.mark.filterwarnings("ignore::bayesjudge.data.counts.UnusedColumnWarning")
def test_a_wide_table_of_verdicts_gets_the_code_that_makes_it_long():
    """arena_ppr's battles_wide layout (one outcome column per judge): the error names the
    verdict columns and gives the call that makes it long, which runs and validates (not
    the added judge column)."""
    import re

    wide = pd.DataFrame({"battle": ["0", "1", "2"], "left": ["a", "b", "c"],
                         "right": ["b", "c", "a"], "human": ["left", "TIE", None],
                         "gpt-4": ["right", "left", "tie"]})
    with pytest.raises(DataValidationError) as err:
        validate_comparisons(wide)
    msg = str(err.value)
    assert "it has ['battle', 'left', 'right', 'human', 'gpt-4']" in msg
    assert "Columns ['human', 'gpt-4'] hold left / right / tie verdicts" in msg
    code = re.search(r"(bayesjudge\.data\.comparisons_table\(df, judge_columns=\[.*?\]\))",
                     msg).group(1)
    assert "--judge-columns human,gpt-4)" in msg
    import bayesjudge

    long = eval(code, {"df": wide, "bayesjudge": bayesjudge})  # the message's own fix
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # battle is not used by the family
        comps = validate_comparisons(long)
    assert comps.n_rows == 5 and list(comps.judges) == ["human", "gpt-4"]
    # no such columns: no hint
    with pytest.raises(DataValidationError) as err:
        validate_comparisons(wide.drop(columns=["human", "gpt-4"]))
    assert "wide table" not in str(err.value)


# ------------------------------------------------------------------ collapse
def test_cells_sum_probabilities_and_count_outcomes():
    df = pd.DataFrame({"judge": ["k", "k", "m", "k"], "left": ["a", "a", "a", "b"],
                       "right": ["b", "b", "b", "a"], "prob": [0.9, 0.5, 0.2, 0.4]})
    c = validate_comparisons(df)
    assert isinstance(c, Comparisons) and c.kind == "soft" and c.n_rows == 4
    np.testing.assert_array_equal(c.n, [2, 1, 1])
    np.testing.assert_allclose(c.prob_sum, [1.4, 0.2, 0.4])
    np.testing.assert_array_equal(c.outcomes, [[1, 1, 0], [0, 0, 1], [0, 0, 1]])
    assert validate_comparisons(c) is c
    hard = pd.DataFrame({"judge": "k", "left": ["a", "a", "a"], "right": "b",
                         "outcome": ["left", "tie", "left"]})
    h = validate_comparisons(hard)
    assert h.kind == "hard"
    np.testing.assert_array_equal(h.outcomes, [[2, 1, 0]])
    np.testing.assert_allclose(h.prob_sum, [2.5])


def test_ids_kept_exactly_in_first_appearance_order():
    df = pd.DataFrame({"judge": ["j2", "j1", "j2"], "left": ["000", 1, "b"],
                       "right": ["1", "000", "1"], "prob": [0.5, 0.6, 0.7]})
    c = validate_comparisons(df)
    assert c.items.tolist() == ["000", "1", 1, "b"]  # 1 and "1" are different ids
    assert c.judges.tolist() == ["j2", "j1"]
    frame = c.to_frame()
    assert frame["left"].tolist() == ["000", 1, "b"]


def test_separated_items_and_all_tie_judges():
    df = pd.DataFrame({"judge": ["k", "k", "t", "t"], "left": ["a", "b", "b", "c"],
                       "right": ["b", "c", "c", "b"],
                       "outcome": ["left", "left", "tie", "tie"]})
    c = validate_comparisons(df)
    sep = separated_items(c)
    assert sep["item"].tolist() == ["a"] and sep["won_all"].tolist() == [True]
    assert all_tie_judges(c).tolist() == ["t"]


# ------------------------------------------------------------------ eq. 3
def test_symmetrize_soft_by_hand():
    df = pd.DataFrame({"context": ["x", "x", "x", "x", "y"], "judge": "k",
                       "left": ["a", "b", "a", "c", "a"], "right": ["b", "a", "c", "b", "b"],
                       "prob": [0.9, 0.3, 0.6, 0.2, 0.7], "note": "dropped"})
    with pytest.warns(UserWarning, match=r"column\(s\) \['note'\] that are not used"):
        out = symmetrize(df)
    # (a,b) and (b,a) in context x: p' = (0.9 + 1 - 0.3) / 2 = 0.8 on both rows (each row
    # stays an observation, the second turned to a-b); (a,c), (c,b) and context y's (a,b)
    # were judged in one order only and stay as they are.
    assert out.columns.tolist() == ["context", "judge", "left", "right", "prob"]
    assert out[["left", "right"]].values.tolist() == [["a", "b"], ["a", "b"], ["a", "c"],
                                                     ["c", "b"], ["a", "b"]]
    np.testing.assert_allclose(out["prob"], [0.8, 0.8, 0.6, 0.2, 0.7])


def test_symmetrize_averages_each_order_and_keeps_every_row():
    df = pd.DataFrame({"judge": ["k", "k", "k", "m"], "left": ["a", "a", "b", "b"],
                       "right": ["b", "b", "a", "a"], "prob": [0.9, 0.7, 0.4, 0.1]})
    out = symmetrize(df)
    # judge k: mean p_ab = 0.8, p_ba = 0.4 -> (0.8 + 0.6) / 2 = 0.7 (each order weighs
    # half, however often it was judged), on all 3 rows; judge m: one order only
    assert out["judge"].tolist() == ["k", "k", "k", "m"]
    np.testing.assert_allclose(out["prob"], [0.7, 0.7, 0.7, 0.1])
    cells = symmetrize(validate_comparisons(df))
    assert cells.n.tolist() == [3.0, 1.0] and cells.n_rows == 4
    np.testing.assert_allclose(cells.prob_sum, [2.1, 0.1])


def test_symmetrize_hard_outcomes_counts_every_verdict():
    df = pd.DataFrame({"judge": "k", "left": ["a", "b", "a", "c", "b", "c", "b"],
                       "right": ["b", "a", "c", "a", "c", "b", "a"],
                       "outcome": ["left", "tie", "left", "left", "right", "left", "left"]})
    out = symmetrize(df)
    # the reversed order's verdicts are turned around: b-a tie -> a-b tie, b-a left ->
    # a-b right, c-a left -> a-c right, c-b left -> b-c right
    assert out.values.tolist() == [
        ["k", "a", "b", "left"], ["k", "a", "b", "tie"], ["k", "a", "c", "left"],
        ["k", "a", "c", "right"], ["k", "b", "c", "right"], ["k", "b", "c", "right"],
        ["k", "a", "b", "right"]]
    cells = symmetrize(validate_comparisons(df))
    assert cells.n.tolist() == [3.0, 2.0, 2.0]
    np.testing.assert_allclose(cells.outcomes, [[1, 1, 1], [1, 0, 1], [0, 0, 2]])
    np.testing.assert_allclose(cells.prob_sum, [1.5, 1.0, 0.0])


def test_symmetrize_cells_equals_symmetrize_table():
    rng = np.random.default_rng(3)
    items = list("abcde")
    rows = [(k, i, j) for k in ("k1", "k2") for i in items for j in items
            if i != j and rng.random() < 0.7 for _ in range(rng.integers(1, 4))]
    df = pd.DataFrame(rows, columns=["judge", "left", "right"]).sample(frac=1, random_state=1)
    for value in (rng.random(len(df)), rng.choice(["left", "tie", "right"], len(df))):
        table = df.assign(**{"prob" if value.dtype == float else "outcome": value})
        cells = symmetrize(validate_comparisons(table))
        table_way = validate_comparisons(symmetrize(table))
        pd.testing.assert_frame_equal(cells.to_frame(), table_way.to_frame())
        assert len(cells) < len(table) and cells.n.sum() == len(table) == cells.n_rows
