"""`bayesjudge rank` on a small jury CSV: one ranking row per (context, item) with ids as
written, one judges row per judge, every model and kind, and one-line errors (exit 2) for
bad arguments (checked before any file is read) and bad comparison tables."""

import numpy as np
import pandas as pd
import pytest

import bayesjudge as bj
from bayesjudge.cli import main

ITEMS = ["000", "1.1", "1.10", "NA", "007"]  # ids pandas would mangle if read as numbers
SKILL = np.array([1.5, 0.75, 0.0, -0.75, -1.5])  # the true order is ITEMS' order
JUDGES = {"j-1": 0.3, "j-2": 1.0, "j-3": 3.0}  # judge -> noise scale (sigma_k)


def _jury(contexts=(None,)) -> pd.DataFrame:
    """3 judges x 5 items, every ordered pair (both orders), soft P(left beats right)."""
    rows = []
    for ctx in contexts:
        for judge, sigma in JUDGES.items():
            for a in range(5):
                for b in range(5):
                    if a != b:
                        p = 1 / (1 + np.exp(-(SKILL[a] - SKILL[b]) / sigma))
                        rows.append((ctx, judge, ITEMS[a], ITEMS[b], round(float(p), 4)))
    df = pd.DataFrame(rows, columns=["context", "judge", "left", "right", "prob"])
    return df if contexts != (None,) else df.drop(columns="context")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("rank")
    soft = _jury()
    soft.to_csv(d / "soft.csv", index=False)
    hard = soft.drop(columns="prob").assign(outcome=np.select(
        [soft["prob"] > 0.6, soft["prob"] < 0.4], ["left", "right"], "tie"))
    assert (hard["outcome"] == "tie").any() and hard["outcome"].nunique() == 3
    hard.to_csv(d / "hard.csv", index=False)
    _jury(("ctx-A", "ctx-B")).to_csv(d / "contexts.csv", index=False)
    return d


def _ids(path, col: str) -> list[str]:
    lines = path.read_text().splitlines()
    i = lines[0].split(",").index(col)
    return [line.split(",")[i] for line in lines[1:]]


def _read_exact(path) -> pd.DataFrame:
    return pd.read_csv(path, dtype={"item": str, "judge": str, "context": str, "item_a": str,
                                    "item_b": str},
                       keep_default_na=False)


def _one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize("model, source, extra, judge_cols", [
    ("bt", "soft.csv", [], []),
    ("bt-sigma", "soft.csv", [], ["discriminator", "reliability", "reliability_lower"]),
    ("bt-sigma", "hard.csv", [], ["discriminator", "reliability"]),  # kind follows the file
    ("davidson-bt", "hard.csv", ["--tie", "per-judge"], ["tie_logit", "tie_logit_upper"]),
    ("davidson-bt", "soft.csv", [], ["tie_logit"]),  # probabilities read as outcomes, said
])
def test_rank_writes_one_row_per_item_and_per_judge(files, tmp_path, capsys, model, source,
                                                     extra, judge_cols):
    out, judges = tmp_path / "ranking.csv", tmp_path / "judges.csv"
    assert main(["rank", str(files / source), "--model", model, "--out", str(out),
                 "--judges", str(judges), *extra]) == 0
    got = _read_exact(out)
    assert sorted(_ids(out, "item")) == sorted(ITEMS)  # byte-exact, every item once
    assert got["rank"].tolist() == [1, 2, 3, 4, 5]
    assert (got["skill_lower"] <= got["skill"]).all() and (got["skill"] <= got["skill_upper"]).all()
    assert (got["rank_lower"] <= got["rank"]).all() and (got["rank"] <= got["rank_upper"]).all()
    assert got["p_best"].sum() == pytest.approx(1.0)
    assert got["item"].iloc[0] == "000" and got["item"].iloc[-1] == "007"  # clear extremes
    jt = _read_exact(judges)
    assert _ids(judges, "judge") == list(JUDGES)
    assert jt["n_comparisons"].dtype.kind == "i" and (jt["n_comparisons"] > 0).all()
    for col in judge_cols:
        assert col in jt
    printed = capsys.readouterr().out
    assert f"wrote {out} and {judges}" in printed
    note = "prob read as outcomes: p > 0.5 left, p = 0.5 tie, p < 0.5 right"
    assert (note in printed) == (model == "davidson-bt" and source == "soft.csv"), printed


