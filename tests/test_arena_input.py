"""Comparison tables as users' tools write them (bayesjudge.data.arena, rank --columns).

The acceptance case: the human votes of ``../shared/data/arena_ppr/battles.csv`` written
back as the Chatbot Arena export they came from (``model_a, model_b, winner,
question_id``; no judge column) go through ``bayesjudge rank`` and ``DavidsonBT().fit``
unedited and give the fit of the hand-mapped long table.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bayesjudge import DavidsonBT
from bayesjudge.cli import main
from bayesjudge.data import (
    DataValidationError,
    comparisons_table,
    from_arena,
    symmetrize,
    validate_comparisons,
)
from bayesjudge.data.arena import ONE_JUDGE
from bayesjudge.datasets.files import SHARED_DATA

BATTLES = SHARED_DATA / "arena_ppr" / "battles.csv"


@pytest.fixture(scope="module")
def human():
    if not BATTLES.exists():
        pytest.skip("../shared/data/arena_ppr is not here")
    df = pd.read_csv(BATTLES, dtype=str, keep_default_na=False)
    return df[df["judge"] == "human"].reset_index(drop=True)


@pytest.fixture(scope="module")
def export(human, tmp_path_factory):
    """The Arena export: Arena's own columns and values, no judge column."""
    arena = pd.DataFrame({"model_a": human["left"], "model_b": human["right"],
                          "winner": human["winner_raw"], "question_id": human["context"]})
    path = tmp_path_factory.mktemp("arena") / "arena_export.csv"
    arena.to_csv(path, index=False)
    return arena, path


