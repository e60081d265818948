"""Inputs that used to give a wrong answer without a word (a session's audit, 2026-11-28)."""

import warnings

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


def test_flat_tie_prior_refuses_comparisons_without_ties():
    # before: tie_logit ran to -33 (global) or -42 ... -80 (per judge), intervals +-1e17
    df = pd.DataFrame({"left": list("abcabc") * 3, "right": list("bcacab") * 3,
                       "outcome": ["left", "right", "left", "left", "right", "right"] * 3})
    with pytest.raises(DataValidationError, match=r"comparisons holds no tie"):
        bj.DavidsonBT(priors="flat").fit(df)
    df["judge"] = ["j1", "j2"] * 9
    df.loc[0, "outcome"] = "tie"
    with pytest.raises(DataValidationError, match=r"judge\(s\) \['j2'\] never said 'tie'"):
        bj.DavidsonBT(priors="flat", tie="per_judge").fit(df)
    # the default priors fit, and say where the tie logit's lower end comes from
    with pytest.warns(UserWarning, match=r"\['j2'\] never said 'tie': the data bound the tie "
                                         r"logit from above only.*comes from its prior"):
        bj.DavidsonBT(tie="per_judge").fit(df)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bj.DavidsonBT().fit(df)  # one tie in the table: a global tie logit is bounded
    with pytest.warns(UserWarning, match="comparisons holds no tie: the data bound"):
        bj.DavidsonBT().fit(df.assign(outcome=df["outcome"].replace("tie", "left")))


def test_separated_labels_have_no_flat_temperature():
    from bayesjudge.data.annotations import separated

    x = np.array([2.0, 1.0, -1.0, -2.0])
    assert separated(x, np.array([1, 1, 0, 0]), np.ones(4), bias=False)
    assert not separated(x, np.array([1, 0, 1, 0]), np.ones(4), bias=False)
    assert separated(x, np.array([1, 0, 0, 0]), np.ones(4), bias=True)  # threshold 1.5
    assert not separated(x, np.array([1, 0, 0, 0]), np.ones(4), bias=False)
    assert not separated(x, np.array([1, 0, 1, 0]), np.ones(4), bias=True)
    assert not separated(x, np.array([2, 1, 0, 0]), np.array([2, 2, 1, 1]), bias=False)
    # before: T = 0.029 with summarize() mean inf, sd NaN and laplace_ok True (case B: the
    # finite outputs hold one class, the other is only on exact-0 rows)
    out = pd.DataFrame({"item": list("abcdef"), "prob": [0.9, 0.8, 0.7, 0.95, 0.0, 0.0]})
    lab = pd.DataFrame({"item": list("abcdef"), "label": [1, 1, 1, 1, 0, 0]})
    with pytest.raises(DataValidationError, match=r"1/2 splits the labels"):
        bj.TemperatureScaling(priors="flat").fit(out, lab)


def _arena_file(path, header="rater,model_a,model_b,winner", trailing=""):
    rng = np.random.default_rng(12)
    pairs = [("007", "2"), ("007", "3"), ("7", "2"), ("7", "3"), ("1.10", "2"), ("1.1", "3"),
             ("2", "3")]
    rows = [f"h,{a},{b},{'model_a' if rng.random() < 0.5 else 'model_b'}{trailing}"
            for _ in range(20) for a, b in pairs]
    path.write_text("\n".join([header, *rows]) + "\n")
    return path


def test_cli_arena_ids_stay_text_when_columns_maps_others(tmp_path, capsys):
    from bayesjudge.cli import main

    src, out = _arena_file(tmp_path / "arena.csv"), tmp_path / "r.csv"
    # before: with --columns the library still mapped model_a/model_b, read as numbers:
    # 007 and 7 became one item 7.0 (4 items instead of 6), exit 0, no warning
    assert main(["rank", str(src), "--model", "bt", "--columns", "rater=judge",
                 "--out", str(out)]) == 0
    got = pd.read_csv(out, dtype={"item": str})["item"]
    assert sorted(got) == sorted(["007", "7", "1.10", "1.1", "2", "3"])
    # an explicit winner=outcome keeps Arena's labels (before: model_a was not an outcome)
    assert main(["rank", str(src), "--model", "bt", "--columns",
                 "rater=judge,model_a=left,model_b=right,winner=outcome",
                 "--out", str(out)]) == 0
    assert len(pd.read_csv(out)) == 6


def test_cli_out_path_ending_in_a_separator_is_refused_before_the_fit(tmp_path, capsys):
    from bayesjudge.cli import main

    src = _arena_file(tmp_path / "arena.csv")
    # before: the check probed 'results', the fit ran, then IsADirectoryError (exit 1)
    assert main(["rank", str(src), "--out", str(tmp_path / "results") + "/"]) == 2
    assert "is a folder" in capsys.readouterr().err


