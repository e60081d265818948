"""Tests for bayesjudge.datasets: real-data loaders against upstream numbers, simulators
against their generating parameters."""

from __future__ import annotations

import gzip
import hashlib
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize

import bayesjudge
from bayesjudge import datasets as ds
from bayesjudge.datasets.files import SHARED_DATA, resolve_data_file
from bayesjudge.datasets.pandalm import _majority
from bayesjudge.models.davidson.aggregator import davidson_log_probs

REFERENCE = Path(__file__).resolve().parent / "reference"

# SHA-256 of the upstream files (../shared/data, see its COMMIT files): the shipped
# copies must be these bytes (PandaLM's JSON after gunzip), with or without ../shared.
UPSTREAM_SHA256 = {
    "sxs_mqm_generalMT2023_zhen.3ratingsPerSegment.tsv.tar.gz":
        "beb5eb98a34a79ec36212488d9044361ec21c8a2c54f50d509c086246244b3e2",
    "gpt-3.5-turbo-testset-v1.json":
        "4c00aa7b3eeae504050a037422ba6f5b0a2ee041680f47bb77b8a4b549b128e3",
    "pandalm-7b-testset-v1.json":
        "9a40b62a7bb2aa87ca77eb8bfcb51539b5a62f974ce91678d30e834d65ed0a7e",
    "testset-v1.json":
        "cc154f9067c7382d7ea86f8f246511a5e1ac87e1fddd845c5938d789505b07a4",
}
PANDALM_MODELS = {"bloom-7b", "cerebras-gpt-6.7B", "llama-7b", "opt-7b", "pythia-6.9b"}


@pytest.fixture(scope="module")
def penalties() -> pd.DataFrame:
    return ds.load_wmt23_sxs()


@pytest.fixture(scope="module")
def pandalm() -> pd.DataFrame:
    return ds.load_pandalm()


# --------------------------------------------------------------------------- WMT23
def test_wmt_loader_matches_derived_segment_scores(penalties):
    # segment_scores.csv was derived from the raw file by the data's curators with their
    # own script (../shared/data/README.md); a gzip copy lives in tests/reference
    # (Apache-2.0, google/wmt-mqm-human-evaluation @ 7fadea2) so the check always runs.
    ref = pd.read_csv(REFERENCE / "wmt23_segment_scores.csv.gz")
    merged = ref.merge(
        penalties,
        left_on=["globalSegId", "system", "rater"],
        right_on=["segment", "system", "rater"],
        how="outer",
        indicator=True,
        suffixes=("_ref", ""),
    )
    assert len(ref) == len(penalties) == len(merged)
    assert (merged["_merge"] == "both").all()
    np.testing.assert_allclose(merged["mqm_penalty"], merged["mqm_penalty_ref"], rtol=0, atol=1e-9)
    assert (merged["n_major"] == merged["n_major_ref"]).all()
    assert (merged["n_minor"] == merged["n_minor_ref"]).all()
    assert (merged["doc"] == merged["doc_ref"]).all()
    assert (merged["doc_segment"] == merged["docSegId"]).all()


def test_wmt_shape_and_values(penalties):
    assert len(penalties) == 377 * 10 * 3
    assert penalties["segment"].nunique() == 377
    assert penalties["system"].nunique() == 10
    assert penalties["rater"].nunique() == 8
    per_cell = penalties.groupby(["segment", "system"])["rater"].nunique()
    assert (per_cell == 3).all()
    assert not penalties.duplicated(["segment", "system", "rater"]).any()
    assert (penalties["mqm_penalty"] >= 0).all()
    assert penalties.attrs["n_hotw_rows_dropped"] == 461
    # every penalty is a combination of the four weights
    tenths = penalties["mqm_penalty"] * 10
    np.testing.assert_allclose(tenths, np.round(tenths), atol=1e-9)


def test_wmt_packaged_archive_is_upstream_bytes():
    shipped = resolve_data_file(ds.WMT23_SXS_FILE, None, "wmt23_sxs_zhen", allow_gzip=False)
    assert hashlib.sha256(shipped.read_bytes()).hexdigest() == UPSTREAM_SHA256[ds.WMT23_SXS_FILE]


