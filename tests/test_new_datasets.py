"""Loaders of arena_ppr, LLMFAO and position_bias_rep: the shipped copies against the
shared data files, the counts their READMEs give, ids kept as written, every row
accounted for, and the documented warnings and errors."""

from __future__ import annotations

import gzip
import hashlib
import warnings

import numpy as np
import pandas as pd
import pytest

from bayesjudge import datasets as ds
from bayesjudge.data import DataValidationError
from bayesjudge.datasets.csv_files import find_csv
from bayesjudge.datasets.files import SHARED_DATA

# SHA-256 of the shared data files (../shared/data, see each COMMIT); the shipped
# copies gunzip to these bytes, with or without ../shared.
SHARED_SHA256 = {
    ("llmfao", "battles.csv"): "c275f67eafe3092f9047ef4fe3df97585eac3e664d2d84b60aed88ae22f1fc8c",
    ("llmfao", "human_labels.csv"):
        "d4dc9b890cb1ddce3ad8415565a0fc9d424f1cfafc372730a6b201546a64f97d",
    ("llmfao", "items.csv"): "d0f54fa348eea89c766bb360714200a109e81132a96b7e376d02c501db7a32fd",
    ("llmfao", "judge_labels.csv"):
        "3e4874bcbe0925ff2a99b854017c6e3cf6a52a5962821a54d1e52a795cd693d0",
    ("position_bias_rep", "votes.csv"):
        "c2f31c07a6b841c223b0a4ff557c5b09db9593543ea11ec475d3163387ced1f6",
    ("position_bias_rep", "mtbench_full_winrates.csv"):
        "514c7b8199aad8935c4d3bf163ea4748e8633149183d57e6028cfa878f2ed5f4",
}


def _shared(dataset: str, name: str) -> pd.DataFrame:
    """A shared data file read independently of the loaders, every column as text."""
    path = SHARED_DATA / dataset / name
    assert path.is_file(), f"{path} is missing: these tests need ../shared/data"
    return pd.read_csv(path, dtype=str, keep_default_na=False)


@pytest.fixture(scope="module")
def arena() -> pd.DataFrame:
    return ds.arena_ppr()


@pytest.fixture(scope="module")
def pbr() -> pd.DataFrame:
    return ds.position_bias_rep(unparsed="keep")


# --------------------------------------------------------------------------- shipped files
@pytest.mark.parametrize("key", sorted(SHARED_SHA256))
def test_shipped_copies_are_the_shared_bytes(key):
    dataset, name = key
    shipped = find_csv(f"{dataset}_{name}.gz", name, None, dataset)
    assert shipped.name == f"{dataset}_{name}.gz"  # the copy in bayesjudge/data, not ../shared
    assert hashlib.sha256(gzip.decompress(shipped.read_bytes())).hexdigest() == SHARED_SHA256[key]
    assert (hashlib.sha256((SHARED_DATA / dataset / name).read_bytes()).hexdigest()
            == SHARED_SHA256[key])


def test_arena_shipped_copy_equals_the_shared_battles(arena):
    shipped = find_csv(ds.arena.ARENA_PPR_FILE, "battles.csv", None, "arena_ppr")
    assert shipped.name == ds.arena.ARENA_PPR_FILE
    ref = _shared("arena_ppr", "battles.csv").rename(
        columns={"item": "battle", "context": "question_id"})
    expected = ref[["battle", "question_id", "judge", "left", "right", "outcome", "winner_raw"]]
    pd.testing.assert_frame_equal(arena, expected)
    # the same loader on the shared file (the path= branch) gives the same table
    pd.testing.assert_frame_equal(ds.arena_ppr(SHARED_DATA / "arena_ppr"), arena)


def test_arena_wide_equals_the_shared_battles_wide(arena):
    wide = ds.arena_ppr(wide=True)
    pd.testing.assert_frame_equal(
        wide, _shared("arena_ppr", "battles_wide.csv").rename(columns={"item": "battle"}))
    # the README's three-way agreement with the human vote
    agree = {j: round(float((wide[j] == wide["human"]).mean()), 3)
             for j in ds.ARENA_PPR_JUDGES[1:]}
    assert agree == {"gpt-4-0125-preview": 0.555, "claude-3-opus-20240229": 0.475,
                     "gpt-3.5-turbo": 0.4}


def test_llmfao_and_position_bias_loaders_read_shared_files_alike():
    for fn in (ds.llmfao, ds.llmfao_annotations, ds.llmfao_judge_labels, ds.llmfao_items):
        pd.testing.assert_frame_equal(fn(SHARED_DATA / "llmfao"), fn())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pd.testing.assert_frame_equal(
            ds.position_bias_rep(SHARED_DATA / "position_bias_rep", unparsed="drop"),
            ds.position_bias_rep(unparsed="drop"))
    pd.testing.assert_frame_equal(
        ds.position_bias_rep_winrates(SHARED_DATA / "position_bias_rep"),
        ds.position_bias_rep_winrates())