def test_cli_trailing_delimiter_keeps_the_columns(tmp_path, capsys):
    from bayesjudge.cli import main

    src = _arena_file(tmp_path / "arena.csv", trailing=",")
    out = tmp_path / "r.csv"
    # before: pandas made the first column the index and every column shifted by one
    assert main(["rank", str(src), "--model", "bt", "--columns", "rater=judge",
                 "--out", str(out)]) == 0
    assert len(pd.read_csv(out)) == 6


# -- second batch (2026-11-28, from the command-line audit's leftovers) -----------------


def _write(path, text):
    path.write_text(text)
    return str(path)


NUMERIC_VERDICTS = "left,right,outcome\na,b,1\nb,c,2\na,c,0\nc,a,1\nb,a,2\na,b,1\nc,b,0\n"


def test_cli_numeric_verdicts_meet_outcomes_and_levels(tmp_path, capsys):
    from bayesjudge.cli import main

    out = str(tmp_path / "r.csv")
    # before: the outcome column was read as numbers and --outcomes' keys are text:
    # "label(s) [1, 2, 0] outside the outcome map", exit 2
    src = _write(tmp_path / "num.csv", NUMERIC_VERDICTS)
    assert main(["rank", src, "--model", "davidson-bt", "--outcomes", "1=left,2=right,0=tie",
                 "--out", out]) == 0
    text = _write(tmp_path / "txt.csv", NUMERIC_VERDICTS.replace(",1\n", ",left\n")
                  .replace(",2\n", ",right\n").replace(",0\n", ",tie\n"))
    assert main(["rank", text, "--model", "davidson-bt", "--out", str(tmp_path / "t.csv")]) == 0
    pd.testing.assert_frame_equal(pd.read_csv(out), pd.read_csv(tmp_path / "t.csv"))
    # graded 1..5 with --levels (before: no label matched the levels)
    graded = _write(tmp_path / "g.csv", "judge,left,right,outcome\nj,a,b,5\nj,b,c,4\nj,a,c,3\n"
                    "k,c,a,1\nk,b,a,2\nk,a,b,4\nk,c,b,NA\n")
    assert main(["rank", graded, "--model", "ordinal", "--levels", "1,2,3,4,5",
                 "--out", out]) == 2  # the missing verdict is still named, by its line
    err = capsys.readouterr().err
    assert "missing" in err and "file lines [8]" in err
    # an --outcomes label that is also a missing-value marker is a label
    na = _write(tmp_path / "na.csv", "left,right,outcome\na,b,A\nb,c,B\na,c,N/A\nc,a,A\n")
    assert main(["rank", na, "--model", "davidson-bt", "--outcomes", "A=left,B=right,n/a=tie",
                 "--out", out]) == 0
    assert main(["rank", na, "--model", "davidson-bt", "--outcomes", "A=left,B=right",
                 "--out", out]) == 2
    assert "missing" in capsys.readouterr().err


def test_numeric_verdicts_meet_text_levels_in_python():
    df = pd.DataFrame({"judge": ["j"] * 6, "left": list("abacba"), "right": list("bccaab"),
                       "outcome": [5, 4, 3, 1, 2, 4]})
    fit_num = bj.OrdinalBT(levels=list("12345")).fit(df)
    fit_txt = bj.OrdinalBT(levels=list("12345")).fit(df.assign(outcome=df.outcome.astype(str)))
    pd.testing.assert_frame_equal(fit_num.ranking(), fit_txt.ranking())
    # 1.0 (a column with a gap, read as floats) is the label 1; keys may be numbers
    table = bj.data.comparisons_table(df.assign(outcome=[1.0, 2.0, 0.0, 1.0, 2.0, 1.0]),
                                      outcomes={1: "left", "2": "right", 0: "tie"})
    assert table["outcome"].tolist() == ["left", "right", "tie", "left", "right", "left"]
    with pytest.raises(DataValidationError, match="outside the outcome map"):
        bj.data.comparisons_table(df.assign(outcome=[1.5] * 6), outcomes={1: "left"})


