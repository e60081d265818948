"""Simultaneous rank sets: joint coverage over the draws, never narrower than the marginal
intervals, a hand case, ``ranking(joint=True)`` on every BT-family model (MAP and NUTS), the
Monte Carlo error of P(best) (by hand for MAP, ArviZ's for NUTS) and coverage of the true
ranking on simulated data (slow)."""

from __future__ import annotations

import warnings

import arviz as az
import numpy as np
import pandas as pd
import pytest
import xarray as xr
from bt_reference import simulate_jury
from scipy import stats
from stochastic import FALSE_ALARM

import bayesjudge.rank_sets as rank_sets_module
from bayesjudge import BradleyTerry, BTSigma, DavidsonBT
from bayesjudge.rank_sets import differences_table, simultaneous_rank_sets


def _marginal(ranks, ci):
    return (np.quantile(ranks, (1 - ci) / 2, axis=0, method="lower"),
            np.quantile(ranks, (1 + ci) / 2, axis=0, method="higher"))


def _joint_share(ranks, lo, hi):
    return np.all((ranks >= lo) & (ranks <= hi), axis=1).mean()


def _rank(skill):
    return np.argsort(np.argsort(-skill, axis=1), axis=1) + 1


def test_hand_case_widens_only_where_needed():
    # each marginal 90% interval is a single rank, but only 88 of 100 draws have all four
    # at once; two more draws are needed: widening one adjacent pair by one rank each
    # (total width 2) is the tightest, a common level widens every item (total 6)
    draws = np.array([[1, 2, 3, 4]] * 88 + [[2, 1, 3, 4]] * 4 + [[1, 2, 4, 3]] * 4
                     + [[1, 3, 2, 4]] * 4)
    lo, hi = simultaneous_rank_sets(draws, 0.9)
    assert _joint_share(draws, lo, hi) >= 0.9
    assert (hi - lo).sum() == 2
    np.testing.assert_array_equal(_marginal(draws, 0.9)[0], [1, 2, 3, 4])
    assert (lo <= [1, 2, 3, 4]).all() and (hi >= [1, 2, 3, 4]).all()
    # a certain ranking gives single ranks
    lo, hi = simultaneous_rank_sets(np.tile([3, 1, 2], (50, 1)), 0.95)
    np.testing.assert_array_equal(lo, [3, 1, 2])
    np.testing.assert_array_equal(hi, [3, 1, 2])


def _marginal_by_hand(ranks, ci):
    """Each column's equal-tailed interval with its bounds taken outwards, by sorting: the
    order statistics at floor(q_lo (D - 1)) and ceil(q_hi (D - 1)), q = (1 -+ ci) / 2."""
    d = len(ranks)
    ordered = np.sort(ranks, axis=0)
    lo = ordered[int(np.floor((1 - ci) / 2 * (d - 1) + 1e-12))]
    hi = ordered[int(np.ceil((1 + ci) / 2 * (d - 1) - 1e-12))]
    return lo, hi


@pytest.mark.parametrize("n_draws", [55, 199, 2000])
@pytest.mark.parametrize("ci", [0.5, 0.9])
def test_marginal_rank_intervals_by_hand(n_draws, ci):
    rng = np.random.default_rng(n_draws)
    skill = np.linspace(0, 2, 8) + 0.7 * rng.normal(size=(n_draws, 8))  # ranks overlap
    out = rank_sets_module.rank_columns(skill.mean(0), skill, ci, False,
                                        lambda b: np.zeros(b.shape[1]))
    lo, hi = _marginal_by_hand(_rank(skill), ci)
    assert (hi - lo).min() >= 1  # every interval spans ranks: the bounds are tested
    np.testing.assert_array_equal(out["rank_lower"], lo)
    np.testing.assert_array_equal(out["rank_upper"], hi)


def test_bt_family_marginal_rank_intervals_by_hand():
    """ranking()'s own quantiles (per context) equal the order statistics of the draws."""
    example = BradleyTerry.example_data()
    fit = BradleyTerry(random_seed=3).fit(*example.fit_args)
    _, draws = fit._draws("skill")
    contexts, items = fit._layout_state["contexts"], fit._layout_state["items"]
    draws = draws.reshape(len(draws), len(contexts), len(items))
    for ci in (0.5, 0.9):
        table = fit.ranking(ci_prob=ci)
        spans = 0
        for c, ctx in enumerate(contexts):
            grp = table[table["context"] == ctx]
            pos = [items.index(i) for i in grp["item"]]
            lo, hi = _marginal_by_hand(_rank(draws[:, c, :])[:, pos], ci)
            np.testing.assert_array_equal(grp["rank_lower"], lo)
            np.testing.assert_array_equal(grp["rank_upper"], hi)
            spans += int((hi > lo).sum())
        assert spans >= 2, spans  # some ranks are uncertain, so the bounds are tested


