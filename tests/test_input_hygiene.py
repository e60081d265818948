"""Input hygiene left over from issue 18 (points 9 and 7): a table naming a column twice is
refused at the one validation entry point (every table family, and on the command line);
ids that differ only by letter case within a column, or that match across two files only
after stripping spaces / ignoring case, are warned about and never merged; the batch
calibration baseline no longer depends on a hidden clipping constant for exact 0/1."""

import io
import warnings

import numpy as np
import pandas as pd
import pytest
from lookalike_ids import comparisons, lookalike_cases
from scipy.special import expit, logit

from bayesjudge.baselines import BatchCalibration
from bayesjudge.cli import main
from bayesjudge.data import (
    DataValidationError,
    validate_annotations,
    validate_calibration,
    validate_comparisons,
    validate_judge_outputs,
    validate_judgments,
    validate_labels,
    validate_misclassification,
    validate_votes,
)


def _dup(columns, *rows) -> pd.DataFrame:
    return pd.DataFrame(list(rows), columns=columns)


# ------------------------------------------------------------ duplicated column names

# (validator, table whose columns repeat a name, the repeated name)
DUPLICATED = [
    (validate_votes, _dup(["item", "vote", "item"], ["a", 1, "a"], ["b", -1, "b"]), "item"),
    (validate_votes, _dup(["item", "n_pos", "n_tie", "n_neg", "n_pos"], ["a", 1, 0, 0, 1]),
     "n_pos"),
    (validate_labels, _dup(["item", "label", "label"], ["a", 1, 1]), "label"),
    (validate_comparisons, _dup(["judge", "left", "right", "outcome", "judge"],
                                ["j", "a", "b", "left", "j"], ["j", "b", "a", "tie", "j"]),
     "judge"),
    (validate_comparisons, _dup(["judge", "left", "right", "prob", "prob"],
                                ["j", "a", "b", 0.6, 0.6]), "prob"),
    (validate_judgments, _dup(["item", "judge_label", "item"], ["a", 1, "a"]), "item"),
    (validate_calibration, _dup(["item", "judge_label", "human_label", "human_label"],
                                ["a", 1, 1, 1]), "human_label"),
    (validate_annotations, _dup(["item", "annotator", "label", "annotator"],
                                ["a", "x", "A", "x"]), "annotator"),
    (validate_judge_outputs, _dup(["item", "prob", "judge", "judge"], ["a", 0.2, "k", "k"]),
     "judge"),
    # a repeated column the table family does not read is refused too (which is meant?)
    (validate_votes, _dup(["item", "vote", "note", "note"], ["a", 1, "x", "y"]), "note"),
]


@pytest.mark.parametrize("validate, table, column", DUPLICATED,
                         ids=[f"{t[0].__name__}-{t[2]}" for t in DUPLICATED])
def test_duplicated_column_names_are_refused_by_name(validate, table, column):
    with pytest.raises(DataValidationError, match="more than once") as err:
        validate(table)
    text = str(err.value)
    assert f"[{column!r}]" in text and "rename or drop" in text, text


def test_a_repeated_header_name_renamed_by_read_csv_is_refused():
    """pd.read_csv reads a header naming `judge` twice as `judge`, `judge.1`."""
    table = pd.read_csv(io.StringIO("judge,left,right,outcome,judge\nj,a,b,left,k\n"
                                    "j,b,a,tie,k\n"))
    assert list(table.columns)[-1] == "judge.1"
    with pytest.raises(DataValidationError, match=r"\['judge'\] more than once") as err:
        validate_comparisons(table)
    assert "judge.1" in str(err.value) and "df.drop(columns=['judge.1'])" in str(err.value)
    # a column of that form is fine when the table does not read its base name
    with pytest.warns(UserWarning, match=r"\['note', 'note.1'\] that are not used"):
        validate_votes(pd.DataFrame({"item": ["a"], "vote": [1], "note": ["x"], "note.1": ["y"]}))
    with pytest.warns(UserWarning, match=r"\['vote.x'\] that are not used"):
        validate_votes(pd.DataFrame({"item": ["a"], "vote": [1], "vote.x": ["y"]}))


