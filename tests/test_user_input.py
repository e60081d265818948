"""What a new user meets with hand-written tables (issue 18, point 9): ids that differ only
by spaces are kept but warned about, a repeated header line is named as such, outcome labels
ignore letter case and surrounding spaces, errors name file lines for files and index
labels for DataFrames, ``bayesjudge rank`` reports Davidson's global tie parameter, and
predicting for an unknown judge says how to get the consensus prediction."""

import io
import warnings

import numpy as np
import pandas as pd
import pytest
from lookalike_ids import comparisons, lookalike_cases

from bayesjudge import DavidsonBT
from bayesjudge.cli import main
from bayesjudge.data import (
    DataValidationError,
    validate_annotations,
    validate_comparisons,
    validate_votes,
)
from bayesjudge.datasets import SUMMEVAL_ASPECTS, load_summeval
from bayesjudge.metrics import comparison_probs
from bayesjudge.metrics.calibration import as_binary_labels
from bayesjudge.rewards import swap_augment


def _one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err
    return lines[0]


# ------------------------------------------------------------ ids differing by spaces

# leading / trailing spaces of every kind
SPACED = lookalike_cases(lambda x: f" {x}\t")


@pytest.mark.parametrize("validate, table, column, ids", SPACED,
                         ids=[s[2] for s in SPACED])
def test_ids_differing_only_by_spaces_warn_and_stay_distinct(validate, table, column, ids):
    with pytest.warns(UserWarning, match="differ only by leading/trailing spaces") as got:
        validate(table)
    text = str(got[0].message)
    assert column in text and all(repr(i) in text for i in ids), text
    # the fix names each real column (not the characters of "item" or "left/right")
    fix = "; ".join(f"df[{c!r}] = df[{c!r}].str.strip()"
                    for c in column.split(".")[1].split("/"))
    assert f"(pandas: {fix})" in text, text
    assert got[0].filename == __file__  # attributed to the caller's line, not the library
    # the ids are not altered: both spellings are kept, exactly as written
    seen = set(np.concatenate([table[c].to_numpy(object) for c in column.split(".")[1]
                               .split("/")]))
    assert set(ids) <= seen
    if validate is validate_comparisons:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the warning was checked above
            comps = validate(table)
        kept = {"comparisons.judge": comps.judges, "comparisons.left/right": comps.items,
                "comparisons.context": comps.contexts, "comparisons.aspect": comps.aspects}
        assert set(ids) <= set(kept[column])


def test_spaced_ids_without_a_twin_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        comps = validate_comparisons(comparisons(left=[" a", "b", " a", "b"],
                                                  right=["b", " a", "b", " a"]))
    assert list(comps.items) == [" a", "b"]


# ---------------------------------------------------------------- repeated header

REPEATED = "judge,left,right,outcome\nj,a,b,left\nj,b,c,right\njudge,left,right,outcome\n" \
           "j,a,c,tie\n"


def test_repeated_header_in_a_dataframe_names_its_row():
    table = pd.read_csv(io.StringIO(REPEATED), dtype=str)
    with pytest.raises(DataValidationError, match=r"repeated header line at rows \[2\]"):
        validate_comparisons(table)


