"""Wide comparison tables, one verdict column per judge (``comparisons_table(...,
judge_columns=...)``, ``bayesjudge rank --judge-columns``).

The acceptance case: arena_ppr's ``battles_wide.csv`` (the PPR authors' layout) becomes,
row for row, the long ``battles.csv`` shipped beside it, and the command line ranks the
wide file as it ranks the long one.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import bayesjudge as bj
from bayesjudge.cli import main
from bayesjudge.data import DataValidationError, comparisons_table, validate_comparisons
from bayesjudge.datasets.files import SHARED_DATA
from bayesjudge.models.anchored.simulate import simulate_battles

ARENA = SHARED_DATA / "arena_ppr"
JUDGES = ["human", "gpt-4-0125-preview", "claude-3-opus-20240229", "gpt-3.5-turbo"]


@pytest.mark.skipif(not (ARENA / "battles_wide.csv").exists(),
                    reason="../shared/data/arena_ppr is not here")
def test_arena_ppr_wide_file_is_the_long_file_row_for_row():
    wide = pd.read_csv(ARENA / "battles_wide.csv", dtype=str, keep_default_na=False)
    long = pd.read_csv(ARENA / "battles.csv", dtype=str, keep_default_na=False)
    out = comparisons_table(wide, columns={"item": "battle"}, judge_columns=JUDGES)
    assert len(out) == len(long) == 4 * len(wide) == 107_676
    for mine, theirs in [("judge", "judge"), ("battle", "item"), ("left", "left"),
                         ("right", "right"), ("outcome", "outcome"), ("question_id", "context")]:
        assert out[mine].tolist() == long[theirs].tolist(), mine
    # each verdict keeps its wide row's label (errors name the user's rows)
    np.testing.assert_array_equal(out.index.to_numpy(), np.repeat(np.arange(len(wide)), 4))
    assert list(out.columns) == ["judge", "battle", "question_id", "left", "right", "outcome"]


WIDE = pd.DataFrame({"battle": ["007", "7", "1.10", "x"],
                     "left": ["007", "b", "c", "a"], "right": ["b", "c", "007", "c"],
                     "NA": ["left", None, "TIE", None],
                     "1": ["right", "left", None, None]})


def test_rows_follow_the_table_and_the_columns_order_and_empty_cells_give_none():
    with pytest.warns(UserWarning, match=r"1 row\(s\) have no verdict in any of the judge "
                      r"columns \['NA', '1'\] \(at rows \[3\]\)") as caught:
        out = comparisons_table(WIDE, judge_columns=["NA", "1"])
    assert caught[0].filename == __file__  # the warning names the caller's line
    assert out["judge"].tolist() == ["NA", "1", "1", "NA"]  # ids as written
    assert out["battle"].tolist() == ["007", "007", "7", "1.10"]
    assert out["outcome"].tolist() == ["left", "right", "left", "TIE"]
    assert out.index.tolist() == [0, 0, 1, 2]
    comps = validate_comparisons(out.drop(columns="battle"))
    assert comps.items.tolist() == ["007", "b", "c"] and comps.judges.tolist() == ["NA", "1"]
    assert comps.n_rows == 4
    # the columns' order sets the rows' order within a table row
    swapped = comparisons_table(WIDE.iloc[:3], judge_columns=["1", "NA"])
    assert swapped["judge"].tolist() == ["1", "NA", "1", "NA"]


def test_a_bad_verdict_in_a_wide_table_is_named_at_its_row():
    bad = WIDE.iloc[:3].assign(**{"1": ["right", "maybe", None]})
    with pytest.raises(DataValidationError, match=r"'maybe'.* at rows \[1\]"):
        validate_comparisons(comparisons_table(bad, judge_columns=["NA", "1"]).drop(
            columns="battle"))


def test_wide_probabilities_fit_as_the_long_table_does():
    rng = np.random.default_rng(3)
    items = np.array(["a", "b", "c", "d"], dtype=object)
    i = rng.integers(0, 4, 60)
    j = (i + rng.integers(1, 4, 60)) % 4
    wide = pd.DataFrame({"left": items[i], "right": items[j],
                         "gpt": rng.uniform(0.05, 0.95, 60), "claude": rng.uniform(0, 1, 60)})
    wide.loc[::7, "claude"] = np.nan
    long = pd.concat([
        wide.assign(judge=k, prob=wide[k])[["judge", "left", "right", "prob"]]
        for k in ("gpt", "claude")]).dropna(subset=["prob"])
    out = comparisons_table(wide, judge_columns=["gpt", "claude"], judge_values="prob")
    assert len(out) == len(long) == 120 - len(wide.index[::7])
    by_wide = bj.BTSigma(random_seed=0).fit(out)
    by_long = bj.BTSigma(random_seed=0).fit(long)
    # same comparisons in another row order: the same MAP (items in first-appearance order)
    a = by_wide.ranking().set_index("item")["skill"]
    b = by_long.ranking().set_index("item")["skill"]
    np.testing.assert_allclose(a.sort_index(), b.sort_index(), rtol=0, atol=1e-6)


@pytest.mark.parametrize("kwargs, match", [
    ({"judge_columns": ["NA", "nope"]}, r"names column\(s\) \['nope'\] the table lacks"),
    ({"judge_columns": ["NA", "NA"]}, r"names \['NA'\] twice"),
    ({"judge_columns": []}, "judge_columns is empty"),
    ({"judge_columns": "NA"}, r"must be a list of column names, got 'NA'. Fix: e.g. "
                              r"judge_columns=\['NA'\]"),
    ({"judge_columns": ["NA"], "judge_values": "label"}, "judge_values must be 'outcome'"),
    ({"judge_columns": ["NA", "1"], "columns": {"1": "outcome"}},
     r"columns maps judge column\(s\) \['1'\]"),
    ({"judge_columns": ["NA"], "columns": {"1": "judge"}},
     r"already has \(or columns maps to\) \['judge'\]"),
])
def test_bad_wide_arguments_are_named(kwargs, match):
    with pytest.raises(DataValidationError, match=match):
        comparisons_table(WIDE, **kwargs)


def test_a_wide_table_with_a_judge_or_outcome_column_is_refused():
    for extra in ("judge", "outcome"):
        with pytest.raises(DataValidationError, match=rf"already has .*\['{extra}'\]"):
            comparisons_table(WIDE.assign(**{extra: "z"}), judge_columns=["NA", "1"])


@pytest.fixture(scope="module")
def battles(tmp_path_factory):
    """A simulated battle table, long and wide (one verdict column per judge)."""
    long, _ = simulate_battles(np.linspace(-1, 1, 5), 200, random_seed=2, reference_share=0.5)
    order = list(pd.unique(long["judge"]))
    wide = long.pivot(index="battle", columns="judge", values="outcome")[order]
    firsts = long.drop_duplicates("battle").set_index("battle")[["left", "right"]]
    wide = firsts.join(wide).reset_index()
    folder = tmp_path_factory.mktemp("wide")
    wide.to_csv(folder / "wide.csv", index=False)
    long.to_csv(folder / "long.csv", index=False)
    return folder, order, len(wide), len(long)


@pytest.mark.parametrize("model", ["davidson-bt", "anchored"])
def test_the_command_line_ranks_a_wide_file_as_the_long_one(battles, tmp_path, capsys, model):
    folder, order, n_wide, n_long = battles
    for name, extra in (("long", []), ("wide", ["--judge-columns", ",".join(order)])):
        assert main(["rank", str(folder / f"{name}.csv"), "--model", model, "--out",
                     str(tmp_path / f"{name}.csv"), "--judges", str(tmp_path / f"j-{name}.csv"),
                     *extra]) == 0
    printed = capsys.readouterr().out
    assert (f"wide file: 4 judge columns x {n_wide} rows -> {n_long} verdicts "
            f"({4 * n_wide - n_long} empty cells: verdicts not given)") in printed
    for name in ("", "j-"):
        a = pd.read_csv(tmp_path / f"{name}long.csv")
        b = pd.read_csv(tmp_path / f"{name}wide.csv")
        if model == "davidson-bt":  # row order differs: the same fit, items and judges
            key = "item" if not name else "judge"
            a, b = a.sort_values(key, kind="stable"), b.sort_values(key, kind="stable")
            a, b = a.reset_index(drop=True), b.reset_index(drop=True)
        pd.testing.assert_frame_equal(a, b, atol=1e-6, check_exact=False)


@pytest.mark.parametrize("extra, expect", [
    (["--judge-values", "prob"], "--judge-values applies with --judge-columns only"),
    (["--judge-columns", "human,,human"], "--judge-columns names human twice"),
    (["--judge-columns", " , "], "--judge-columns is empty"),
    (["--judge-columns", "human,gpt", "--columns", "gpt=outcome"],
     "--columns maps ['gpt'], which --judge-columns makes judges' verdict columns"),
    (["--judge-columns", "human,gpt"], "--judge-columns names column(s) ['gpt'] that FILE "
                                       "does not have; its columns are ['battle', 'left', "
                                       "'right', 'human', 'judge-good']"),
    ([], "FILE has no outcome (or prob) column, and its columns ['human', 'judge-good'] hold "
         "left / right / tie verdicts: a wide file with one column per judge. Fix: "
         "--judge-columns human,judge-good."),
])
def test_wide_file_options_fail_before_any_work_in_one_line(tmp_path, capsys, extra, expect):
    path = tmp_path / "w.csv"
    path.write_text("battle,left,right,human,judge-good\nb1,a,b,left,tie\nb2,b,c,,right\n")
    out = tmp_path / "r.csv"
    assert main(["rank", str(path), "--model", "davidson-bt", "--out", str(out), *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("error: ") and "Traceback" not in err
    assert expect.replace("FILE", repr(str(path))) in err, err
    assert not out.exists()


def test_a_bad_verdict_in_a_wide_file_names_its_file_line(tmp_path, capsys):
    path = tmp_path / "w.csv"
    path.write_text("left,right,h,g\na,b,left,tie\nb,c,,maybe\nc,a,right,left\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = main(["rank", str(path), "--model", "davidson-bt", "--judge-columns", "h,g",
                     "--out", str(tmp_path / "r.csv")])
    assert code == 2
    err = capsys.readouterr().err
    assert "'maybe'" in err and "file lines [3]" in err, err