# --------------------------------------------------------------------------- arena_ppr
def test_arena_counts_match_the_readme(arena):
    assert list(arena.columns) == ["battle", "question_id", "judge", "left", "right",
                                   "outcome", "winner_raw"]
    assert all(pd.api.types.is_string_dtype(arena[c]) for c in arena.columns)
    assert len(arena) == 107_676 and arena["battle"].nunique() == 26_919
    assert arena["question_id"].nunique() == 26_910
    assert len(set(arena["left"]) | set(arena["right"])) == 20
    assert arena["judge"].value_counts().to_dict() == dict.fromkeys(ds.ARENA_PPR_JUDGES, 26_919)
    human = arena[arena["judge"] == "human"]
    assert human["winner_raw"].value_counts().to_dict() == {
        "model_a": 9516, "model_b": 9391, "tie (bothbad)": 5132, "tie": 2880}
    ties = arena[arena["outcome"] == "tie"]["judge"].value_counts().to_dict()
    assert ties == {"human": 8012, "claude-3-opus-20240229": 7924,
                    "gpt-4-0125-preview": 7453, "gpt-3.5-turbo": 52}
    gpt35 = arena[arena["judge"] == "gpt-3.5-turbo"]
    assert round(float((gpt35["winner_raw"] == "model_a").mean()), 2) == 0.86
    # ids as written: the battle index is the string "0", "1", ... in file order
    assert arena["battle"].iloc[:8].tolist() == ["0"] * 4 + ["1"] * 4


def test_arena_export_is_the_human_votes_in_arena_columns(arena):
    export = ds.arena_ppr_export()
    assert list(export.columns) == ["question_id", "model_a", "model_b", "winner"]
    human = arena[arena["judge"] == "human"]
    assert export["winner"].tolist() == human["winner_raw"].tolist()
    assert export["model_a"].tolist() == human["left"].tolist()
    assert len(ds.arena_ppr_export(judge="gpt-3.5-turbo")) == 26_919
    with pytest.raises(ValueError, match="judge='gpt-4'; choose one of"):
        ds.arena_ppr_export(judge="gpt-4")


def test_arena_ids_are_kept_as_written_and_bad_files_are_refused(tmp_path):
    head = "item,left,right,outcome,judge,context,winner_raw\n"
    good = tmp_path / "battles.csv"
    good.write_text(head + "007,m1,m2,left,human,0042,model_a\n"
                    "007,m1,m2,tie,gpt,0042,tie (bothbad)\n1.10,m2,m1,right,human,1.1,model_b\n")
    table = ds.arena_ppr(tmp_path)
    assert table["battle"].tolist() == ["007", "007", "1.10"]
    assert table["question_id"].tolist() == ["0042", "0042", "1.1"]
    wide = ds.arena_ppr(good, wide=True)
    assert wide["battle"].tolist() == ["007", "1.10"] and wide["gpt"].isna().tolist() == [
        False, True]
    bad = tmp_path / "bad.csv"
    bad.write_text(head + "0,m1,m2,left,human,q,model_b\n")
    with pytest.raises(DataValidationError, match=r"contradicts 'winner_raw' on file lines \[2\]"):
        ds.arena_ppr(bad)
    bad.write_text(head + "0,m1,m2,left,human,q,model_a\n0,m1,m2,left,gpt,q,A\n")
    with pytest.raises(DataValidationError, match=r"'winner_raw'.*\['A'\] on file lines \[3\]"):
        ds.arena_ppr(bad)
    with pytest.raises(DataValidationError, match="wide layout"):
        ds.arena_ppr(SHARED_DATA / "arena_ppr" / "battles_wide.csv")
    with pytest.raises(FileNotFoundError, match="battles.csv"):
        ds.arena_ppr(tmp_path / "nowhere")


# --------------------------------------------------------------------------- LLMFAO
def test_llmfao_counts_match_the_readme():
    crowd = ds.llmfao_annotations()
    assert list(crowd.columns) == ["item", "annotator", "label"]
    assert len(crowd) == 8_931 and crowd["item"].nunique() == 2_139
    assert crowd["annotator"].nunique() == 124
    per_pair = crowd["item"].value_counts().value_counts().to_dict()
    assert per_pair == {5: 998, 4: 658, 3: 358, 2: 110, 1: 15}
    share = crowd["label"].value_counts(normalize=True).round(3).to_dict()
    assert share == {"tie": 0.389, "A": 0.326, "B": 0.285}
    judges = ds.llmfao_judge_labels()
    assert len(judges) == 6_472
    assert judges["judge"].value_counts().to_dict() == dict.fromkeys(ds.LLMFAO_JUDGES, 3_236)
    items = ds.llmfao_items()
    assert len(items) == 3_236 and int(items["in_crowd_subset"].sum()) == 2_139
    assert set(crowd["item"]) == set(items.loc[items["in_crowd_subset"], "item"])
    table = ds.llmfao()
    assert len(table) == 15_403 and table["judge"].value_counts()["crowd"] == 8_931
    assert all(pd.api.types.is_string_dtype(table[c]) for c in table.columns)


