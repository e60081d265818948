"""Tests for the Bradley-Terry jury data: SummEval and Topical-Chat loaders, the
PandaLM / WMT23 juries and the jury simulator, against the data's published counts,
the upstream bytes and the generator's equations (Qian, Sun, Gales & Knill 2026,
arXiv:2602.16610)."""

from __future__ import annotations

import gzip
import hashlib
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit, logit

from bayesjudge import datasets as ds
from bayesjudge.baselines import avg_prob
from bayesjudge.data import DataValidationError
from bayesjudge.datasets.files import SHARED_DATA, resolve_data_file
from bayesjudge.metrics import cycle_rate

# SHA-256 of the upstream files (../shared/data, see its COMMIT files); the shipped
# copies are these bytes after gunzip, with or without ../shared.
UPSTREAM_SHA256 = {
    "summeval_scores.csv": "430ca7d3db977d64d03aeb6155e0d062c3652f1a56f9147cc4fce5e4fbe5441c",
    "unieval_topical_chat_result.json":
        "e1c28ffea8850d82a53c241922557fcde1a16b14cb50ce29db29ab3db702678d",
}
PANDALM_MODELS = {"bloom-7b", "cerebras-gpt-6.7B", "llama-7b", "opt-7b", "pythia-6.9b"}


@pytest.fixture(scope="module")
def summeval() -> pd.DataFrame:
    return ds.load_summeval()


@pytest.fixture(scope="module")
def topical() -> pd.DataFrame:
    return ds.load_topical_chat(include_unieval=True)


@pytest.fixture(scope="module")
def pandalm() -> pd.DataFrame:
    return ds.load_pandalm()


# --------------------------------------------------------------------------- shipped files
@pytest.mark.parametrize("name", sorted(UPSTREAM_SHA256))
def test_shipped_copies_are_upstream_bytes(name):
    shipped = resolve_data_file(name, None, "unused", allow_gzip=True)
    assert shipped.name == name + ".gz"
    assert hashlib.sha256(gzip.decompress(shipped.read_bytes())).hexdigest() == (
        UPSTREAM_SHA256[name])


# --------------------------------------------------------------------------- SummEval
def test_summeval_is_100_articles_x_16_systems_x_4_aspects(summeval):
    assert summeval.shape == (6400, 4)
    assert list(summeval.columns) == ["context", "item", "aspect", "score"]
    assert summeval["context"].nunique() == 100
    assert summeval.groupby(["context", "aspect"]).size().eq(16).all()
    assert set(summeval["aspect"]) == set(ds.SUMMEVAL_ASPECTS)
    assert summeval["item"].nunique() == 16
    assert all(isinstance(v, str) for v in summeval["context"].head(50))
    assert all(isinstance(v, str) for v in summeval["item"].head(50))
    assert summeval["score"].between(1, 5).all()
    first = summeval.iloc[:4]  # the file's first row, exactly as written
    assert first["context"].iloc[0] == "dm-test-8764fb95bfad8ee849274873a92fb8d6b400eee2"
    assert first["item"].iloc[0] == "M11"
    assert first["score"].tolist() == pytest.approx([4 / 3, 1.0, 3.0, 5 / 3])


# --------------------------------------------------------------------------- Topical-Chat
def test_topical_chat_is_60_contexts_x_6_responses(topical):
    assert topical.shape == (360 * 6, 5)
    assert topical["context"].nunique() == 60
    assert topical.groupby(["context", "aspect"]).size().eq(6).all()
    assert topical["context"].iloc[0] == "0" and topical["context"].iloc[-1] == "59"
    assert set(topical["aspect"]) == set(ds.TOPICAL_CHAT_DIMENSIONS)
    assert set(ds.TOPICAL_CHAT_ASPECTS.values()) <= set(ds.TOPICAL_CHAT_DIMENSIONS)
    assert "Nucleus Decoding (p = 0.3)" in set(topical["item"])
    assert "unieval" not in ds.load_topical_chat().columns


def test_topical_chat_matches_the_curators_derived_table(topical):
    # ../shared/data sits beside the checkout in CI and in development: fail, never skip
    assert (SHARED_DATA / "topical_chat").is_dir(), f"{SHARED_DATA} is missing ../shared/data"
    ref = pd.read_csv(SHARED_DATA / "topical_chat" / "topicalchat_usr_scores.csv",
                      dtype={"context_id": str})
    wide = topical.pivot_table(index=["context", "item"], columns="aspect", values="score")
    ref = ref.set_index(["context_id", "system_id"])
    wide = wide.loc[ref.index]
    for dim in ds.TOPICAL_CHAT_DIMENSIONS:
        np.testing.assert_allclose(wide[dim], ref[dim], atol=1e-9)


