"""Paired permutation test and top cluster against exact and scipy references."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from bayesjudge.data import DataValidationError
from bayesjudge.experiments.calibration.significance import paired_permutation_test, top_cluster


def _exact_two_sided_p(diff):
    """Enumerate all 2**n sign patterns: P(|sum s_i d_i| >= |sum d_i|)."""
    diff = np.asarray(diff, dtype=np.int64)  # integers: comparisons are exact
    signs = np.array(list(itertools.product([-1, 1], repeat=diff.size)))
    return float(np.mean(np.abs(signs @ diff) >= abs(diff.sum())))


def _mc_tolerance(p, n_resamples):
    return 4.5 * math.sqrt(p * (1 - p) / n_resamples) + 2 / n_resamples


@pytest.fixture(scope="module")
def small_pair():
    # absolute errors in {0, 1, 2}; ties (d = 0) and a 2-point swing included
    a = np.array([2, 1, 0, 2, 1, 1, 2, 0, 2, 1, 0])
    b = np.array([1, 1, 0, 2, 0, 2, 0, 1, 1, 0, 0])
    return a, b


# --------------------------------------------------------------------------- permutation test


def test_exact_enumeration_agrees_with_scipy(small_pair):
    a, b = small_pair
    ref = stats.permutation_test(
        (a, b),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=np.inf,
        alternative="two-sided",
    )
    assert 0.05 < ref.pvalue < 0.5  # a case that discriminates right from wrong
    assert _exact_two_sided_p(a - b) == pytest.approx(ref.pvalue, abs=1e-12)


def test_monte_carlo_pvalue_converges_to_exact(small_pair):
    a, b = small_pair
    exact = _exact_two_sided_p(a - b)
    n_resamples = 20_000
    res = paired_permutation_test(a, b, n_resamples=n_resamples, random_seed=1)
    assert res.statistic == pytest.approx(np.mean(a - b))
    assert abs(res.pvalue - exact) < _mc_tolerance(exact, n_resamples)


def test_batched_rows_are_separate_tests():
    rng = np.random.default_rng(2)
    a = rng.integers(0, 2, (4, 9))
    b = rng.integers(0, 2, (4, 9))
    b[0] = a[0]  # identical row -> p = 1 exactly
    n_resamples = 20_000
    res = paired_permutation_test(a, b, n_resamples=n_resamples, random_seed=3)
    assert res.pvalue.shape == res.statistic.shape == (4,)
    assert res.pvalue[0] == 1.0
    for row in range(4):
        exact = _exact_two_sided_p(a[row] - b[row])
        assert abs(res.pvalue[row] - exact) < _mc_tolerance(exact, n_resamples)


def test_pvalue_floor_is_one_over_resamples_plus_one():
    a = np.ones(200)
    b = np.zeros(200)
    res = paired_permutation_test(a, b, n_resamples=100, random_seed=0)
    assert res.pvalue == pytest.approx(1 / 101)
    assert res.statistic == 1.0


def test_swapping_methods_changes_sign_not_pvalue(small_pair):
    a, b = small_pair
    ab = paired_permutation_test(a, b, n_resamples=500, random_seed=9)
    ba = paired_permutation_test(b, a, n_resamples=500, random_seed=9)
    assert ab.pvalue == ba.pvalue
    assert ab.statistic == -ba.statistic
    again = paired_permutation_test(a, b, n_resamples=500, random_seed=9)
    assert again == ab


def test_size_under_the_null_is_nominal():
    # 600 independent null data sets: P(p <= alpha) must be about alpha (two-sided).
    rng = np.random.default_rng(4)
    n_sets = 600
    a = rng.integers(0, 3, (n_sets, 40)).astype(float)
    b = rng.integers(0, 3, (n_sets, 40)).astype(float)
    p = paired_permutation_test(a, b, n_resamples=99, random_seed=5).pvalue
    for alpha in (0.05, 0.2):
        rate = np.mean(p <= alpha)
        assert abs(rate - alpha) < 3.5 * math.sqrt(alpha * (1 - alpha) / n_sets)


@pytest.mark.parametrize(
    ("a", "b", "kwargs", "match"),
    [
        ([0, 1], [0, 1, 1], {}, "one shape"),
        ([0, np.nan], [0, 1], {}, "NaN"),
        ([], [], {}, "empty"),
        (["x"], ["y"], {}, "numeric"),
        ([[[0]]], [[[0]]], {}, "1-D or 2-D"),
    ],
)
def test_permutation_test_rejects_bad_input(a, b, kwargs, match):
    with pytest.raises(DataValidationError, match=match):
        paired_permutation_test(a, b, **kwargs)


@pytest.mark.parametrize("n_resamples", [0, -5, 2.5, True])
def test_permutation_test_rejects_bad_resamples(n_resamples):
    with pytest.raises(ValueError, match="n_resamples"):
        paired_permutation_test([0, 1], [1, 0], n_resamples=n_resamples)


# --------------------------------------------------------------------------- top cluster


def _losses_with_extra_errors(base, extra=(), fixed=()):
    out = base.copy()
    out[list(extra)] = 1
    out[list(fixed)] = 0
    return out


@pytest.fixture(scope="module")
def stop_case():
    """A < B < C < D by mean loss; exact p: A-B 2/2**4, A-C 2/2**8, B-C ~0.39, D-* > 0.2.

    The cluster is {A, B}: C is significantly worse than A, and the walk stops at
    C, so D stays out although it is not significantly different from anyone.
    """
    base = np.zeros(200)
    base[:40] = 1
    return {
        "C": _losses_with_extra_errors(base, range(44, 52)),
        "A": base,
        "D": _losses_with_extra_errors(base, range(52, 93), fixed=range(32)),
        "B": _losses_with_extra_errors(base, range(40, 44)),
    }


def test_top_cluster_stops_at_first_significant_method(stop_case):
    res = top_cluster(stop_case, n_resamples=4000, random_seed=0)
    assert res.members.index.tolist() == ["A", "B", "C", "D"]
    assert res.members.tolist() == [True, True, False, False]
    np.testing.assert_allclose(res.mean_score, [40 / 200, 44 / 200, 48 / 200, 49 / 200])
    p = res.pvalues
    for (m, n), exact in {("A", "B"): 2 / 16, ("A", "C"): 2 / 256, ("B", "C"): 1588 / 4096}.items():
        assert abs(p.loc[m, n] - exact) < _mc_tolerance(exact, 4000)
        assert p.loc[m, n] == p.loc[n, m]
    assert (p.loc["D", ["A", "B", "C"]] > 0.2).all()
    assert np.isnan(np.diag(p.to_numpy())).all()


def test_top_cluster_excludes_method_different_from_any_member_not_just_the_best():
    base = np.zeros(200)
    base[:40] = 1
    # A: 31 errors of B fixed and 30 new ones -> same ballpark, noisy, not significant.
    a = _losses_with_extra_errors(base, range(100, 130), fixed=range(31))
    # C: B plus 8 errors on items A does not touch -> significant vs B only.
    c = _losses_with_extra_errors(base, range(40, 48))
    res = top_cluster({"A": a, "B": base, "C": c}, n_resamples=4000, random_seed=1)
    assert res.members.index.tolist() == ["A", "B", "C"]
    assert res.pvalues.loc["C", "A"] > 0.2
    assert res.pvalues.loc["C", "B"] < 0.05
    assert res.members.tolist() == [True, True, False]


def test_top_cluster_for_accuracies_sorts_descending(stop_case):
    accuracy = {m: 1 - v for m, v in stop_case.items()}
    res = top_cluster(accuracy, lower_is_better=False, n_resamples=4000, random_seed=0)
    assert res.members.index.tolist() == ["A", "B", "C", "D"]
    assert res.members.tolist() == [True, True, False, False]


def test_top_cluster_combines_splits_as_documented():
    rng = np.random.default_rng(8)
    n_splits, n_items, n_resamples = 6, 30, 200
    a = rng.integers(0, 3, (n_splits, n_items)).astype(float)
    b = np.clip(a + rng.integers(-1, 2, (n_splits, n_items)), 0, 2)
    per_split = paired_permutation_test(a, b, n_resamples=n_resamples, random_seed=4).pvalue
    exceed = np.rint(per_split * (n_resamples + 1) - 1)
    pooled = top_cluster({"a": a, "b": b}, n_resamples=n_resamples, random_seed=4)
    median = top_cluster(
        {"a": a, "b": b}, n_resamples=n_resamples, combine="median", random_seed=4
    )
    assert pooled.pvalues.iloc[0, 1] == pytest.approx(
        (1 + exceed.sum()) / (1 + n_splits * n_resamples)
    )
    assert median.pvalues.iloc[0, 1] == pytest.approx(np.median(per_split))


def test_dataframe_with_ragged_splits_equals_padded_mapping():
    rng = np.random.default_rng(3)
    sizes = [5, 7, 6]
    frames, padded = [], {m: np.full((3, 7), np.nan) for m in "xyz"}
    for s, size in enumerate(sizes):
        block = rng.integers(0, 2, (size, 3)).astype(float)
        frames.append(
            pd.DataFrame(
                block,
                columns=list("xyz"),
                index=pd.MultiIndex.from_product([[f"s{s}"], range(size)], names=["split", "item"]),
            )
        )
        for k, m in enumerate("xyz"):
            padded[m][s, :size] = block[:, k]
    from_frame = top_cluster(pd.concat(frames), n_resamples=300, random_seed=2)
    from_mapping = top_cluster(padded, n_resamples=300, random_seed=2)
    pd.testing.assert_frame_equal(from_frame.pvalues, from_mapping.pvalues)
    pd.testing.assert_series_equal(from_frame.members, from_mapping.members)
    expected_mean = {m: np.mean([np.nanmean(r) for r in padded[m]]) for m in "xyz"}
    for m, value in from_frame.mean_score.items():
        assert value == pytest.approx(expected_mean[m])


def test_single_method_is_its_own_cluster():
    res = top_cluster({"only": [0, 1, 1]}, random_seed=0)
    assert res.members.tolist() == [True]


@pytest.mark.parametrize(
    ("outcomes", "match"),
    [
        ({}, "non-empty"),
        ({"a": [0, 1], "b": [0, 1, 1]}, "one non-empty shape"),
        ({"a": [0, np.nan], "b": [0, 1]}, "not paired"),
        ({"a": [[0.2], [0.3]], "b": [[0.4], [0.1]]}, "per-item outcomes"),
        (pd.DataFrame({"a": [0.2, 0.3]}, index=pd.Index([0, 1], name="split")), "per-item"),
        ({"a": [[np.nan, np.nan], [0, 1]], "b": [[np.nan, np.nan], [1, 1]]}, "no scored items"),
    ],
)
def test_top_cluster_rejects_bad_outcomes(outcomes, match):
    with pytest.raises(DataValidationError, match=match):
        top_cluster(outcomes)


@pytest.mark.parametrize(
    ("kwargs", "match"), [({"tau": 0}, "tau"), ({"combine": "fisher"}, "combine")]
)
def test_top_cluster_rejects_bad_options(kwargs, match):
    with pytest.raises(ValueError, match=match):
        top_cluster({"a": [0, 1], "b": [1, 1]}, **kwargs)
