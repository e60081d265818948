"""Tests for bayesjudge.metrics.ranking: cycle rate (eqs. 8-10), per-context SRC and
reliability correlations (Qian, Sun, Gales & Knill 2026, arXiv:2602.16610), each
against an independent reference: a literal triple loop, scipy.stats."""

from __future__ import annotations

import itertools
from math import comb

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from bayesjudge.data import DataValidationError
from bayesjudge.metrics import cycle_rate, reliability_correlation, spearman_per_context


def _table(rows, **const) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=["left", "right", "prob"])
    for k, v in const.items():
        df[k] = v
    return df


# --------------------------------------------------------------------------- cycle rate
def test_hand_example_one_cycle_among_four_triples():
    # a > b > c > a is a cycle; d loses to everyone: 1 of C(4, 3) = 4 triples.
    rows = [("a", "b", 0.9), ("b", "c", 0.8), ("c", "a", 0.6),
            ("a", "d", 0.7), ("b", "d", 0.9), ("c", "d", 0.8)]
    out = cycle_rate(_table(rows, judge="j"))
    assert out["n_cycles"].tolist() == [1]
    assert out["n_triples"].tolist() == [4] and out["n_triples_total"].tolist() == [4]
    assert out["cycle_rate"].tolist() == [0.25]


def test_a_tie_never_closes_a_cycle_and_hard_outcomes_work():
    soft = _table([("a", "b", 0.9), ("b", "c", 0.8), ("c", "a", 0.5)], judge="j")
    assert cycle_rate(soft)["n_cycles"].item() == 0
    hard = pd.DataFrame({"judge": "j", "left": ["a", "b", "c"], "right": ["b", "c", "a"],
                         "outcome": ["left", "left", "left"]})
    assert cycle_rate(hard)["cycle_rate"].item() == 1.0
    hard.loc[2, "outcome"] = "tie"
    assert cycle_rate(hard)["cycle_rate"].item() == 0.0


def test_positional_bias_symmetrised_away_or_counted_in_both_orientations():
    # The judge prefers the left slot with p = 0.7 whatever the pair, both orders shown.
    items = ["a", "b", "c"]
    rows = [(i, j, 0.7) for i in items for j in items if i != j]
    df = _table(rows, judge="j")
    assert cycle_rate(df)["n_cycles"].item() == 0  # eq. 3 gives p' = 0.5 everywhere
    raw = cycle_rate(df, symmetrize=False)
    # A is complete in both directions: both orientations of eq. 9 count.
    assert raw["n_cycles"].item() == 2 and raw["cycle_rate"].item() == 2.0


def _reference(df: pd.DataFrame, symmetrize: bool) -> dict:
    """Literal eq. 8-9 loop over i<j<k per (judge, context) with the documented rules."""
    out = {}
    for (judge, ctx), g in df.groupby(["judge", "context"], sort=False):
        mean = g.groupby(["left", "right"])["prob"].mean().to_dict()
        items = sorted(set(g["left"]) | set(g["right"]))

        def a(i, j):
            if symmetrize:
                vals = []
                if (i, j) in mean:
                    vals.append(mean[(i, j)])
                if (j, i) in mean:
                    vals.append(1 - mean[(j, i)])
                return bool(vals) and np.mean(vals) > 0.5
            if (i, j) in mean:
                return mean[(i, j)] > 0.5
            return (j, i) in mean and 1 - mean[(j, i)] > 0.5

        def seen(i, j):
            return (i, j) in mean or (j, i) in mean

        cycles = countable = 0
        for i, j, k in itertools.combinations(items, 3):
            if seen(i, j) and seen(j, k) and seen(i, k):
                countable += 1
            cycles += int(a(i, j) and a(j, k) and a(k, i)) + int(a(i, k) and a(k, j) and a(j, i))
        out[(judge, ctx)] = (cycles, countable, comb(len(items), 3))
    return out


@pytest.mark.parametrize("symmetrize", [True, False])
def test_cycle_counts_match_a_brute_force_triple_loop(symmetrize):
    rng = np.random.default_rng(7)
    rows = []
    for judge in ["j1", "j2", "j3"]:
        for ctx in ["c1", "c2", "c3", "c4"]:
            n = int(rng.integers(3, 8))
            items = [f"{ctx}-{m}" if m % 2 else str(m) for m in range(n)]  # shared + own ids
            for i, j in itertools.permutations(items, 2):
                if rng.uniform() < 0.75:  # sparse, often one order only
                    p = rng.choice([0.5, rng.uniform(), float(rng.integers(0, 2))])
                    rows.append((judge, ctx, i, j, p))
                    if rng.uniform() < 0.2:  # a repeated judgment of the same order
                        rows.append((judge, ctx, i, j, rng.uniform()))
    df = pd.DataFrame(rows, columns=["judge", "context", "left", "right", "prob"])
    got = cycle_rate(df, symmetrize=symmetrize, per_context=True)
    ref = _reference(df, symmetrize)
    assert len(got) == len(ref)
    for r in got.itertuples():
        cycles, countable, total = ref[(r.judge, r.context)]
        assert (r.n_cycles, r.n_triples, r.n_triples_total) == (cycles, countable, total)
        expected = cycles / countable if countable else np.nan
        np.testing.assert_equal(r.cycle_rate, expected)
    # Group rate = mean over countable contexts of the per-context rate.
    per = got.groupby("judge", sort=False)["cycle_rate"].mean()
    summary = cycle_rate(df, symmetrize=symmetrize).set_index("judge")
    np.testing.assert_allclose(summary.loc[per.index, "cycle_rate"], per.to_numpy())
    assert (summary["n_matrices"] + summary["n_matrices_skipped"] == 4).all()