@pytest.mark.parametrize("command, text, extra", [
    ("rank", REPEATED, []),
    ("rank", "judge,left,right,prob\nj,a,b,0.7\n\njudge,left,right,prob\nj,b,a,0.4\n", []),
    ("aggregate", "item,vote\na,1\nb,0\nitem,vote\n", ["--calibration", "LABELS"]),
])
def test_repeated_header_in_a_file_names_its_line(tmp_path, capsys, command, text, extra):
    (tmp_path / "in.csv").write_text(text)
    (tmp_path / "labels.csv").write_text("item,label\na,1\nb,0\n")
    extra = [str(tmp_path / "labels.csv") if e == "LABELS" else e for e in extra]
    assert main([command, str(tmp_path / "in.csv"), *extra, "--out",
                 str(tmp_path / "out.csv")]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert "repeated header line at file lines [4]" in line, line


def test_repeated_header_in_a_loaded_file_is_named(tmp_path):
    header = ",".join(["doc_id", "system", *SUMMEVAL_ASPECTS])
    row = ",".join(["d1", "M0", *["3"] * len(SUMMEVAL_ASPECTS)])
    (tmp_path / "summeval.csv").write_text(f"{header}\n{row}\n{header}\n")
    with pytest.raises(DataValidationError, match="repeated header line"):
        load_summeval(tmp_path / "summeval.csv")


# ----------------------------------------------------------- labels ignore case

def test_outcome_labels_ignore_case_and_spaces():
    mixed = comparisons(outcome=["Left", " RIGHT", "TIE ", "lEfT"])
    plain = comparisons(outcome=["left", "right", "tie", "left"])
    a, b = validate_comparisons(mixed), validate_comparisons(plain)
    np.testing.assert_array_equal(a.outcomes, b.outcomes)
    np.testing.assert_array_equal(a.prob_sum, b.prob_sum)
    np.testing.assert_array_equal(comparison_probs(mixed), [1.0, 0.0, 0.5, 1.0])
    with pytest.raises(DataValidationError, match=r"found \['win'\] at rows \[1\]"):
        validate_comparisons(comparisons(outcome=["left", "win", "tie", "left"]))


def test_preference_labels_ignore_case_and_spaces():
    counts = validate_annotations(pd.DataFrame({"item": ["i"] * 3, "annotator": ["x", "y", "z"],
                                                "label": [" a", "B ", "Tie"]}))
    assert counts.counts.tolist() == [[1, 1, 1]]
    flipped = swap_augment(pd.DataFrame({"item": ["i", "j"], "label": [" a ", "b\t"]}))
    assert flipped["label"].tolist()[2:] == ["B", "A"]
    np.testing.assert_array_equal(as_binary_labels(np.array(["b", " A", "B"], dtype=object),
                                                   "labels"), [1.0, 0.0, 1.0])


# ------------------------------------------------------- rows and file lines

@pytest.mark.parametrize("command, files, line", [
    ("rank", {"in": "judge,left,right,prob\nj,a,b,0.6\nj,b,a,1.5\n"}, 3),
    # a blank line is skipped by the reader but still counts as a line of the file
    ("rank", {"in": "judge,left,right,prob\nj,a,b,0.6\n\nj,b,c,0.2\nj,b,a,70\n"}, 5),
    ("rank", {"in": 'judge,left,right,outcome\nj,"a\nb",c,left\nj,c,c,right\n'}, 4),
    ("rank", {"in": "judge,left,right,outcome\nj,a,b,left\nj,b,a,wins\n"}, 3),
    ("aggregate", {"in": "item,vote\na,1\nb,2\n", "labels": "item,label\na,1\n"}, 3),
    ("aggregate", {"in": "item,vote\na,1\nb,0\n", "labels": "item,label\na,1\nb,5\n"}, 3),
    ("report", {"in": "item,judge_label\na,1\nb,3\n",
                "calibration": "item,judge_label,human_label\nc,1,1\nd,0,0\n"}, 3),
    ("metrics", {"in": "item,prob\na,0.5\nb,1.5\n", "labels": "item,label\na,A\nb,B\n"}, 3),
    ("metrics", {"in": "item,prob\na,0.5\nb,0.5\n",
                 "labels": "item,annotator,label\na,x,A\nb,x,maybe\n"}, 3),
])
def test_cli_errors_name_file_lines(tmp_path, capsys, command, files, line):
    for name, text in files.items():
        (tmp_path / f"{name}.csv").write_text(text)
    flags = {"labels": "--labels" if command == "metrics" else "--calibration",
             "calibration": "--calibration"}
    args = [command, str(tmp_path / "in.csv")]
    for name in files:
        if name != "in":
            args += [flags[name], str(tmp_path / f"{name}.csv")]
    assert main(args + ["--out", str(tmp_path / "out.csv")]) == 2
    err = _one_error_line(capsys.readouterr().err)
    assert f"file lines [{line}]" in err and "rows [" not in err, err


def test_dataframe_errors_name_index_labels():
    votes = pd.DataFrame({"item": ["a", "b", "c"], "vote": [1, 2, 0]}, index=["r1", "r2", "r3"])
    with pytest.raises(DataValidationError, match=r"at rows \['r2'\]"):
        validate_votes(votes)
    with pytest.raises(DataValidationError, match=r"at rows \[1\]"):
        validate_votes(votes.reset_index(drop=True))


# ------------------------------------------- Davidson's tie parameter on the CLI

def _hard_jury() -> pd.DataFrame:
    """3 judges x every ordered pair of 4 items, hard outcomes with ties."""
    skill = {"007": 1.0, "b": 0.3, "c": -0.3, "d": -1.0}
    rows = []
    for judge, shift in (("j1", 0.0), ("j2", 0.2), ("j3", -0.2)):
        for a in skill:
            for b in skill:
                if a != b:
                    d = skill[a] - skill[b] + shift
                    rows.append((judge, a, b, "left" if d > 0.5 else "right" if d < -0.5
                                 else "tie"))
    return pd.DataFrame(rows, columns=["judge", "left", "right", "outcome"])


@pytest.fixture(scope="module")
def davidson():
    table = _hard_jury()
    return table, DavidsonBT(random_seed=0).fit(table)


def test_rank_reports_the_global_tie_parameter(davidson, tmp_path, capsys):
    table, model = davidson
    table.to_csv(tmp_path / "c.csv", index=False)
    out, judges = tmp_path / "r.csv", tmp_path / "j.csv"
    assert main(["rank", str(tmp_path / "c.csv"), "--model", "davidson-bt", "--out", str(out),
                 "--judges", str(judges), "--level", "0.9"]) == 0
    printed = capsys.readouterr().out
    assert "tie_logit" in printed and "shared by all judges" in printed
    got = pd.read_csv(judges, dtype={"judge": str})
    assert got["judge"].tolist() == ["j1", "j2", "j3"]
    summary = model.summarize(ci_prob=0.9).loc["tie_logit"]
    for col, ref in (("tie_logit", summary["map"]), ("tie_logit_lower", summary["eti90_lb"]),
                     ("tie_logit_upper", summary["eti90_ub"])):
        np.testing.assert_allclose(got[col], ref, rtol=1e-6, atol=1e-8)  # same on every row
        nu = np.exp(ref)  # Davidson: P(tie | equal skills) = nu / (2 + nu)
        np.testing.assert_allclose(got[col.replace("tie_logit", "p_tie_equal")],
                                   nu / (2 + nu), rtol=1e-6)
    assert (got["tie_logit_lower"] < got["tie_logit"]).all()
    assert (got["tie_logit"] < got["tie_logit_upper"]).all()


def test_predict_for_an_unknown_judge_names_the_consensus(davidson):
    _, model = davidson
    pairs = pd.DataFrame({"left": ["007", "b"], "right": ["b", "c"], "judge": ["j1", "j9"]})
    with pytest.raises(DataValidationError) as err:
        model.predict(pairs)
    text = str(err.value)
    assert "['j9']" in text and "rows [1]" in text
    assert "drop the judge column" in text and "consensus" in text
    consensus = model.predict(pairs.drop(columns="judge"))  # the advice works
    np.testing.assert_allclose(consensus[["p_left", "p_tie", "p_right"]].sum(axis=1), 1.0)