def test_rank_differences_per_context(files, tmp_path, capsys):
    out, pairs = tmp_path / "ranking.csv", tmp_path / "pairs.csv"
    assert main(["rank", str(files / "contexts.csv"), "--model", "bt", "--out", str(out),
                 "--differences", str(pairs), "--level", "0.9"]) == 0
    got = _read_exact(pairs)
    assert got.groupby("context").size().to_dict() == {"ctx-A": 10, "ctx-B": 10}
    ranking = _read_exact(out)
    for ctx, grp in got.groupby("context"):  # item_a ranked above item_b, ids as written
        rank = dict(zip(*ranking[ranking["context"] == ctx][["item", "rank"]].T.values))
        assert all(rank[a] < rank[b] for a, b in zip(grp["item_a"], grp["item_b"]))
    assert ((got["lower"] <= got["mean"]) & (got["mean"] <= got["upper"])).all()
    assert got["prob_a_better"].between(0, 1).all() and (got["prob_a_better_mcse"] >= 0).all()
    assert f"wrote {out} and {pairs}" in capsys.readouterr().out


def test_bt_recovers_the_order(files, tmp_path):
    out = tmp_path / "ranking.csv"
    assert main(["rank", str(files / "soft.csv"), "--model", "bt", "--out", str(out)]) == 0
    assert _ids(out, "item") == ITEMS  # sorted by rank: the true order


def test_rank_per_context(files, tmp_path):
    out = tmp_path / "ranking.csv"
    assert main(["rank", str(files / "contexts.csv"), "--model", "bt", "--out", str(out),
                 "--level", "0.9"]) == 0
    got = _read_exact(out)
    assert len(got) == 10 and got.groupby("context").size().to_dict() == {"ctx-A": 5, "ctx-B": 5}
    assert got.groupby("context")["p_best"].sum().to_numpy() == pytest.approx([1.0, 1.0])
    assert _ids(out, "context") == ["ctx-A"] * 5 + ["ctx-B"] * 5


def test_rank_nuts(files, tmp_path, capsys):
    out = tmp_path / "ranking.csv"
    assert main(["rank", str(files / "soft.csv"), "--model", "bt", "--method", "nuts",
                 "--draws", "50", "--tune", "50", "--chains", "2", "--cores", "1",
                 "--out", str(out)]) == 0
    got = _read_exact(out)
    assert sorted(got["item"]) == sorted(ITEMS) and (got["skill_upper"] > got["skill_lower"]).all()
    # the sampler's stages on stderr, never on stdout (which a script may parse)
    captured = capsys.readouterr()
    progress = [line for line in captured.err.splitlines() if line.startswith("progress: ")]
    assert any("sampling 2 chains x (50 tuning + 50 draws)" in line for line in progress)
    assert any(line.startswith("progress: sampled in ") for line in progress)
    assert "progress" not in captured.out and "wrote" in captured.out


def test_rank_counts_every_row_with_and_without_symmetrisation(files, tmp_path, capsys):
    # every ordered pair judged 4 times by each judge: every row is an observation
    # (symmetrised or not), and with balanced orders both fits are the same
    hard = pd.read_csv(files / "hard.csv", dtype=str, keep_default_na=False)
    path = tmp_path / "repeated.csv"
    pd.concat([hard] * 4, ignore_index=True).to_csv(path, index=False)
    rankings = {}
    for flag in ("--symmetrize", "--no-symmetrize"):
        out, judges = tmp_path / f"r{flag}.csv", tmp_path / f"j{flag}.csv"
        assert main(["rank", str(path), "--out", str(out), "--judges", str(judges), flag]) == 0
        printed = capsys.readouterr().out
        assert f"on {4 * len(hard)} comparisons" in printed
        assert ("symmetrised" in printed) == (flag == "--symmetrize")
        assert _read_exact(judges)["n_comparisons"].tolist() == [4 * 20] * 3
        rankings[flag] = _read_exact(out)
    pd.testing.assert_frame_equal(rankings["--symmetrize"], rankings["--no-symmetrize"],
                                  atol=1e-4, check_exact=False)


def test_joint_rank_sets_for_the_bt_family(files, tmp_path, capsys):
    """--joint gives every model's simultaneous rank sets (``ranking(joint=True)``), which
    contain the marginal intervals; the header says which the file holds."""
    out = {}
    for joint in ([], ["--joint"]):
        path = tmp_path / f"r{len(joint)}.csv"
        assert main(["rank", str(files / "hard.csv"), "--model", "davidson-bt", *joint,
                     "--out", str(path)]) == 0
        assert ("simultaneous rank sets" in capsys.readouterr().out) == bool(joint)
        out[bool(joint)] = _read_exact(path).set_index("item")
    model = bj.DavidsonBT(random_seed=0).fit(
        pd.read_csv(files / "hard.csv", dtype=str, keep_default_na=False))
    expect = model.ranking(ci_prob=0.95, joint=True).set_index("item")
    cols = ["rank_lower", "rank_upper"]
    pd.testing.assert_frame_equal(out[True].loc[expect.index, cols], expect[cols],
                                  check_dtype=False)
    assert (out[True]["rank_lower"] <= out[False]["rank_lower"]).all()
    assert (out[True]["rank_upper"] >= out[False]["rank_upper"]).all()