def test_wmt_preferences(penalties):
    prefs = ds.wmt23_preferences(penalties)
    assert list(prefs.columns) == ["item", "segment", "system_a", "system_b", "rater", "vote"]
    assert len(prefs) == 377 * 45 * 3
    assert set(prefs["vote"].unique()) == {-1, 0, 1}
    assert (prefs["system_a"] < prefs["system_b"]).all()
    assert prefs["item"].nunique() == 377 * 45
    # independent recomputation on a few rows
    pen = penalties.set_index(["segment", "system", "rater"])["mqm_penalty"]
    for row in prefs.sample(200, random_state=0).itertuples():
        pa = pen[(row.segment, row.system_a, row.rater)]
        pb = pen[(row.segment, row.system_b, row.rater)]
        assert row.vote == (0 if pa == pb else (1 if pa < pb else -1))
        assert row.item == f"{row.segment}|{row.system_a}|{row.system_b}"
    wide = ds.wmt23_preferences(penalties, tie_threshold=1.0)
    assert (wide["vote"] == 0).sum() > (prefs["vote"] == 0).sum()
    assert (ds.wmt23_preferences(penalties, tie_threshold=1e6)["vote"] == 0).all()


def test_wmt_preferences_rejects_duplicates(penalties):
    with pytest.raises(ValueError, match="unique"):
        ds.wmt23_preferences(pd.concat([penalties.head(3), penalties.head(1)]))
    with pytest.raises(ValueError, match="tie_threshold"):
        ds.wmt23_preferences(penalties, tie_threshold=-1)


# --------------------------------------------------------------------------- PandaLM
def test_pandalm_format(pandalm):
    assert len(pandalm) == 999
    assert pandalm["item"].tolist() == list(range(999))
    assert set(pandalm["model_1"]) | set(pandalm["model_2"]) == PANDALM_MODELS
    pairs = pandalm.groupby(["model_1", "model_2"]).size()
    assert len(pairs) == 10 and pairs.sum() == 999
    for col in ["annotator_1", "annotator_2", "annotator_3", "human_majority", "pandalm7b"]:
        assert pandalm[col].notna().all()
        assert set(pandalm[col].unique()) == {-1, 0, 1}
    assert set(pandalm["gpt35"].dropna().unique()) == {-1, 0, 1}


def test_pandalm_unparsable_counted(pandalm):
    assert pandalm.attrs["n_unparsable"] == {"gpt35": 25, "pandalm7b": 0}
    assert int(pandalm["gpt35"].isna().sum()) == 25
    assert len(pandalm.attrs["unparsable_items"]["gpt35"]) == 25
    with pytest.warns(UserWarning, match="skipped 25 unparsable gpt35"):
        votes = ds.pandalm_votes(pandalm)
    assert len(votes) == 2 * 999 - 25
    assert set(votes["vote"].unique()) == {-1, 0, 1}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        only_panda = ds.pandalm_votes(pandalm, judges=["pandalm7b"])
    assert len(only_panda) == 999


def test_pandalm_battles_is_anchored_input_with_every_vote(pandalm):
    from bayesjudge.models.anchored.data import validate_battles

    with pytest.warns(UserWarning, match=r"pandalm_battles: skipped 25 .*\(gpt35: 25\)"):
        battles = ds.pandalm_battles(pandalm)
    assert list(battles.columns) == ["battle", "judge", "left", "right", "outcome"]
    assert len(battles) == 3 * 999 + (999 - 25) + 999
    # every vote, as upstream coded it (1 / 0 / -1 -> left / tie / right, response1 left)
    code = {"left": 1, "tie": 0, "right": -1}
    by_item = pandalm.set_index("item")
    human = battles[battles["judge"] == "human"]
    assert (human.groupby("battle").size() == 3).all()
    np.testing.assert_array_equal(
        human["outcome"].map(code).to_numpy().reshape(-1, 3),
        by_item[["annotator_1", "annotator_2", "annotator_3"]].to_numpy(int))
    for judge in ds.PANDALM_JUDGES:
        rows = battles[battles["judge"] == judge]
        expected = by_item[judge].dropna()
        assert rows["battle"].tolist() == expected.index.tolist()
        assert rows["outcome"].map(code).tolist() == expected.astype(int).tolist()
    shown = by_item.loc[battles["battle"], ["model_1", "model_2"]].to_numpy()
    np.testing.assert_array_equal(battles[["left", "right"]].to_numpy(), shown)
    encoded = validate_battles(battles, "human")
    assert encoded.ref_counts.sum() == 2997 and len(encoded.battles) == 999
    assert list(encoded.judges) == ["gpt35", "pandalm7b"]
    only = ds.pandalm_battles(pandalm, judges=[])
    assert len(only) == 2997 and set(only["judge"]) == {"human"}