def test_greedy_peeling_stops_only_when_no_bound_can_move():
    """The peeled rectangle is minimal move by move: moving any bound that lies outside the
    item's marginal interval one rank inwards leaves fewer than ceil(ci D) draws inside
    (few draws, ci D not an integer)."""
    for seed in range(40):
        rng = np.random.default_rng(seed)
        d, n = (55, 199)[seed % 2], 5
        ranks = _rank(np.linspace(0, 2, n) + 0.5 * rng.normal(size=(d, n))
                      + 0.3 * rng.normal(size=(d, 1)))
        need = int(np.ceil(0.9 * d))
        m_lo, m_hi = _marginal(ranks, 0.9)
        lo, hi = rank_sets_module._greedy(ranks, 0.9, need)
        assert np.all((ranks >= lo) & (ranks <= hi), axis=1).sum() >= need
        for i in range(n):
            for side, ok in (("lo", lo[i] < m_lo[i]), ("hi", hi[i] > m_hi[i])):
                if ok:
                    lo2, hi2 = lo.copy(), hi.copy()
                    (lo2 if side == "lo" else hi2)[i] += 1 if side == "lo" else -1
                    inside = np.all((ranks >= lo2) & (ranks <= hi2), axis=1).sum()
                    assert inside < need, (seed, i, side)


@pytest.mark.parametrize("ci", [0.5, 0.8, 0.9, 0.95])
@pytest.mark.parametrize("n_items, n_draws", [(2, 2000), (6, 2000), (15, 2000), (5, 55),
                                              (5, 199)])
def test_joint_coverage_over_the_draws_and_marginal_inside(ci, n_items, n_draws):
    rng = np.random.default_rng(n_items + n_draws)
    common = rng.normal(size=(n_draws, 1))  # correlated skills, as posteriors have
    skill = (np.linspace(0, 3, n_items) + 0.6 * rng.normal(size=(n_draws, n_items))
             + 0.3 * common)
    ranks = _rank(skill)
    lo, hi = simultaneous_rank_sets(ranks, ci)
    m_lo, m_hi = _marginal(ranks, ci)
    assert _joint_share(ranks, lo, hi) >= ci
    assert (lo <= m_lo).all() and (hi >= m_hi).all()
    assert lo.dtype.kind == "i" and ((1 <= lo) & (lo <= hi) & (hi <= n_items)).all()
    # a widening the algorithm picked must be needed: the marginal intervals fall short
    if (hi - lo).sum() > (m_hi - m_lo).sum():
        assert _joint_share(ranks, m_lo, m_hi) < ci


def test_bad_rank_draws_are_refused():
    with pytest.raises(ValueError, match="ranks 1..3"):
        simultaneous_rank_sets(np.array([[0, 1, 2]]), 0.9)
    with pytest.raises(ValueError, match="2-D"):
        simultaneous_rank_sets(np.array([1, 2, 3]), 0.9)
    with pytest.raises(ValueError, match="ci_prob"):
        simultaneous_rank_sets(np.array([[1, 2]]), 1.0)


@pytest.fixture(scope="module")
def arena():
    df, _ = simulate_jury(n_contexts=1, n_items=7, sigma=(1.0,), outcome=True, tie_width=0.5,
                          repeats=2, random_seed=11)
    return df.drop(columns="context")