def _no_input(d, *extra):
    # the input does not exist: an argument error must come first
    args = ["rank", str(d / "no-comparisons.csv"), *extra]
    return args if "--out" in extra else args + ["--out", str(d / "r.csv")]


@pytest.mark.parametrize("extra, expect", [
    (["--kind", "soft", "--model", "davidson-bt"], "--kind soft does not apply to --model "
                                                   "davidson-bt"),
    (["--level", "95"], "--level must lie strictly between 0.5 and 1"),
    (["--position-bias"], "apply to --model davidson-bt only"),
    (["--model", "davidson-bt", "--position-bias", "--symmetrize"],
     "--symmetrize turns every pair judged in both orders to one orientation"),
    (["--symmetrize", "yes"], "unrecognized arguments: yes"),
    (["--model", "bt", "--per-aspect"], "--per-aspect applies to --model bt-sigma only"),
    (["--model", "davidson-bt", "--reference", "gpt"],
     "--reference applies to --model anchored only"),
    (["--model", "anchored", "--kind", "hard"], "--kind does not apply to --model anchored"),
    (["--model", "anchored", "--no-symmetrize"],
     "--symmetrize / --no-symmetrize does not apply to --model anchored"),
    (["--method", "nuts", "--chains", "1"], "--chains 1 is too small"),
    (["--seed", "-3"], "--seed must lie in"),
    (["--method", "nuts", "--cores", "0"], "--cores must be a positive integer"),
    (["--method", "nuts", "--cores", "two"], "--cores must be a positive integer"),
    (["--model", "plackett"], "invalid choice: 'plackett'"),
    (["--out", "MISSING"], "does not exist; create it first"),
    (["--out", "SAME", "--judges", "SAME"], "--out and --judges name the same file"),
    # the same file spelt two ways (the folder's own '.'): still one file
    (["--out", "SAME", "--judges", "SAME_DOTTED"], "--out and --judges name the same file"),
    (["--out", "SAME", "--differences", "SAME"], "--out and --differences name the same file"),
    (["--out", "R", "--judges", "SAME", "--differences", "SAME"],
     "--judges and --differences name the same file"),
    (["--differences", "MISSING"], "does not exist; create it first"),
    (["--out", "PROC"], "cannot be written"),  # /proc ignores permissions, as root does
])
def test_bad_rank_arguments_fail_before_any_work(tmp_path, capsys, extra, expect):
    subst = {"MISSING": str(tmp_path / "missing" / "r.csv"), "SAME": str(tmp_path / "r.csv"),
             "R": str(tmp_path / "ranking.csv"),
             "SAME_DOTTED": str(tmp_path / "." / "r.csv"), "PROC": "/proc/r.csv"}
    assert main(_no_input(tmp_path, *[subst.get(e, e) for e in extra])) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert expect in line and "no-comparisons" not in line


@pytest.mark.parametrize("text, expect", [
    ("judge,left,right,prob\nj,a,a,0.5\nj,a,b,0.6\n", "left"),
    ("judge,left,right,prob\nj,a,b,1.5\nj,b,a,0.6\n", "prob"),
    ("judge,left,right,outcome\nj,a,b,win\nj,b,a,left\n", "outcome"),
    ("judge,left,right\nj,a,b\n", "prob"),
    # an id column rank reads, empty on a row: the line named
    ("judge,annotator,left,right,outcome\ncrowd,w1,a,b,left\n,,b,a,left\n",
     "column 'judge' is empty on line(s) 3; every row needs an id. Fill in the ids, "
     "or delete those rows"),
    # a question id for a context: 60 two-item rankings, refused before any fit
    ("judge,left,right,outcome,context\n" + "".join(f"j,a,b,left,q{i}\n" for i in range(60)),
     "looks like a battle or question id"),
    # a role's name but for case: ignored it would make every row one judge
    ("Judge,left,right,outcome\nj1,a,b,left\nj2,b,a,left\n",
     "column(s) ['Judge'] named like ['judge'] but for letter case; they would be "
     "ignored. Fix: rename them, or map them: --columns 'Judge=judge'"),
    # spaces around a name: --columns strips its names and could not map it, so the header
    ("judge,Left ,right,outcome\nj1,a,b,left\n",
     "column(s) ['Left '] with spaces around the name, named like ['left']; they would be "
     "ignored. Fix: remove the spaces around the names in the header line"),
    ("judge, left, right, outcome\nj1, a, b, left\n", "remove the spaces around the names"),
])
def test_bad_comparison_tables_give_one_line(tmp_path, capsys, text, expect):
    (tmp_path / "c.csv").write_text(text)
    out = tmp_path / "r.csv"
    assert main(["rank", str(tmp_path / "c.csv"), "--out", str(out)]) == 2
    assert expect in _one_error_line(capsys.readouterr().err)
    assert not out.exists()