def test_unieval_judge_is_eq1_on_score_differences(topical):
    judge = ds.topical_chat_unieval_judge(topical)
    assert len(judge) == 4 * 60 * 30
    assert set(judge["aspect"]) == set(ds.TOPICAL_CHAT_ASPECTS)
    # tau = pooled within-context SD of UniEval's scores, per dimension
    d = topical[topical["aspect"] == "engagingness"]
    tau = np.sqrt(d.groupby("context")["unieval"].var(ddof=1).mean())
    assert judge.attrs["tau"]["ENG"] == pytest.approx(tau)
    u = d.set_index(["context", "item"])["unieval"]
    eng = judge[judge["aspect"] == "ENG"]
    expected = expit((u.loc[list(zip(eng.context, eng.left))].to_numpy()
                      - u.loc[list(zip(eng.context, eng.right))].to_numpy()) / tau)
    np.testing.assert_allclose(eng["prob"], expected, rtol=1e-12)
    rev = eng.set_index(["context", "left", "right"])["prob"]
    flipped = rev.loc[list(zip(eng.context, eng.right, eng.left))].to_numpy()
    np.testing.assert_allclose(eng["prob"].to_numpy() + flipped, 1.0)
    # Avg-Prob ranks the responses of each context exactly as UniEval's scores do.
    w = avg_prob(eng).set_index(["context", "item"])["score"]
    both = pd.DataFrame({"w": w, "u": u.loc[w.index]})
    ranks = both.groupby(level="context").rank()
    assert (ranks["w"] == ranks["u"]).all()
    fixed = ds.topical_chat_unieval_judge(topical, tau=0.5, aspects=["overall"])
    assert set(fixed["aspect"]) == {"overall"} and fixed.attrs["tau"] == {"overall": 0.5}


# --------------------------------------------------------------------------- juries
def test_pandalm_jury_one_verdict_per_item_per_judge(pandalm):
    with pytest.warns(UserWarning, match="25 unparsable"):
        jury = ds.pandalm_jury(pandalm)
    assert len(jury) == 5 * 999 - 25
    assert set(jury["judge"]) == set(ds.PANDALM_JURY.values())
    assert set(jury["left"]) | set(jury["right"]) == PANDALM_MODELS
    assert not jury.duplicated(["judge", "item"]).any()
    assert "context" not in jury.columns and jury["item"].iloc[0] == "0"
    a1 = jury[jury["judge"] == "annotator_1"].set_index("item")
    codes = pandalm.set_index(pandalm["item"].astype(str))["annotator_1"]
    expect = codes.map({1: "left", -1: "right", 0: "tie"})
    assert (a1["outcome"] == expect.loc[a1.index]).all()
    assert (a1["left"] == pandalm.set_index(pandalm["item"].astype(str))["model_1"]).all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        by_item = ds.pandalm_jury(pandalm, context="item", unparsable="drop")
    assert (by_item["context"] == by_item["item"]).all()


def test_wmt23_jury_pairs_per_segment_and_rater():
    pen = ds.load_wmt23_sxs()
    jury = ds.wmt23_jury(pen)
    assert len(jury) == 377 * 45 * 3
    assert jury["judge"].nunique() == 8
    assert len(set(jury["left"]) | set(jury["right"])) == 10
    assert jury["segment"].nunique() == 377
    assert set(jury["outcome"]) == {"left", "right", "tie"}
    p = pen.set_index(["segment", "system", "rater"])["mqm_penalty"]
    sample = jury.sample(300, random_state=0)
    seg = sample["segment"].astype(int)
    pl = p.loc[list(zip(seg, sample["left"], sample["judge"]))].to_numpy()
    pr = p.loc[list(zip(seg, sample["right"], sample["judge"]))].to_numpy()
    expect = np.where(np.isclose(pl, pr), "tie", np.where(pl < pr, "left", "right"))
    assert (sample["outcome"].to_numpy() == expect).all()
    assert (ds.wmt23_jury(pen, context="segment")["context"] == jury["segment"]).all()


# --------------------------------------------------------------------------- simulator
@pytest.fixture(scope="module")
def small(summeval) -> pd.DataFrame:
    keep = summeval["context"].isin(summeval["context"].unique()[:20])
    return summeval[keep & summeval["aspect"].isin(["coherence", "relevance"])]