@pytest.mark.parametrize("model", [BradleyTerry, BTSigma, DavidsonBT])
def test_ranking_joint_on_the_bt_family(model, arena):
    fit = model().fit(arena)
    marginal, joint = fit.ranking(ci_prob=0.9), fit.ranking(ci_prob=0.9, joint=True)
    assert list(joint.columns) == list(marginal.columns)
    assert joint["item"].tolist() == marginal["item"].tolist()
    assert (joint["rank_lower"] <= marginal["rank_lower"]).all()
    assert (joint["rank_upper"] >= marginal["rank_upper"]).all()
    # the sets hold >= 90% of the model's own (Laplace) draws of the whole ranking
    _, draws = fit._draws("skill")
    ranks = _rank(draws.reshape(len(draws), -1))
    items = fit._layout_state["items"]
    pos = [items.index(i) for i in joint["item"]]
    lo = joint["rank_lower"].to_numpy()
    hi = joint["rank_upper"].to_numpy()
    assert _joint_share(ranks[:, pos], lo, hi) >= 0.9
    assert _joint_share(ranks[:, pos], marginal["rank_lower"].to_numpy(),
                        marginal["rank_upper"].to_numpy()) <= _joint_share(ranks[:, pos], lo, hi)
    # P(best)'s Monte Carlo error from the Laplace draws' effective number, by hand
    post = fit.idata_.posterior
    resampled = "importance-resampled" in post.attrs["inference"]
    n_eff = min(post.attrs["importance_ess"], 1000) if resampled else 1000
    p = (ranks[:, pos] == 1).mean(axis=0)
    np.testing.assert_allclose(joint["p_best"], p)
    np.testing.assert_allclose(joint["p_best_mcse"], np.sqrt(p * (1 - p) / n_eff), rtol=1e-12)
    # every pair once, the better ranked first, its difference by hand from the draws
    diff = fit.differences(ci_prob=0.9)
    assert len(diff) == 7 * 6 // 2
    rank = dict(zip(marginal["item"], marginal["rank"]))
    assert all(rank[a] < rank[b] for a, b in zip(diff["item_a"], diff["item_b"]))
    skills = draws.reshape(len(draws), -1)
    for row in diff.itertuples():
        d = skills[:, items.index(row.item_a)] - skills[:, items.index(row.item_b)]
        assert row.mean == pytest.approx(d.mean(), abs=1e-12)
        assert (row.lower, row.upper) == pytest.approx(tuple(np.quantile(d, [0.05, 0.95])))
        assert row.prob_a_better == np.mean(d > 0)
        assert row.prob_a_better_mcse == pytest.approx(
            np.sqrt(row.prob_a_better * (1 - row.prob_a_better) / n_eff), abs=1e-15)
    assert diff["laplace_ok"].dtype == bool