def test_an_empty_id_column_rank_does_not_read_is_ignored_with_a_warning(tmp_path, capsys):
    """LLMFAO's battles.csv as shipped: the LLM judges' rows have no annotator, a column rank
    does not use; it is named as unused and the ranking is written (mapped to a role it
    is read, and an empty cell refused: test above)."""
    text = ("judge,annotator,left,right,outcome\n" + "crowd,w1,a,b,left\ncrowd,w2,b,c,tie\n"
            "gpt-4,,c,a,right\ngpt-4,,a,b,left\ngpt-4,,b,c,left\n")
    (tmp_path / "c.csv").write_text(text)
    out = tmp_path / "r.csv"
    assert main(["rank", "--model", "davidson-bt", str(tmp_path / "c.csv"),
                 "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "['annotator']" in err and "not used" in err
    assert sorted(pd.read_csv(out, dtype=str)["item"]) == ["a", "b", "c"]
    (tmp_path / "m.csv").write_text(text.replace("judge,annotator", "source,annotator"))
    assert main(["rank", "--model", "davidson-bt", "--columns", "annotator=judge,source=context",
                 str(tmp_path / "m.csv"), "--out", str(tmp_path / "r2.csv")]) == 2
    assert "column 'annotator' is empty on line(s) 4, 5, 6" in capsys.readouterr().err


def test_a_flagged_global_tie_flags_the_judges_rows_without_naming_parameters(files):
    """--judges of davidson-bt takes the global tie logit from summarize(), which warns
    naming parameters (skill[0], ...); the ranking names the items already, so that warning
    is not repeated, and the tie row's flag reaches the judges' laplace_ok (LLMFAO per
    prompt, whose Laplace check fails, printed 'skill[0]' ... and laplace_ok True)."""
    import warnings

    from bayesjudge.cli.rank import add_tie_columns

    model = bj.DavidsonBT().fit(pd.read_csv(files / "hard.csv", dtype=str, keep_default_na=False))
    judges = model.judges()
    assert judges["laplace_ok"].all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert add_tie_columns(model, judges, 0.95)["laplace_ok"].all()
        model.laplace_ok = lambda name: np.zeros(np.shape(model.map_[name]), dtype=bool)
        with pytest.warns(UserWarning, match=r"skill\[.*tie_logit"):
            model.summarize()
        out = add_tie_columns(model, judges, 0.95)
    assert not out["laplace_ok"].any() and judges["laplace_ok"].all()


def test_position_bias_identification_reaches_the_judges_file(files, tmp_path, capsys):
    # judge "j-1" sees every pair in both orders; "base" is always shown on the left to the
    # second judge only, so that judge's bias is the prior's: a warning line and a False
    hard = pd.read_csv(files / "hard.csv", dtype=str, keep_default_na=False)
    both = hard[hard["judge"] == "j-1"]
    base = pd.DataFrame({"judge": "one-order", "left": "base", "right": ITEMS,
                         "outcome": ["left", "right", "tie", "left", "right"]})
    pd.concat([both, base]).to_csv(tmp_path / "c.csv", index=False)
    out, judges = tmp_path / "r.csv", tmp_path / "j.csv"
    assert main(["rank", str(tmp_path / "c.csv"), "--model", "davidson-bt",
                 "--position-bias", "--out", str(out), "--judges", str(judges)]) == 0
    err = capsys.readouterr().err
    assert "warning:" in err and "['one-order'] is not identified" in err
    table = _read_exact(judges).set_index("judge")
    assert table["position_bias_identified"].astype(str).to_dict() == {
        "j-1": "True", "one-order": "False"}


def test_missing_column_error_does_not_list_the_implicit_judge_as_the_users(tmp_path, capsys):
    # before: "it has ['judge', 'left', 'right', 'prob']" and "Rename your columns to
    # ['judge', 'left', 'right', 'outcome']": a judge column the file does not have
    (tmp_path / "c.csv").write_text("left,right,prob\na,b,0.5\nb,c,0.7\nc,a,0.2\n")
    code = main(["rank", str(tmp_path / "c.csv"), "--model", "ordinal",
                 "--out", str(tmp_path / "r.csv")])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "Traceback" not in err
    assert "it has ['left', 'right', 'prob'] (and ['judge'], added: a table without a " \
           "judge is one judge)" in err
    assert "to ['left', 'right', 'outcome']" in err
    assert not (tmp_path / "r.csv").exists()
    with pytest.raises(bj.data.DataValidationError, match=r"it has \['judge', 'left'"):
        bj.OrdinalBT().fit(pd.read_csv(tmp_path / "c.csv").assign(judge="j")[
            ["judge", "left", "right", "prob"]])  # a judge column of the user's own is listed