def test_llmfao_tables_agree_with_each_other():
    table = ds.llmfao()
    crowd = table[table["judge"] == "crowd"]
    labels = ds.llmfao_annotations()
    # battles.csv's crowd rows are human_labels.csv's votes, A = left
    assert crowd["item"].tolist() == labels["item"].tolist()
    assert crowd["annotator"].tolist() == labels["annotator"].tolist()
    assert crowd["outcome"].tolist() == labels["label"].map(
        {"A": "left", "B": "right", "tie": "tie"}).tolist()
    votes = ds.llmfao_votes()
    np.testing.assert_array_equal(
        votes["vote"].to_numpy(), labels["label"].map({"A": 1, "tie": 0, "B": -1}).to_numpy())
    gpt4 = ds.llmfao_votes(judge="gpt-4")
    assert len(gpt4) == 3_236 and set(gpt4["judge"]) == {"gpt-4"}
    workers = ds.llmfao(crowd="workers")
    assert workers["judge"].nunique() == 124 + 2
    assert (workers.loc[crowd.index, "judge"] == crowd["annotator"]).all()
    pooled = ds.llmfao(context="none")
    assert "context" not in pooled and pooled["prompt_slug"].equals(table["context"])
    with pytest.raises(ValueError, match="crowd='all'"):
        ds.llmfao(crowd="all")
    with pytest.raises(ValueError, match="judge='gpt-3.5'"):
        ds.llmfao_votes(judge="gpt-3.5")


def test_llmfao_ids_are_kept_as_written(tmp_path):
    (tmp_path / "human_labels.csv").write_text(
        "item,annotator,label\n007,worker01,A\n1.10,worker1,tie\n1.1,worker1,B\n")
    labels = ds.llmfao_annotations(tmp_path)
    assert labels["item"].tolist() == ["007", "1.10", "1.1"]
    assert labels["annotator"].tolist() == ["worker01", "worker1", "worker1"]
    (tmp_path / "human_labels.csv").write_text("item,annotator,label\n0,w,C\n")
    with pytest.raises(DataValidationError, match=r"'label' must be one of.*\['C'\]"):
        ds.llmfao_annotations(tmp_path)


# --------------------------------------------------------------------------- position bias
def test_position_bias_counts_match_the_readme(pbr):
    assert len(pbr) == 9_072
    assert pbr.groupby("benchmark").size().to_dict() == {"DevBench": 9 * 3 * 2 * 72,
                                                         "MTBench": 9 * 3 * 2 * 96}
    assert pbr.groupby("benchmark")["question"].nunique().to_dict() == {
        "DevBench": 18, "MTBench": 24}
    assert pbr["judge"].nunique() == 9
    per_pair = pbr.groupby(["benchmark", "question", "model", "judge"]).size()
    assert set(per_pair) == {6}
    assert pbr.groupby(["repetition", "order"]).size().nunique() == 1
    missing = pbr["outcome"].isna()
    assert pbr.loc[missing, "benchmark"].value_counts().to_dict() == {"MTBench": 28, "DevBench": 2}
    assert pbr.loc[missing, "verdict"].isna().all() and pbr["verdict"].notna().sum() == 9_042
    assert not (pbr.loc[pbr["benchmark"] == "DevBench", "outcome"] == "tie").any()
    assert pbr["context"].equals(pbr["question"])
    assert ds.position_bias_rep_winrates().shape == (540, 13)


def test_position_bias_verdict_is_the_outcome_seen_from_the_model(pbr):
    ok = pbr[pbr["outcome"].notna()]
    first = ok["order"] == "model_first"
    model_won = np.where(first, ok["outcome"] == "left", ok["outcome"] == "right")
    expected = np.where(ok["outcome"] == "tie", 0, np.where(model_won, 1, -1))
    np.testing.assert_array_equal(ok["verdict"].to_numpy(np.int64), expected)
    assert (np.where(first, ok["left"], ok["right"]) == ok["model"]).all()


def test_position_bias_unparsed_verdicts_warn_with_their_count():
    with pytest.warns(UserWarning, match=r"dropped 30 unparsed verdict\(s\) of 9072 "
                                         r"\(.*gpt-3.5-turbo-0125: 22"):
        votes = ds.position_bias_rep()
    assert len(votes) == 9_042 and votes["outcome"].notna().all()
    with pytest.warns(UserWarning, match=r"dropped 28 unparsed verdict\(s\) of 5184"):
        mt = ds.position_bias_rep(benchmark="MTBench", context="none")
    assert "context" not in mt and set(mt["benchmark"]) == {"MTBench"}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(ds.position_bias_rep(unparsed="drop")) == 9_042
    with pytest.raises(ValueError, match="unparsed='skip'"):
        ds.position_bias_rep(unparsed="skip")
    with pytest.raises(ValueError, match="benchmark='mtbench'"):
        ds.position_bias_rep(benchmark="mtbench")