def test_pandalm_majority_rule():
    votes = np.array([[1, 1, -1], [0, -1, -1], [1, 0, -1], [0, 0, 0], [-1, 1, -1]])
    assert _majority(votes).tolist() == [1, -1, 0, 0, -1]


def test_pandalm_reproduces_upstream_accuracy(pandalm):
    """data/compute_metrics.py upstream: GPT-3.5 0.7107, PandaLM-7B 0.6677.

    Upstream maps 'garbage' to tie and breaks 3-way disagreements by annotator 1
    (no such item in v1, so both majority rules agree here).
    """
    ann = pandalm[["annotator_1", "annotator_2", "annotator_3"]].to_numpy(int)
    assert (pd.DataFrame(ann).nunique(axis=1) == 3).sum() == 0
    gpt_acc = (pandalm["gpt35"].fillna(0) == pandalm["human_majority"]).mean()
    panda_acc = (pandalm["pandalm7b"] == pandalm["human_majority"]).mean()
    assert round(gpt_acc, 4) == 0.7107
    assert round(panda_acc, 4) == 0.6677


def test_pandalm_labels_and_judgments(pandalm):
    labels = ds.pandalm_labels(pandalm)
    assert list(labels.columns) == ["item", "label"] and len(labels) == 999
    judg = ds.pandalm_judgments("pandalm7b", data=pandalm)
    assert len(judg) == 2 * 999  # each item counts once for each of its two models
    assert set(judg["system"]) == PANDALM_MODELS
    assert set(judg["judge_label"].unique()) <= {0, 1}
    assert set(judg["human_label"].unique()) <= {0, 1}
    # binarisation: human_label = 1 iff the majority prefers the focal system's response
    row = judg[(judg["system"] == "llama-7b")].iloc[0]
    src = pandalm.set_index("item").loc[row["item"]]
    sign = 1 if src["model_1"] == "llama-7b" else -1
    assert row["human_label"] == int(src["human_majority"] == sign)
    assert row["judge_label"] == int(src["pandalm7b"] == sign)
    with pytest.warns(UserWarning, match="unparsable gpt35"):
        one = ds.pandalm_judgments("gpt35", system="opt-7b", data=pandalm)
    n_opt = ((pandalm["model_1"] == "opt-7b") | (pandalm["model_2"] == "opt-7b")).sum()
    assert len(one) == n_opt - 6 and (one["system"] == "opt-7b").all()
    with pytest.raises(ValueError, match="judge"):
        ds.pandalm_judgments("gpt4", data=pandalm)


def test_pandalm_packaged_json_is_upstream_bytes():
    for name in ds.PANDALM_FILES.values():
        shipped = resolve_data_file(name, None, "pandalm", allow_gzip=True)
        assert shipped.name == name + ".gz"
        digest = hashlib.sha256(gzip.decompress(shipped.read_bytes())).hexdigest()
        assert digest == UPSTREAM_SHA256[name]


