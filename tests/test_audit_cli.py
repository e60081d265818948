"""Command-line inputs that gave a wrong answer, a dead-end fix or no word (a session's audit,
2026-12-02): each case as a user met it, with what the command says now."""

import numpy as np
import pandas as pd
import pytest

from bayesjudge.cli import main
from bayesjudge.data import DataValidationError, comparisons_table


def _write(path, text):
    path.write_text(text)
    return str(path)


def _error(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and "Traceback" not in err[0], err
    return err[0]


ABC = ("judge,left,right,outcome\n" + "".join(
    f"j{k},{a},{b},{v}\n" for k in (1, 2) for a, b, v in
    [("a", "b", "A"), ("b", "c", "B"), ("c", "a", "C"), ("a", "c", "A"), ("b", "a", "A"),
     ("c", "b", "B"), ("a", "b", "C"), ("c", "a", "B")]))


def test_outcome_labels_differing_in_case_cannot_be_mapped_twice(tmp_path, capsys):
    # before: A=left,...,a=right silently read every "A" as a right win
    src, out = _write(tmp_path / "ab.csv", ABC), str(tmp_path / "r.csv")
    assert main(["rank", src, "--model", "davidson-bt", "--outcomes",
                 "A=left,B=right,C=tie,a=right", "--out", out]) == 2
    assert "names 'a' twice ('A' and 'a': labels are matched ignoring letter case)" in \
        _error(capsys)
    table = pd.DataFrame({"left": ["x"], "right": ["y"], "outcome": ["A"]})
    with pytest.raises(DataValidationError, match="maps one verdict label to several outcomes"):
        comparisons_table(table, outcomes={"A": "left", "a ": "right"})
    # the same label twice to the same outcome is harmless
    assert list(comparisons_table(table, outcomes={"A": "left", "a": "left"})["outcome"]) == \
        ["left"]


def test_a_label_holding_an_equals_sign_can_be_mapped(tmp_path, capsys):
    # Arena-Hard's tie label is "A=B": before, '--outcomes A=B=tie' was split at its first "="
    graded = tmp_path / "g.csv"
    rows = [("a", "b", "A>B"), ("b", "c", "A=B"), ("c", "a", "B>>A"), ("a", "c", "A>>B"),
            ("b", "a", "B>A"), ("c", "b", "A=B")]
    _write(graded, "judge,left,right,outcome\n" + "".join(f"j,{a},{b},{v}\n" for a, b, v in rows))
    out = tmp_path / "r.csv"
    assert main(["rank", str(graded), "--model", "davidson-bt", "--outcomes",
                 "A>>B=left,A>B=left,A=B=tie,B>A=right,B>>A=right", "--out", str(out)]) == 0
    assert sorted(pd.read_csv(out)["item"]) == ["a", "b", "c"]


def test_a_header_with_spaces_names_the_fix_that_works(tmp_path, capsys):
    # before: the suggested --columns ' left=left, ...' failed (names are stripped)
    src = _write(tmp_path / "s.csv", "judge, left, right, outcome\nj1, a, b, left\n")
    out = str(tmp_path / "r.csv")
    for extra in ([], ["--columns", " left=left, right=right, outcome=outcome"]):
        assert main(["rank", src, "--model", "davidson-bt", "--out", out, *extra]) == 2
        assert "Fix: remove the spaces around the names in the header line" in _error(capsys)


@pytest.mark.parametrize("args", [
    ["rank", "{ab}", "--outcomes", "A=left,B=right,C=tie", "--out", "{out}", "--judges", ""],
    ["rank", "{ab}", "--outcomes", "A=left,B=right,C=tie", "--out", "{out}",
     "--differences", " "],
    ["report", "{judg}", "--calibration", "{cal}", "--out", ""],
    ["demo", "--out-dir", ""],
])
def test_an_empty_output_path_is_refused_not_ignored(tmp_path, capsys, args):
    # before: --judges "" (an unset shell variable) wrote nothing and said nothing
    files = {"ab": _write(tmp_path / "ab.csv", ABC), "out": str(tmp_path / "r.csv"),
             "judg": _write(tmp_path / "j.csv", "item,judge_label\n1,1\n2,0\n"),
             "cal": _write(tmp_path / "c.csv", "item,judge_label,human_label\n3,1,1\n4,0,0\n")}
    assert main([a.format(**files) for a in args]) == 2
    assert "is empty" in _error(capsys)
    assert not (tmp_path / "r.csv").exists()


def test_decimal_grades_meet_integer_levels(tmp_path, capsys):
    # models/ordinal.md: --levels 1,2,3,4,5 reads 1 .. 5 or 1.0 .. 5.0 (before: refused)
    rows = [("a", "b", 4), ("b", "c", 3), ("c", "a", 1), ("a", "c", 5), ("b", "a", 2),
            ("c", "b", 4), ("a", "b", 5), ("c", "a", 2)]
    as_int = _write(tmp_path / "i.csv", "judge,left,right,outcome\n" + "".join(
        f"j,{a},{b},{v}\n" for a, b, v in rows))
    as_dec = _write(tmp_path / "d.csv", "judge,left,right,outcome\n" + "".join(
        f"j,{a},{b},{v}.0\n" for a, b, v in rows))
    outs = []
    for src in (as_int, as_dec):
        outs.append(tmp_path / f"o{len(outs)}.csv")
        assert main(["rank", src, "--model", "ordinal", "--levels", "1,2,3,4,5",
                     "--out", str(outs[-1])]) == 0, capsys.readouterr().err
    pd.testing.assert_frame_equal(pd.read_csv(outs[0]), pd.read_csv(outs[1]))
    # and the other way round: levels written as decimals, verdicts as integers
    assert main(["rank", as_int, "--model", "ordinal", "--levels", "1.0,2.0,3.0,4.0,5.0",
                 "--out", str(outs[0])]) == 0
    # "1" and "1.0" are one level
    assert main(["rank", as_int, "--model", "ordinal", "--levels", "1,1.0,2",
                 "--out", str(outs[0])]) == 2
    assert "are the same label" in _error(capsys)


def test_library_advice_is_given_in_command_line_words(tmp_path, capsys):
    src, out = _write(tmp_path / "ab.csv", ABC), str(tmp_path / "r.csv")
    assert main(["rank", src, "--model", "bt-sigma", "--per-aspect", "--outcomes",
                 "A=left,B=right,C=tie", "--out", out]) == 2
    err = _error(capsys)
    assert "drop --per-aspect" in err and "per_aspect=" not in err
    assert main(["rank", src, "--model", "davidson-bt", "--out", out]) == 2
    err = _error(capsys)
    assert "--outcomes A=left,B=right,draw=tie" in err and "{" not in err


def test_a_row_in_another_delimiter_than_the_header_is_named(tmp_path, capsys):
    # before: "column 'judge' is empty ... Fill in the ids"
    src = _write(tmp_path / "m.csv", "judge,left,right,outcome\nj;a;b;left\nj;b;c;right\n")
    assert main(["rank", src, "--model", "davidson-bt", "--out", str(tmp_path / "r.csv")]) == 2
    assert ("header line is comma-separated but its first row is semicolon-separated"
            in _error(capsys))


def test_probabilities_read_as_hard_outcomes_are_said_so(tmp_path, capsys):
    rows = [("a", "b", 0.51), ("b", "c", 0.99), ("c", "a", 0.01), ("a", "c", 0.49),
            ("b", "a", 0.5), ("c", "b", 0.7)]
    src = _write(tmp_path / "p.csv", "judge,left,right,prob\n" + "".join(
        f"j,{a},{b},{p}\n" for a, b, p in rows))
    assert main(["rank", src, "--model", "bt", "--kind", "hard",
                 "--out", str(tmp_path / "r.csv")]) == 0
    assert "prob read as outcomes (--kind hard)" in capsys.readouterr().out


def test_a_clipped_closed_form_estimate_is_flagged(tmp_path, capsys):
    # every test item judged 1, q1 = 11/12, q0 = 10/12: eq. 5 gives 1.11, reported as 1.000
    judg = _write(tmp_path / "j.csv", "item,judge_label\n" + "".join(
        f"t{i},1\n" for i in range(75)))
    cal = _write(tmp_path / "c.csv", "item,judge_label,human_label\n" + "".join(
        f"c{i},{int(i < 11)},1\n" for i in range(12)) + "".join(
        f"d{i},{int(i >= 10)},0\n" for i in range(12)))
    out = tmp_path / "rep.csv"
    assert main(["report", judg, "--calibration", cal, "--out", str(out)]) == 0
    row = pd.read_csv(out).iloc[0]
    assert row["adjusted"] == 1.0 and row["upper"] > row["lower"]
    assert row["flag"] == "clipped"
    assert "^ the Rogan-Gladen value (eq. 5) lies outside [0, 1]" in capsys.readouterr().out


def test_metrics_name_the_one_judge_alike_on_every_row(tmp_path, capsys):
    rng = np.random.default_rng(0)
    items = [f"i{k:02d}" for k in range(30)]
    pred = _write(tmp_path / "p.csv", "item,prob\n" + "".join(
        f"{i},{rng.uniform(0.05, 0.95):.3f}\n" for i in items))
    ann = _write(tmp_path / "a.csv", "item,annotator,label\n" + "".join(
        f"{i},w{w},{'AB'[int(rng.random() < 0.5)]}\n" for i in items for w in range(3)))
    out = tmp_path / "m.csv"
    assert main(["metrics", pred, "--labels", ann, "--boot", "100", "--out", str(out)]) == 0
    table = pd.read_csv(out)
    assert {"alignment_error", "noise_floor"} <= set(table["metric"])
    assert table["judge"].nunique() == 1