def test_groups_by_judge_and_aspect_by_default_and_by_can_be_changed():
    cyc = [("a", "b", 0.9), ("b", "c", 0.9), ("c", "a", 0.9)]
    ok = [("a", "b", 0.9), ("b", "c", 0.9), ("a", "c", 0.9)]
    df = pd.concat([
        _table(cyc, judge="j", aspect="x", context="1"),
        _table(ok, judge="j", aspect="x", context="2"),
        _table(ok, judge="j", aspect="y", context="1"),
    ], ignore_index=True)
    out = cycle_rate(df)
    assert out[["judge", "aspect"]].values.tolist() == [["j", "x"], ["j", "y"]]
    assert out["cycle_rate"].tolist() == [0.5, 0.0]
    assert cycle_rate(df, by=())["cycle_rate"].item() == pytest.approx(1 / 3)
    with pytest.raises(DataValidationError, match="by="):
        cycle_rate(df, by=["annotator"])


@pytest.mark.parametrize(
    "rows, match",
    [
        ({"left": ["a"], "right": ["a"], "prob": [0.5]}, "self-comparison"),
        ({"left": ["a"], "right": ["b"], "prob": [1.5]}, "prob"),
        ({"left": ["a"], "right": ["b"], "prob": [np.nan]}, "neither"),
        ({"left": ["a"], "right": ["b"], "outcome": ["A"]}, "outcome"),
        ({"left": ["a"], "right": ["b"], "prob": [0.3], "outcome": ["left"]}, "both"),
        ({"left": ["a"], "right": ["b"]}, "prob"),
    ],
)
def test_bad_comparisons_raise_naming_the_column(rows, match):
    with pytest.raises(DataValidationError, match=match):
        cycle_rate(pd.DataFrame(rows))


# --------------------------------------------------------------------------- SRC
def test_spearman_per_context_matches_scipy_and_skips_constant_contexts():
    rng = np.random.default_rng(3)
    ctx = np.repeat(["a", "b", "c", "d"], 9)
    truth = rng.integers(1, 5, size=ctx.size).astype(float)  # ties inside contexts
    truth[ctx == "d"] = 3.0  # constant: rho undefined, skipped
    scores = truth + rng.normal(size=ctx.size)
    mean, per = spearman_per_context(scores, truth, ctx, per_context=True)
    expected = [stats.spearmanr(scores[ctx == c], truth[ctx == c])[0] for c in "abc"]
    np.testing.assert_allclose(per.loc[["a", "b", "c"]], expected, rtol=1e-12)
    assert np.isnan(per.loc["d"]) and per.index.tolist() == ["a", "b", "c", "d"]
    assert mean == pytest.approx(np.mean(expected))
    assert spearman_per_context(scores, truth, ctx) == pytest.approx(mean)
    assert np.isnan(spearman_per_context([1.0, 2.0], [1.0, 1.0]))
    with pytest.raises(DataValidationError, match="non-finite"):
        spearman_per_context([1.0, np.nan], [1.0, 2.0])


def test_spearman_ties_scores_equal_up_to_rounding():
    # two items equal in exact arithmetic, apart by rounding: a tie, whatever the noise's sign
    truth = np.array([1.0, 2.0, 2.0, 3.0])
    for noise in (1e-15, -1e-15):
        scores = np.array([0.1, 0.5, 0.5 + noise, 0.9])
        assert spearman_per_context(scores, truth) == pytest.approx(1.0)
        assert spearman_per_context(scores, truth, tie_tol=0) < 1.0  # exact ranks see noise
    rng = np.random.default_rng(4)
    scores, truth, ctx = rng.normal(size=40), rng.integers(0, 4, 40), np.repeat(list("ab"), 20)
    exact = [stats.spearmanr(scores[ctx == c], truth[ctx == c])[0] for c in "ab"]
    assert spearman_per_context(scores, truth, ctx) == pytest.approx(np.mean(exact), rel=1e-12)
    with pytest.raises(DataValidationError, match="tie_tol"):
        spearman_per_context(scores, truth, tie_tol=-1)


def test_reliability_correlation_matches_scipy_and_aligns_series():
    rel = pd.Series([0.5, 2.0, 1.0, 3.0, 0.2], index=list("abcde"))
    q = pd.Series([0.3, 0.55, 0.5, 0.9, 0.1], index=list("edcba"))  # other order
    out = reliability_correlation(rel, q)
    qa = q.loc[rel.index]
    assert out["pearson"] == pytest.approx(stats.pearsonr(rel, qa)[0])
    assert out["spearman"] == pytest.approx(stats.spearmanr(rel, qa)[0])
    assert out["n"] == 5
    with pytest.raises(DataValidationError, match="same unique"):
        reliability_correlation(rel, q.rename({"a": "z"}))
    # ties in both (three judges of equal quality, two of equal reliability): average ranks
    rel_t, q_t = [0.5, 2.0, 2.0, 3.0, 0.2, 1.0], [0.3, 0.5, 0.5, 0.5, 0.1, 0.4]
    tied = reliability_correlation(rel_t, q_t)
    assert tied["spearman"] == pytest.approx(stats.spearmanr(rel_t, q_t)[0], abs=1e-12)
    assert tied["pearson"] == pytest.approx(stats.pearsonr(rel_t, q_t)[0], abs=1e-12)