# --------------------------------------------------------------------------- simulators
def _davidson_nll(params, s, x, y):
    """Negative log-likelihood of eq. 4 with u = b*s and eta = e0 + g*x (numpy reference)."""
    b, e = params
    logits = np.stack([b * s, e * x, -b * s], axis=1)
    lse = np.logaddexp.reduce(logits, axis=1)
    cls = np.select([y == 1, y == 0], [0, 1], 2)
    return -(logits[np.arange(len(y)), cls] - lse).sum()


def _features(votes, alpha=1.0, kappa=1.0):
    n = votes[["n_pos", "n_tie", "n_neg"]].sum(axis=1).to_numpy()
    s = 0.5 * np.log((votes["n_pos"].to_numpy() + alpha) / (votes["n_neg"].to_numpy() + alpha))
    t = np.log((votes["n_tie"].to_numpy() + kappa) / (n + kappa))
    return s, t


@pytest.mark.parametrize("tie", ["global", "local"])
def test_davidson_simulator_recovers_parameters(tie):
    beta = 1.7
    if tie == "global":
        votes, labels = ds.simulate_davidson_votes(20000, 10, beta=beta, eta0=-0.4, random_seed=3)
        truth = np.array([beta, -0.4])
    else:
        votes, labels = ds.simulate_davidson_votes(
            20000, 10, beta=beta, tie="local", gamma=0.8, random_seed=3
        )
        truth = np.array([beta, 0.8])
    assert list(votes.columns) == ["item", "n_pos", "n_tie", "n_neg"]
    assert (votes[["n_pos", "n_tie", "n_neg"]].sum(axis=1) == 10).all()
    s, t = _features(votes)
    x = np.ones_like(s) if tie == "global" else t
    y = labels["label"].to_numpy()
    fit = minimize(_davidson_nll, x0=np.zeros(2), args=(s, x, y), method="BFGS")
    se = np.sqrt(np.diag(fit.hess_inv))
    assert np.all(np.abs(fit.x - truth) < 4 * se + 1e-3), (fit.x, truth, se)
    assert np.all(se < 0.1)


def test_davidson_simulator_reproducible_and_long_format():
    a = ds.simulate_davidson_votes(50, [3, 5] * 25, beta=1.0, eta0=0.0, random_seed=7)
    b = ds.simulate_davidson_votes(50, [3, 5] * 25, beta=1.0, eta0=0.0, random_seed=7)
    pd.testing.assert_frame_equal(a[0], b[0])
    pd.testing.assert_frame_equal(a[1], b[1])
    long, _ = ds.simulate_davidson_votes(
        50, [3, 5] * 25, beta=1.0, eta0=0.0, random_seed=7, votes_format="long"
    )
    counted = long.groupby("item")["vote"].value_counts().unstack(fill_value=0)
    n_pos = counted[1].reindex(range(50), fill_value=0).to_numpy()
    assert (n_pos == a[0]["n_pos"].to_numpy()).all()
    assert len(long) == 4 * 50
    with pytest.raises(ValueError, match="eta0"):
        ds.simulate_davidson_votes(10, 5, beta=1.0, random_seed=0)


def test_davidson_log_probs_eq4_order_used_by_simulator():
    # one formula (models.davidson): last axis ordered (-1, 0, +1)
    p = np.exp(davidson_log_probs(np.array([0.3, -2.0]), 0.5))
    z = np.exp(0.3) + np.exp(-0.3) + np.exp(0.5)
    np.testing.assert_allclose(p[0], [np.exp(-0.3) / z, np.exp(0.5) / z, np.exp(0.3) / z])
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    assert not hasattr(ds, "davidson_probabilities")