def test_cli_rows_past_the_header_are_refused_and_trailing_delimiters_read(tmp_path, capsys):
    from bayesjudge.cli import main

    out = str(tmp_path / "r.csv")
    # before: the filled extra field was dropped with pandas' warning only
    extra = _write(tmp_path / "x.csv", "left,right,outcome\na,b,left,\nb,c,right,X\n"
                   "a,c,tie,\nc,a,left,\n")
    assert main(["rank", extra, "--model", "davidson-bt", "--out", out]) == 2
    assert "past its header's 3 columns on line(s) 3" in capsys.readouterr().err
    # a header ending in the delimiter too: the empty unnamed column is no column
    trail = _write(tmp_path / "t.csv", "left,right,outcome,\na,b,left,\nb,c,left,\n"
                   "a,c,tie,\nc,a,left,\n")  # every item won and lost: no separation
    assert main(["rank", trail, "--model", "davidson-bt", "--out", out]) == 0
    assert "warning" not in capsys.readouterr().err
    # leading blank lines (before: "the file is empty"); errors still name file lines
    blank = _write(tmp_path / "b.csv", "\n\nleft,right,outcome\na,b,left\nb,c,right\n"
                   "a,c,tie\nc,a,XX\n")
    assert main(["rank", blank, "--model", "davidson-bt", "--out", out]) == 2
    assert "file lines [7]" in capsys.readouterr().err


def test_cli_counts_summary_and_unwritable_outputs(tmp_path, capsys):
    import os

    from bayesjudge.cli import main

    src = _write(tmp_path / "n.csv", "left,right,outcome,n\na,b,left,5\nb,c,right,5\n"
                 "a,c,tie,5\nc,a,left,0\n")
    assert main(["rank", src, "--model", "davidson-bt", "--out", str(tmp_path / "r.csv")]) == 0
    # before: "on 4 comparisons" (rows, not n)
    assert "on 15 comparisons (4 rows counted by n)" in capsys.readouterr().out
    # a named pipe nobody reads: before, the write probe hung
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert main(["rank", src, "--out", str(fifo)]) == 2
    assert "named pipe" in capsys.readouterr().err
    if os.path.exists("/dev/full"):  # before: "internal error OSError ... please report it"
        assert main(["rank", src, "--model", "davidson-bt", "--out", "/dev/full"]) == 1
        err = capsys.readouterr().err
        assert "could not read or write /dev/full" in err and "internal" not in err
    # --out-dir under a folder that cannot hold folders (root ignores permissions)
    assert main(["demo", "--out-dir", "/proc/bayesjudge-demo"]) == 2
    err = capsys.readouterr().err  # (a user other than root is stopped by the permissions)
    assert "cannot be written" in err or "not writable" in err
    assert not os.path.exists("/proc/bayesjudge-demo")


def test_cli_calibrate_arguments_are_bounded(tmp_path, capsys):
    from bayesjudge.cli import main

    pred = _write(tmp_path / "p.csv", "item,prob\na,0.7\nb,0.2\nc,0.6\nd,0.4\n")
    lab = _write(tmp_path / "l.csv", "item,label\na,B\nb,A\nc,B\nd,A\n")
    out = str(tmp_path / "c.csv")
    # before: --probe 0 passed the argument check and failed after the files were read
    assert main(["calibrate", pred, "--labels", lab, "--method", "contextual", "--probe",
                 "0", "--out", out]) == 2
    assert "--probe gives a mean" in capsys.readouterr().err
    assert main(["calibrate", pred, "--labels", lab, "--boot", "100000000", "--out", out]) == 2
    assert "--boot must be at most 100,000" in capsys.readouterr().err


def test_anchored_flat_tie_prior_refuses_a_reference_without_ties():
    rows = [(f"b{i}", j, "a" if i % 2 else "b", "b" if i % 2 else "c",
             "left" if i % 3 else "right") for i in range(30) for j in ("human", "gpt")]
    df = pd.DataFrame(rows, columns=["battle", "judge", "left", "right", "outcome"])
    # before: the fit ran and failed with a generic "Hessian not negative definite"
    with pytest.raises(DataValidationError, match="never said 'tie'.*-inf"):
        bj.AnchoredBT(priors="flat").fit(df)
    with pytest.warns(UserWarning, match="'human' never said 'tie': the data bound its tie"):
        bj.AnchoredBT().fit(df)


def test_overflowing_laplace_draws_are_flagged():
    from types import SimpleNamespace

    from bayesjudge.engine.laplace import _flag_nonfinite

    fit = SimpleNamespace(laplace_ok=None)
    draws = {"T": np.array([[[1.0, 2.0], [np.inf, 2.5]]]), "b": np.zeros((1, 2, 3))}
    _flag_nonfinite(fit, draws)
    assert fit.laplace_ok["T"].tolist() == [False, True] and "b" not in fit.laplace_ok
    fit = SimpleNamespace(laplace_ok={"T": np.array([True, False])})
    _flag_nonfinite(fit, {"T": np.array([[[np.nan, 1.0]]])})
    assert fit.laplace_ok["T"].tolist() == [False, False]