def test_simulator_without_noise_is_eq13_exactly(small):
    judges = {"sharp": 0.5, "blunt": 2.0}
    comps, truth = ds.simulate_jury(small, judges, pair_noise=0.0, random_seed=1)
    s = truth["skill"].set_index(["context", "aspect", "item"])["skill"]
    for aspect, g in s.groupby(level="aspect"):
        assert g.mean() == pytest.approx(0.0, abs=1e-12)
    sl = s.loc[list(zip(comps.context, comps.aspect, comps.left))].to_numpy()
    sr = s.loc[list(zip(comps.context, comps.aspect, comps.right))].to_numpy()
    sig = comps["judge"].map(judges).to_numpy()
    np.testing.assert_allclose(logit(comps["prob"]), (sl - sr) / sig, atol=1e-9)
    assert (truth["skill"]["perceived"] == truth["skill"]["skill"]).all()
    assert len(comps) == 2 * 20 * 2 * 16 * 15  # judges x contexts x aspects x N(N-1)


def test_simulator_is_reproducible_by_seed_and_leaves_global_rng_alone(small):
    state = np.random.get_state()[1].copy()
    a, _ = ds.simulate_jury(small, {"j": 1.0}, shared_noise=0.3, random_seed=5)
    b, _ = ds.simulate_jury(small, {"j": 1.0}, shared_noise=0.3, random_seed=5)
    c, _ = ds.simulate_jury(small, {"j": 1.0}, shared_noise=0.3, random_seed=6)
    pd.testing.assert_frame_equal(a, b)
    assert not np.allclose(a["prob"], c["prob"])
    assert (np.random.get_state()[1] == state).all()


def test_noisier_judges_have_more_cycles(small):
    judges = {"good": 0.3, "mid": 1.0, "bad": 3.0}
    comps, truth = ds.simulate_jury(small, judges, pair_noise=1.0, random_seed=2)
    rates = cycle_rate(comps, by=["judge"]).set_index("judge")["cycle_rate"]
    assert rates["good"] < rates["mid"] < rates["bad"]
    assert truth["sigma"].to_dict() == judges


def test_one_order_design_has_no_reversed_duplicates_and_bias_shows(small):
    comps, _ = ds.simulate_jury(small, {"j": 1.0, "k": 1.0}, orders="one", pair_fraction=0.5,
                                position_bias={"k": 1.5}, kind="hard", random_seed=3)
    key = list(zip(comps.judge, comps.context, comps.aspect, comps.left, comps.right))
    rev = set(zip(comps.judge, comps.context, comps.aspect, comps.right, comps.left))
    assert len(set(key)) == len(key) and not set(key) & rev
    n_pairs = 2 * 20 * 2 * 120
    assert abs(len(comps) - 0.5 * n_pairs) < 4 * np.sqrt(n_pairs * 0.25)
    left_rate = comps.assign(win=comps["outcome"] == "left").groupby("judge")["win"].mean()
    assert left_rate["k"] > left_rate["j"] + 0.15  # bias 1.5 on the logit scale
    both, _ = ds.simulate_jury(small, {"j": 1.0}, random_seed=3)
    fw = set(zip(both.context, both.aspect, both.left, both.right))
    assert fw == set(zip(both.context, both.aspect, both.right, both.left))


def test_simulator_rejects_bad_judges(small):
    with pytest.raises(DataValidationError, match="sigma"):
        ds.simulate_jury(small, {"j": 0.0})
    with pytest.raises(DataValidationError, match="unknown judges"):
        ds.simulate_jury(small, {"j": 1.0}, position_bias={"x": 1.0})


def test_stated_reliability_orders_each_judges_avg_prob_src(summeval):
    from bayesjudge.metrics import reliability_correlation, spearman_per_context

    coh = summeval[summeval["aspect"] == "coherence"]
    judges = {"a": 0.25, "b": 0.5, "c": 1.0, "d": 2.0, "e": 4.0}
    comps, truth = ds.simulate_jury(coh, judges, random_seed=4)
    ds_avg = avg_prob(comps, per_judge=True).merge(
        coh, on=["context", "aspect", "item"], suffixes=("", "_human"))
    src = pd.Series({j: spearman_per_context(g["score"], g["score_human"], g["context"])
                     for j, g in ds_avg.groupby("judge")})
    assert src.loc[list(judges)].is_monotonic_decreasing
    cyc = cycle_rate(comps, by=["judge"]).set_index("judge")["cycle_rate"]
    corr = reliability_correlation(1 / truth["sigma"], 1 - cyc)
    assert corr["spearman"] == pytest.approx(1.0) and corr["pearson"] > 0.8
    assert len(ds_avg) == 5 * 100 * 16