def test_davidson_simulator_labels_follow_eq4_draw_by_draw():
    """Replay the simulator's random stream with an independent eq. 4 (no package code)."""
    beta, eta0, n_items, n_votes = 1.7, -0.4, 300, 7
    votes, labels = ds.simulate_davidson_votes(n_items, n_votes, beta=beta, eta0=eta0,
                                               random_seed=11)
    rng = np.random.default_rng(11)
    z = rng.choice(3, size=n_items, p=np.array([0.4, 0.2, 0.4]))
    conc = np.full((n_items, 3), 1.0)
    conc[np.arange(n_items), z] = 4.0
    g = rng.gamma(conc)
    rng.multinomial(np.full(n_items, n_votes), g / g.sum(axis=1, keepdims=True))
    s = 0.5 * np.log((votes["n_pos"].to_numpy() + 1.0) / (votes["n_neg"].to_numpy() + 1.0))
    u = beta * s
    weights = np.stack([np.exp(u), np.full(n_items, np.exp(eta0)), np.exp(-u)], axis=1)
    p_plus_tie_minus = weights / weights.sum(axis=1, keepdims=True)
    uniform = rng.random(n_items)
    cls = (uniform[:, None] > np.cumsum(p_plus_tie_minus, axis=1)[:, :2]).sum(axis=1)
    np.testing.assert_array_equal(labels["label"].to_numpy(), np.array([1, 0, -1])[cls])


def test_shared_data_fallback_location_is_next_to_the_checkout():
    assert SHARED_DATA == Path(bayesjudge.__file__).resolve().parents[2] / "shared" / "data"


def test_misclassification_simulator_matches_truth():
    judg, calib, truth = ds.simulate_misclassification(
        theta=0.3, q0=0.7, q1=0.9, n=200000, m0=50000, m1=50000, random_seed=11, return_truth=True
    )
    assert list(judg.columns) == ["item", "judge_label"]
    assert list(calib.columns) == ["item", "judge_label", "human_label"]
    assert (calib["human_label"] == 0).sum() == 50000 and (calib["human_label"] == 1).sum() == 50000
    assert not set(judg["item"]) & set(calib["item"])
    q0_hat = 1 - calib.loc[calib["human_label"] == 0, "judge_label"].mean()
    q1_hat = calib.loc[calib["human_label"] == 1, "judge_label"].mean()
    assert abs(q0_hat - 0.7) < 0.01 and abs(q1_hat - 0.9) < 0.01
    assert abs(truth["true_label"].mean() - 0.3) < 0.005
    # eq. in Sec. 5: E[p_hat] = (q0 + q1 - 1) theta + 1 - q0
    assert abs(judg["judge_label"].mean() - (0.6 * 0.3 + 0.3)) < 0.005
    rogan_gladen = (judg["judge_label"].mean() + q0_hat - 1) / (q0_hat + q1_hat - 1)
    assert abs(rogan_gladen - 0.3) < 0.02


def test_misclassification_simulator_several_systems():
    judg, calib = ds.simulate_misclassification(
        theta=[0.2, 0.8], q0=0.8, q1=[0.95, 0.7], n=[30000, 20000], m0=20000, m1=20000,
        random_seed=0, systems=["a", "b"],
    )
    assert judg.groupby("system").size().to_dict() == {"a": 30000, "b": 20000}
    for system, q1 in (("a", 0.95), ("b", 0.7)):
        c = calib[calib["system"] == system]
        assert abs(c.loc[c["human_label"] == 1, "judge_label"].mean() - q1) < 0.015
        assert abs(1 - c.loc[c["human_label"] == 0, "judge_label"].mean() - 0.8) < 0.015
    with pytest.raises(ValueError, match="in \\[0, 1\\]"):
        ds.simulate_misclassification(1.2, 0.8, 0.8, 10, 5, 5)
    with pytest.raises(ValueError, match="same length"):
        ds.simulate_misclassification([0.1, 0.2], [0.8, 0.8, 0.8], 0.8, 10, 5, 5)


def test_pandalm_unparsable_verdicts_warn_or_drop_as_asked():
    import warnings

    from bayesjudge.datasets import pandalm_judgments, pandalm_votes

    with pytest.warns(UserWarning, match="skipped 25 unparsable gpt35"):
        warned = pandalm_votes(judges=["gpt35"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dropped = pandalm_votes(judges=["gpt35"], unparsable="drop")
        pandalm_judgments(judge="gpt35", unparsable="drop")
    pd.testing.assert_frame_equal(warned, dropped)
    with pytest.raises(ValueError, match="choose 'warn' or 'drop'"):
        pandalm_votes(unparsable="ignore")