def test_duplicated_columns_are_refused_in_two_table_validation():
    judgments = _dup(["item", "judge_label", "judge_label"], ["a", 1, 1], ["b", 0, 0])
    calibration = pd.DataFrame({"item": ["c", "d"], "judge_label": [1, 0],
                                "human_label": [1, 0]})
    with pytest.raises(DataValidationError, match=r"judgments has column\(s\) \['judge_label'\]"):
        validate_misclassification(judgments, calibration)


@pytest.mark.parametrize("command, text, extra", [
    ("rank", "judge,left,right,outcome,judge\nj,a,b,left,j\nj,b,a,tie,j\n", []),
    ("aggregate", "item,vote,vote\na,1,1\nb,0,0\n", ["--calibration", "LABELS"]),
])
def test_duplicated_column_in_a_file_is_one_line_exit_2(tmp_path, capsys, command, text,
                                                        extra):
    (tmp_path / "in.csv").write_text(text)
    (tmp_path / "labels.csv").write_text("item,label\na,1\nb,0\n")
    extra = [str(tmp_path / "labels.csv") if e == "LABELS" else e for e in extra]
    assert main([command, str(tmp_path / "in.csv"), *extra, "--out",
                 str(tmp_path / "out.csv")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and "more than once" in err[0], err
    assert not (tmp_path / "out.csv").exists()


# ------------------------------------------------------------ ids differing by case

# another letter case; in left/right with surrounding spaces as well
CASED = [*lookalike_cases(str.upper),
         (validate_comparisons, comparisons(left=["Mistral-Large", "b", "a", "b"],
                                            right=["b", " mistral-large", "b", "a"]),
          "comparisons.left/right", ["Mistral-Large", " mistral-large"])]


@pytest.mark.parametrize("validate, table, column, ids", CASED, ids=[s[2] for s in CASED])
def test_ids_differing_only_by_case_warn_and_stay_distinct(validate, table, column, ids):
    with pytest.warns(UserWarning, match="differ only by letter case") as got:
        validate(table)
    text = str(got[0].message)
    assert column in text and all(repr(i) in text for i in ids), text
    assert "kept as different ids" in text and "write them the same way" in text
    assert got[0].filename == __file__  # attributed to the caller's line, not the library
    if validate is validate_comparisons:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the warning was checked above
            comps = validate(table)
        kept = {"comparisons.judge": comps.judges, "comparisons.left/right": comps.items,
                "comparisons.context": comps.contexts, "comparisons.aspect": comps.aspects}
        assert set(ids) <= set(kept[column])  # never merged


def test_case_distinct_ids_are_kept_in_the_counts():
    with pytest.warns(UserWarning, match="letter case"):
        counts = validate_votes(pd.DataFrame({"item": ["GPT-4", "gpt-4", "GPT-4"],
                                              "vote": [1, -1, 1]}))
    assert list(counts.items) == ["GPT-4", "gpt-4"]
    assert counts.counts.tolist() == [[2, 0, 0], [0, 0, 1]]


@pytest.mark.parametrize("table", [
    pd.DataFrame({"item": ["a", "b", "A1", "B2"], "vote": [1, 0, -1, 1]}),  # no twins
    pd.DataFrame({"item": [1, 2, 3], "vote": [1, 0, -1]}),  # numbers
])
def test_ids_without_a_case_twin_do_not_warn(table):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        validate_votes(table)


def test_ids_differing_only_by_spaces_get_the_spaces_warning_alone():
    with pytest.warns(UserWarning) as got:
        validate_votes(pd.DataFrame({"item": ["x", " x", "y"], "vote": [1, -1, 0]}))
    texts = [str(w.message) for w in got]
    assert any("leading/trailing spaces" in t for t in texts)
    assert not any("letter case" in t for t in texts), texts


# ------------------------------------------------------- ids across two files

def test_near_matches_pairs_only_ids_without_an_exact_twin():
    from bayesjudge.data.lookalikes import near_matches  # (new in this change)

    first = ["GPT-4", "x", " y", "z", "w"]
    second = ["gpt-4", "x", "y", "Y", "W", "w"]
    # 'W' of the second has no exact twin, though 'w' has: it is reported with 'w'
    assert near_matches(first, second) == [("GPT-4", "gpt-4"), (" y", "y"), (" y", "Y"),
                                           ("w", "W")]
    assert near_matches(["a", "A"], ["a", "A"]) == []  # both spellings match exactly
    assert near_matches([1, 2], ["1", "2"]) == []  # types are not looked at here


def _lines(err: str, prefix: str) -> list[str]:
    return [line for line in err.strip().splitlines() if line.startswith(prefix)]


def test_metrics_warns_about_ids_matching_only_loosely(tmp_path, capsys):
    (tmp_path / "pred.csv").write_text("item,prob\nQ1,0.7\nq2,0.2\nq3 ,0.6\nq4,0.4\n")
    (tmp_path / "labels.csv").write_text("item,label\nq1,B\nq2,A\nq3,B\nq4,A\n")
    assert main(["metrics", str(tmp_path / "pred.csv"), "--labels",
                 str(tmp_path / "labels.csv"), "--boot", "100"]) == 0
    captured = capsys.readouterr()
    warns = _lines(captured.err, "warning: ")
    # two matched items, both judged right: agreement's interval is [1, 1], flagged
    assert len(warns) == 2 and "bootstrap interval(s) have zero width" in warns[1], warns
    assert "predictions.item and labels.item" in warns[0]
    assert "'Q1' ~ 'q1'" in warns[0] and "'q3 ' ~ 'q3'" in warns[0], warns[0]
    assert "write each id the same way" in warns[0]
    # how many ids of each file are absent from the other is said once, in the notes
    assert "2 of 4 prediction rows have no labels" in captured.out
    assert "2 labelled items have no prediction row" in captured.out


def test_case_twins_within_a_file_are_one_warning_line_each(tmp_path, capsys):
    (tmp_path / "pred.csv").write_text("item,prob\nx,0.7\nX,0.3\ny,0.6\n")
    (tmp_path / "labels.csv").write_text("item,label\nx,B\nX,A\ny,B\n")
    assert main(["metrics", str(tmp_path / "pred.csv"), "--labels",
                 str(tmp_path / "labels.csv"), "--boot", "100"]) == 0
    warns = [w for w in _lines(capsys.readouterr().err, "warning: ")
             if "bootstrap interval(s) have zero width" not in w]  # 3 items, all judged right
    assert len(warns) == 2, warns  # each file once; the ids match exactly across files
    assert all("differ only by letter case: ['X', 'x']" in w for w in warns), warns
    assert any("judge outputs.item" in w for w in warns)
    assert any("labels.item" in w for w in warns)  # the --labels file


def test_aggregate_warns_before_the_missing_labelled_items_error(tmp_path, capsys):
    (tmp_path / "votes.csv").write_text("item,vote\nGPT-4,1\nb,0\nb,-1\nc,1\n")
    (tmp_path / "labels.csv").write_text("item,label\ngpt-4,1\nb,0\nc,-1\n")
    assert main(["aggregate", str(tmp_path / "votes.csv"), "--calibration",
                 str(tmp_path / "labels.csv"), "--out", str(tmp_path / "out.csv")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0].startswith("warning: ") and "'GPT-4' ~ 'gpt-4'" in err[0], err
    assert "votes.item and calibration.item" in err[0]
    assert err[-1].startswith("error: ") and "1 labelled item(s) have no votes" in err[-1]


def test_report_warns_about_systems_and_items_matching_only_loosely(tmp_path, capsys):
    rows = ["item,system,judge_label"] + [f"t{i},{s},{i % 2}" for s in ("GPT-4", "llama")
                                          for i in range(20)]
    (tmp_path / "judg.csv").write_text("\n".join(rows) + "\n")
    cal = ["item,system,judge_label,human_label"] + [
        f"c{i},{s},{i % 2},{(i // 2) % 2}" for s in ("gpt-4", "llama") for i in range(12)]
    cal.append("T1,llama,1,1")  # the test item t1 again, by case: would count twice
    (tmp_path / "cal.csv").write_text("\n".join(cal) + "\n")
    # gpt-4 has calibration rows but no judgments (as written): an error after the warnings
    assert main(["report", str(tmp_path / "judg.csv"), "--calibration",
                 str(tmp_path / "cal.csv"), "--by", "system"]) == 2
    warns = _lines(capsys.readouterr().err, "warning: ")
    system = [w for w in warns if "judgments.system and calibration.system" in w]
    item = [w for w in warns if "judgments.item and calibration.item" in w]
    assert len(system) == 1 and "'GPT-4' ~ 'gpt-4'" in system[0], warns
    assert len(item) == 1 and "'t1' ~ 'T1'" in item[0] and "counts twice" in item[0], warns


@pytest.mark.parametrize("with_system", ["judgments", "calibration"])
def test_one_system_named_in_one_table_only_is_that_system(tmp_path, capsys, with_system):
    """A shared calibration file beside one system's judgments (the advice of the
    several-systems error): the table without a system column belongs to the named system,
    not to a system 'all' the user never wrote."""
    judg = pd.DataFrame({"item": [f"t{i}" for i in range(40)], "judge_label": [i % 3 > 0 for i in
                                                                          range(40)]})
    judg["judge_label"] = judg["judge_label"].astype(int)
    cal = pd.DataFrame({"item": [f"c{i}" for i in range(30)],
                        "judge_label": [int(i % 5 > 1) ^ (i % 7 == 0) for i in range(30)],
                        "human_label": [int(i % 5 > 1) for i in range(30)]})
    named = {"judgments": judg, "calibration": cal}[with_system]
    named.insert(0, "system", "gpt-4o")
    counts = validate_misclassification(judg, cal)
    plain = validate_misclassification(judg.drop(columns="system", errors="ignore"),
                                       cal.drop(columns="system", errors="ignore"))
    assert list(counts.systems) == ["gpt-4o"]
    for field in ("judged_pos", "n", "tp", "m1", "tn", "m0"):
        assert np.array_equal(getattr(counts, field), getattr(plain, field)), field
    judg.to_csv(tmp_path / "judg.csv", index=False)
    cal.to_csv(tmp_path / "cal.csv", index=False)
    assert main(["report", str(tmp_path / "judg.csv"), "--calibration",
                 str(tmp_path / "cal.csv")]) == 0
    out = capsys.readouterr().out
    assert "gpt-4o" in out and " all " not in out, out
    # two different names stay an error
    other = cal.assign(system="llama") if with_system == "judgments" else judg.assign(system="x")
    pair = (judg, other) if with_system == "judgments" else (other, cal)
    with pytest.raises(DataValidationError, match="no rows in judgments"):
        validate_misclassification(*pair)


def test_calibrate_warns_about_probe_judges_matching_only_loosely(tmp_path, capsys):
    (tmp_path / "pred.csv").write_text("item,prob,judge\na,0.7,J1\nb,0.3,J1\n")
    (tmp_path / "labels.csv").write_text("item,label\na,B\nb,A\n")
    (tmp_path / "probes.csv").write_text("judge,prob\nj1,0.6\n")
    assert main(["calibrate", str(tmp_path / "pred.csv"), "--labels",
                 str(tmp_path / "labels.csv"), "--method", "contextual", "--probe-file",
                 str(tmp_path / "probes.csv"), "--boot", "100",
                 "--out", str(tmp_path / "out.csv")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0].startswith("warning: ") and "'J1' ~ 'j1'" in err[0], err
    assert err[-1].startswith("error: ") and "no probe for judge(s) ['J1']" in err[-1]


# ------------------------------------- batch calibration: no clipping constant

@pytest.fixture(scope="module")
def rounded_judge():
    """A judge with logit bias 1 whose 30% most extreme outputs are printed as exact 0/1."""
    rng = np.random.default_rng(3)
    z = rng.normal(0.0, 2.0, size=4000) + 1.0
    p = expit(z)
    cut = np.quantile(np.abs(z), 0.7)
    p[z > cut], p[z < -cut] = 1.0, 0.0
    return p


@pytest.mark.parametrize("clip", [1e-4, 1e-6, 1e-12])
def test_batch_calibration_does_not_depend_on_a_clipping_constant(monkeypatch, rounded_judge,
                                                                  clip):
    # the former hidden constant, set to three values: nothing may follow it
    monkeypatch.setattr(BatchCalibration, "_CLIP", clip, raising=False)
    p = rounded_judge
    assert ((p == 0) | (p == 1)).mean() == pytest.approx(0.3, abs=0.01)
    # logit space: the batch mean logit is undefined with exact 0/1, so it is refused
    with pytest.raises(DataValidationError) as err:
        BatchCalibration(space="logit").fit(p)
    text = str(err.value)
    assert "1200 exact 0/1" in text and "space='probability'" in text, text
    # probability space: the paper's batch mean, exact with certainties (numpy reference)
    bc = BatchCalibration().fit(p)
    assert bc.bias_ == pytest.approx(p.mean(), rel=1e-12)
    out = bc.transform(p)
    inner = (p > 0) & (p < 1)
    np.testing.assert_allclose(logit(out[inner]), logit(p[inner]) - logit(p.mean()),
                               rtol=1e-9, atol=1e-9)
    # transform in either space keeps a certainty a certainty: no constant decides it
    finite = BatchCalibration(space="logit").fit(p[inner])
    assert finite.logit_shift_ == pytest.approx(np.mean(logit(p[inner])), rel=1e-12)
    for fitted in (bc, finite):
        np.testing.assert_array_equal(fitted.transform([0.0, 1.0]), [0.0, 1.0])
        np.testing.assert_array_equal(out[~inner], p[~inner])


# ------------------------------------------------- ids of two types: 7 and "7"
def test_ids_differing_only_in_type_stay_apart_in_summaries_and_files(tmp_path):
    """The models keep 7 and "7" apart; ArviZ writes coordinates as text and netCDF cannot
    store a column of mixed types: summarize() labels them 7 and '7', and save/load keeps
    both (the file had refused to save, the labels had been 'skill[7]' twice)."""
    import bayesjudge as bj
    from bayesjudge.data.judgments import validate_judgment_counts

    votes = pd.DataFrame({"judge": "h", "left": [7, "7", 7, "a", "a", "7"],
                          "right": ["a", "a", "7", "7", 7, 7],
                          "outcome": ["left", "right", "tie", "left", "right", "left"]})
    counts = validate_judgment_counts([300, 250, 200], [500] * 3, [45, 44, 46], [50] * 3,
                                      [43, 45, 44], [50] * 3, systems=[7, "7", "x"])
    for model, var in ((bj.DavidsonBT().fit(votes), "skill"),
                       (bj.HierarchicalMisclassificationModel().fit(counts), "accuracy")):
        labels = [r for r in model.summarize().index if r.startswith(f"{var}[")]
        assert f"{var}[7]" in labels and f"{var}['7']" in labels and len(set(labels)) == 3
        model.save(tmp_path / "fit.nc")
        back = type(model).load(tmp_path / "fit.nc")
        pd.testing.assert_frame_equal(back.summarize(), model.summarize())
        ids = back.ranking().iloc[:, 0].tolist()
        assert 7 in ids and "7" in ids
        coord = back.idata_.posterior[var].dims[-1]
        assert sorted(map(repr, back.idata_.posterior[coord].values.tolist())) == sorted(
            map(repr, model.idata_.posterior[coord].values.tolist()))


def test_metrics_labels_one_judge_as_the_package_does_and_keeps_a_judge_named_judge(tmp_path,
                                                                                   capsys):
    (tmp_path / "labels.csv").write_text("item,label\nq1,B\nq2,A\nq3,B\nq4,A\nq5,B\n")
    (tmp_path / "one.csv").write_text("item,prob\nq1,0.7\nq2,0.2\nq3,0.4\nq4,0.6\nq5,0.9\n")
    out = tmp_path / "m.csv"
    assert main(["metrics", str(tmp_path / "one.csv"), "--labels", str(tmp_path / "labels.csv"),
                 "--boot", "100", "--out", str(out)]) == 0
    assert set(pd.read_csv(out)["judge"]) == {"(one judge)"}
    printed = capsys.readouterr().out
    assert "(one judge)" not in printed  # one judge: no judge column in the printed table
    (tmp_path / "named.csv").write_text("judge,item,prob\n" + "".join(
        f"judge,q{i},{p}\n" for i, p in zip(range(1, 6), (0.7, 0.2, 0.4, 0.6, 0.9))))
    assert main(["metrics", str(tmp_path / "named.csv"), "--labels",
                 str(tmp_path / "labels.csv"), "--boot", "100"]) == 0
    assert "\njudge       ece" in capsys.readouterr().out  # a judge named 'judge' is shown