def test_arena_export_runs_unedited_and_equals_the_hand_mapped_table(human, export, tmp_path,
                                                                     capsys):
    arena, path = export
    long = human[["judge", "left", "right", "outcome"]]  # mapped by hand (upstream's mapping)
    reference = DavidsonBT().fit(long)
    ref_rank = reference.ranking()
    # the API, unedited
    model = DavidsonBT().fit(arena)
    np.testing.assert_allclose(model.map_["skill"], reference.map_["skill"], rtol=0, atol=1e-6)
    cols = ["skill", "skill_lower", "skill_upper", "rank_lower", "rank_upper"]
    np.testing.assert_allclose(model.ranking()[cols], ref_rank[cols], rtol=0, atol=1e-6)
    assert model.ranking()["item"].tolist() == ref_rank["item"].tolist()
    assert "context" not in model.ranking()  # question_id is not a context
    assert model.judges()["judge"].tolist() == [ONE_JUDGE]
    # the command line, unedited (same seed, so the same Laplace draws)
    out = tmp_path / "ranking.csv"
    assert main(["rank", str(path), "--model", "davidson-bt", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "Chatbot Arena export" in printed and ONE_JUDGE in printed
    cli = pd.read_csv(out, dtype={"item": str})
    assert cli["item"].tolist() == ref_rank["item"].tolist()
    np.testing.assert_allclose(cli[cols], ref_rank[cols], rtol=0, atol=1e-6)


def test_from_arena_keeps_which_tie_it_was(export):
    arena, _ = export
    table = from_arena(arena)
    assert list(table.columns) == ["judge", "left", "right", "outcome", "winner_raw",
                                   "question_id"]
    counts = pd.crosstab(table["winner_raw"], table["outcome"])
    # README of arena_ppr: model_a 9,516 / model_b 9,391 / tie 2,880 / tie (bothbad) 5,132
    assert counts.loc["model_a", "left"] == 9516 and counts.loc["model_b", "right"] == 9391
    assert counts.loc["tie", "tie"] == 2880 and counts.loc["tie (bothbad)", "tie"] == 5132
    assert (counts.to_numpy() > 0).sum() == 4  # nothing else
    pd.testing.assert_frame_equal(comparisons_table(arena), table)  # the default reader


SMALL = pd.DataFrame({"x": ["000", "1.10", "1.1", "000"], "y": ["1.10", "1.1", "000", "1.1"],
                      "v": ["A", "c", " B ", "A"], "q": [1, 2, 3, 4]})
MAP = {"columns": {"x": "left", "y": "right", "v": "outcome"},
       "outcomes": {"A": "left", "B": "right", "C": "tie"}}


def test_other_names_and_labels_map_by_one_call():
    table = comparisons_table(SMALL, **MAP)
    assert table["outcome"].tolist() == ["left", "tie", "right", "left"]
    assert table["v_raw"].tolist() == SMALL["v"].tolist()
    assert table["judge"].tolist() == [ONE_JUDGE] * 4 and table["q"].tolist() == [1, 2, 3, 4]
    hand = pd.DataFrame({"judge": "k", "left": SMALL["x"], "right": SMALL["y"],
                         "outcome": ["left", "tie", "right", "left"]})
    a, b = validate_comparisons(table), validate_comparisons(hand)
    assert a.items.tolist() == b.items.tolist() == ["000", "1.10", "1.1"]
    np.testing.assert_array_equal(a.outcomes, b.outcomes)
    # an already long table (judge, left, right, outcome) is not touched
    assert comparisons_table(hand) is hand
    # symmetrize reads the same tables
    assert symmetrize(from_arena(pd.DataFrame({
        "model_a": ["a", "b"], "model_b": ["b", "a"], "winner": ["model_a", "tie (bothbad)"]
    })))["outcome"].tolist() == ["left", "tie"]


@pytest.mark.parametrize("kwargs, match", [
    ({"columns": {"nope": "left"}}, r"no column\(s\) \['nope'\]"),
    ({"columns": {"x": "lefty"}}, "unknown role"),
    ({"columns": {"x": "left", "y": "left"}}, "several columns"),
    ({"columns": {"v": "outcome"}, "outcomes": {"A": "win"}}, "outcomes maps labels"),
    ({"columns": {"x": "left", "y": "right", "v": "outcome"}, "outcomes": {"a": "left"}},
     r"label\(s\) \['c', ' B '\] at rows \[1, 2\]"),
    ({"columns": {"x": "q"}}, "unknown role"),
])
def test_bad_mappings_are_named(kwargs, match):
    with pytest.raises(DataValidationError, match=match):
        comparisons_table(SMALL, **kwargs)


def test_a_role_the_table_already_has_is_refused():
    with pytest.raises(DataValidationError, match=r"already has column\(s\) \['left'\]"):
        comparisons_table(SMALL.assign(left="z"), columns={"x": "left"})


def test_no_judge_column_is_one_judge_in_any_table():
    df = pd.DataFrame({"left": ["a", "b", "c"], "right": ["b", "c", "a"],
                       "prob": [0.7, 0.6, 0.4]})
    comps = validate_comparisons(df)
    assert comps.judges.tolist() == [ONE_JUDGE]


def test_rank_columns_and_outcomes_options(tmp_path, capsys):
    path = tmp_path / "theirs.csv"
    pd.concat([SMALL] * 3).to_csv(path, index=False)
    out = tmp_path / "r.csv"
    assert main(["rank", str(path), "--model", "davidson-bt", "--out", str(out),
                 "--columns", "x=left,y=right,v=outcome",
                 "--outcomes", "A=left,B=right,C=tie"]) == 0
    assert "x -> left" in capsys.readouterr().out
    # ids read as written (the mapped id columns are read as text)
    assert sorted(pd.read_csv(out, dtype=str)["item"]) == ["000", "1.1", "1.10"]


@pytest.mark.parametrize("args, match", [
    (["--columns", "x:left"], "--columns: 'x:left' is not NAME=VALUE"),
    (["--columns", "x=lefty"], "--columns: 'x=lefty' maps to 'lefty'"),
    (["--columns", "x=left,y=left"], "--columns maps several columns to left"),
    (["--outcomes", "A=win"], "--outcomes: 'A=win' maps to 'win'"),
    (["--outcomes", ""], "--outcomes is empty"),
])
def test_rank_bad_mapping_options_fail_before_reading(tmp_path, capsys, args, match):
    # the file does not exist: the option is checked first
    code = main(["rank", str(tmp_path / "missing.csv"), "--out", str(tmp_path / "r.csv"),
                 *args])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert match in err and "Fix:" in err


def test_rank_columns_naming_a_missing_column(tmp_path, capsys):
    path = tmp_path / "theirs.csv"
    SMALL.to_csv(path, index=False)
    code = main(["rank", str(path), "--out", str(tmp_path / "r.csv"),
                 "--columns", "model_x=left"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "--columns names column(s) ['model_x']" in err