def test_ranking_joint_under_nuts_and_per_context():
    df, _ = simulate_jury(n_contexts=2, n_items=5, sigma=(1.0,), outcome=True, repeats=2,
                          random_seed=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = BradleyTerry(symmetrize=False, random_seed=1).fit(
            df, method="nuts", chains=2, draws=300, tune=300)
    joint = fit.ranking(ci_prob=0.8, joint=True)
    _, draws = fit._draws("skill")
    draws = draws.reshape(len(draws), 2, 5)
    for c, ctx in enumerate(fit._layout_state["contexts"]):
        grp = joint[joint["context"] == ctx]
        pos = [fit._layout_state["items"].index(i) for i in grp["item"]]
        ranks = _rank(draws[:, c, :])[:, pos]
        assert _joint_share(ranks, grp["rank_lower"].to_numpy(),
                            grp["rank_upper"].to_numpy()) >= 0.8
        # P(best)'s Monte Carlo error is ArviZ's mcse of the mean of the indicator
        best = (ranks == 1).T.reshape(len(pos), 2, 300).astype(float)  # (item, chain, draw)
        data = xr.Dataset({"b": (("chain", "draw", "item"), np.moveaxis(best, 0, -1))})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = az.mcse(data, method="mean")["b"].values
        np.testing.assert_allclose(grp["p_best_mcse"], want, rtol=1e-10, atol=1e-15)
    # pairs only within a context; P(a better)'s error is ArviZ's mcse of the indicator
    diff = fit.differences()
    assert diff.groupby("context").size().tolist() == [10, 10]
    for c, ctx in enumerate(fit._layout_state["contexts"]):
        grp = diff[diff["context"] == ctx]
        items = fit._layout_state["items"]
        ind = np.stack([draws[:, c, items.index(a)] > draws[:, c, items.index(b)]
                        for a, b in zip(grp["item_a"], grp["item_b"])], axis=1)
        data = xr.Dataset({"b": (("chain", "draw", "pair"), ind.reshape(2, 300, -1))})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = az.mcse(data.astype(float), method="mean")["b"].values
        np.testing.assert_allclose(grp["prob_a_better"], ind.mean(axis=0))
        np.testing.assert_allclose(grp["prob_a_better_mcse"], want, rtol=1e-10, atol=1e-15)
    assert "laplace_ok" not in diff


def test_differences_table_by_hand_in_blocks(monkeypatch):
    """Brute force over the pairs; blocks of 3 pairs; a group of one item has no pair."""
    monkeypatch.setattr(rank_sets_module, "PAIR_BLOCK", 3 * 400)
    rng = np.random.default_rng(2)
    draws = rng.normal(np.arange(9.0) * 0.3, 1.0, size=(400, 9))
    group = np.array([1, 0, 1, 0, 1, 1, 0, 2, 0])  # groups 0 and 1 interleaved, 2 alone
    labels = pd.DataFrame({"context": np.array(["g0", "g1", "g2"])[group],
                           "item": [f"i{k}" for k in range(9)]})
    rank = np.empty(9, dtype=int)
    for g in range(3):
        idx = np.flatnonzero(group == g)
        rank[idx[np.argsort(-draws[:, idx].mean(axis=0))]] = np.arange(1, len(idx) + 1)
    ok = np.ones(9, dtype=bool)
    ok[4] = False
    calls = []

    def share(hits):
        calls.append(hits.shape[1])
        return np.full(hits.shape[1], 0.5)

    out = differences_table(labels, draws, rank, group, 0.8, share, ok)
    assert len(out) == 6 + 6 and max(calls) <= 3 and sum(calls) == 12
    assert out["context"].tolist() == ["g0"] * 6 + ["g1"] * 6
    for row in out.itertuples():
        a, b = int(row.item_a[1:]), int(row.item_b[1:])
        assert group[a] == group[b] and rank[a] < rank[b]
        d = draws[:, a] - draws[:, b]
        assert (row.mean, row.sd) == pytest.approx((d.mean(), d.std(ddof=1)))
        assert (row.lower, row.upper) == pytest.approx(tuple(np.quantile(d, [0.1, 0.9])))
        assert row.prob_a_better == np.mean(d > 0) and row.prob_a_better_mcse == 0.5
        assert row.laplace_ok == (4 not in (a, b))


@pytest.mark.slow
def test_joint_sets_cover_the_true_ranking_on_simulated_data():
    """MAP joint 90% sets hold the whole true ranking in >= 90% of simulated data sets."""
    covered, marginal_covered, reps = 0, 0, 40
    for rep in range(reps):
        df, truth = simulate_jury(n_contexts=1, n_items=8, sigma=(1.0,), noise=0.0,
                                  outcome=True, repeats=3, random_seed=100 + rep)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = BradleyTerry(symmetrize=False).fit(df.drop(columns="context"))
        true = _rank(truth["skill"].reshape(1, -1))[0]
        for joint in (True, False):
            rank = fit.ranking(ci_prob=0.9, joint=joint)
            idx = [int(i.split("-")[1]) for i in rank["item"]]
            inside = ((rank["rank_lower"].to_numpy() <= true[idx])
                      & (true[idx] <= rank["rank_upper"].to_numpy())).all()
            if joint:
                covered += inside
            else:
                marginal_covered += inside
    # one-sided exact binomial check at the false-alarm rate: joint sets may over-cover
    assert stats.binomtest(covered, reps, 0.9, alternative="less").pvalue > FALSE_ALARM
    assert covered >= marginal_covered


def test_equal_point_estimates_share_their_best_rank():
    values = np.array([0.3, 2.0, 0.3, -1.0, 2.0, 0.3])
    ranks = rank_sets_module.point_ranks(values)
    assert ranks.tolist() == [3, 1, 3, 6, 1, 3]  # competition ranking: 1, 1, 3, 3, 3, 6
    # by hand: one plus the number of strictly larger values
    assert ranks.tolist() == [1 + int((values > v).sum()) for v in values]
    distinct = np.array([0.1, -0.2, 0.5])
    assert rank_sets_module.point_ranks(distinct).tolist() == [2, 3, 1]


def test_llmfao_items_with_equal_skills_share_a_rank():
    """LLMFAO, GPT-4 on the prompt k8s: 15 models with exactly the same record get the same
    MAP skill; their rank is the same (it used to be 1..15 in the rows' order)."""
    from bayesjudge.datasets import llmfao

    table = llmfao()
    table = table[(table["judge"] == "gpt-4") & table["context"].isin(["k8s", "qft"])]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ranking = DavidsonBT().fit(table[["judge", "left", "right", "outcome", "context"]]
                                   ).ranking()
    for _, group in ranking.groupby("context"):
        skill, rank = group["skill"].to_numpy(), group["rank"].to_numpy()
        assert rank.tolist() == [1 + int((skill > s).sum()) for s in skill]
    k8s = ranking[ranking["context"] == "k8s"]
    assert (k8s["skill"] == k8s["skill"].max()).sum() > 1  # the data's ties are there
    assert k8s["rank"].is_monotonic_increasing  # still sorted by rank
