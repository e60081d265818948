"""The generic misclassification study on any long table (Lee et al., 2025, Section 8.2).

Counts, truth and the closed forms against hand computations with pandas; calibration
per item; ids kept as written; PandaLM through the generic function; executors;
input errors; coverage on a simulated finite population with known truth.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from bayesjudge.data import DataValidationError, validate_judgment_counts
from bayesjudge.datasets import load_pandalm
from bayesjudge.engine import ConvergenceWarning
from bayesjudge.estimators import lang_reiczigel_rates
from bayesjudge.experiments.misclassification.pandalm import (
    pandalm_misclassification_study,
    pandalm_misclassification_table,
)
from bayesjudge.experiments.misclassification.pandalm_data import pandalm_win_rate_truth
from bayesjudge.experiments.misclassification.result import METHODS, calibration_masks, split_counts
from bayesjudge.experiments.misclassification.study import misclassification_study
from bayesjudge.models.misclassification.hierarchical import HierarchicalMisclassificationModel
from bayesjudge.models.misclassification.posterior import bayes_posterior_theta

SYSTEMS = ("sys-A", "sys-B", "007")
JUDGES = {"j1": (0.8, 0.9), "j2": (0.7, 0.75)}  # judge: (q0, q1)
N_ITEMS, N_SPLITS, N_HIER = 200, 8, 2
FAST = dict(n_splits=N_SPLITS, hierarchical_splits=N_HIER, hierarchical_method="map",
            n_draws=4000, progressbar=False, random_seed=5)


def simulate_table(n_items, systems, judges, theta, seed):
    """Items compare two systems (cycling through the pairs); every judge labels every row.

    Human labels are Bernoulli(theta[system]) per row; judge labels flip them with the
    judge's specificity q0 / sensitivity q1. Rows are shuffled (no order to rely on).
    """
    rng = np.random.default_rng(seed)
    pairs = [(a, b) for i, a in enumerate(systems) for b in systems[i + 1:]]
    rows = []
    for i in range(n_items):
        item = f"{i:03d}"
        for system in pairs[i % len(pairs)]:
            z = int(rng.random() < theta[system])
            for judge, (q0, q1) in judges.items():
                zh = int(rng.random() < (q1 if z else 1 - q0))
                rows.append((judge, system, item, zh, z))
    table = pd.DataFrame(rows, columns=["judge", "system", "item", "judge_label", "human_label"])
    return table.sample(frac=1, random_state=seed).reset_index(drop=True)


@pytest.fixture(scope="module")
def table():
    theta = dict(zip(SYSTEMS, (0.3, 0.5, 0.7)))
    return simulate_table(N_ITEMS, SYSTEMS, JUDGES, theta, seed=0)


@pytest.fixture(scope="module")
def study(table):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return misclassification_study(table, **FAST)


def hand_counts(table: pd.DataFrame, calibration_items) -> pd.DataFrame:
    """The six counts per (judge, system) of one split, straight from the rows."""
    t = table.assign(cal=table["item"].isin(calibration_items))
    rows = []
    for (judge, system), g in t.groupby(["judge", "system"], sort=False):
        test, cal = g[~g["cal"]], g[g["cal"]]
        z, zh = cal["human_label"], cal["judge_label"]
        rows.append({"judge": judge, "system": system,
                     "judged_pos": int(test["judge_label"].sum()), "n": len(test),
                     "tp": int(((z == 1) & (zh == 1)).sum()), "m1": int((z == 1).sum()),
                     "tn": int(((z == 0) & (zh == 0)).sum()), "m0": int((z == 0).sum())})
    return pd.DataFrame(rows)


def split_frame(frame: pd.DataFrame, split: int, method: str | None = None) -> pd.DataFrame:
    keep = frame["split"] == split
    if method is not None:
        keep &= frame["method"] == method
    return frame[keep].drop(columns=["split"])


# ------------------------------------------------------------------- counts and splits


@pytest.mark.parametrize("split", [0, N_SPLITS - 1])
def test_counts_of_a_split_equal_a_hand_count(study, table, split):
    cal_items = study.calibration_items(split)
    assert len(cal_items) == len(set(cal_items)) == round(0.1 * N_ITEMS)
    assert set(cal_items) <= set(table["item"])
    ref = hand_counts(table, cal_items)
    got = split_frame(study.counts, split).merge(ref, on=["judge", "system"],
                                                 suffixes=("", "_hand"))
    assert len(got) == len(ref) == len(JUDGES) * len(SYSTEMS)
    for c in ("judged_pos", "n", "tp", "m1", "tn", "m0"):
        np.testing.assert_array_equal(got[c], got[f"{c}_hand"], err_msg=c)


def test_calibration_is_per_item_not_per_row(study, table):
    """A calibration item calibrates every system and judge it involves (2 x 2 rows here)."""
    rows_per_item = table.groupby("item").size()
    assert (rows_per_item == 2 * len(JUDGES)).all()
    cal_rows = study.counts.assign(cal=study.counts["m0"] + study.counts["m1"])
    per_split = cal_rows.groupby("split")["cal"].sum()
    assert (per_split == round(0.1 * N_ITEMS) * 2 * len(JUDGES)).all()
    # every row is a test row or a calibration row
    c = study.counts.merge(study.truth[["judge", "system", "n_items"]], on=["judge", "system"])
    np.testing.assert_array_equal(c["n"] + c["m0"] + c["m1"], c["n_items"])
    # both judges see the same calibration items: their calibration rows per system agree
    wide = cal_rows.pivot_table(index=["split", "system"], columns="judge", values="cal")
    np.testing.assert_array_equal(wide["j1"], wide["j2"])


def test_masks_are_prefix_stable_and_split_counts_accepts_a_system_order(table):
    items = pd.unique(table["item"])
    a = calibration_masks(len(items), 10, 0.1, random_seed=3)
    b = calibration_masks(len(items), 4, 0.1, random_seed=3)
    np.testing.assert_array_equal(a[:4], b)
    rows = table[table["judge"] == "j2"]
    systems, counts = split_counts(rows, items, a, systems=["007", "sys-A", "sys-B"])
    assert systems == ["007", "sys-A", "sys-B"]
    ref = hand_counts(rows, items[a[7]]).set_index("system").loc[systems]
    for c in ("judged_pos", "n", "tp", "m1", "tn", "m0"):
        np.testing.assert_array_equal(counts[c][7], ref[c])


# ------------------------------------------------------------------- truth and methods


def test_truth_q0_q1_by_hand(study, table):
    rows = []
    for (judge, system), g in table.groupby(["judge", "system"], sort=False):
        z, zh = g["human_label"].to_numpy(), g["judge_label"].to_numpy()
        rows.append({"judge": judge, "system": system, "n_items": len(g), "truth": z.mean(),
                     "judge_rate": zh.mean(), "q0": (zh[z == 0] == 0).mean(),
                     "q1": (zh[z == 1] == 1).mean()})
    ref = pd.DataFrame(rows).set_index(["judge", "system"])
    got = study.truth.set_index(["judge", "system"]).loc[ref.index]
    np.testing.assert_array_equal(got["n_items"], ref["n_items"])
    cols = ["truth", "judge_rate", "q0", "q1"]
    np.testing.assert_allclose(got[cols], ref[cols], atol=1e-12)
    np.testing.assert_allclose(got["expected_naive_bias"], got["judge_rate"] - got["truth"],
                               atol=1e-12)
    # every replication carries its (judge, system)'s truth
    rep = study.replications.merge(study.truth[["judge", "system", "truth"]],
                                   on=["judge", "system"], suffixes=("", "_t"))
    np.testing.assert_array_equal(rep["truth"], rep["truth_t"])


@pytest.mark.parametrize("split", [1, 6])
def test_naive_wald_and_lang_reiczigel_equal_hand_formulas(study, table, split):
    order = pd.MultiIndex.from_frame(study.truth[["judge", "system"]])
    ref = hand_counts(table, study.calibration_items(split)).set_index(["judge", "system"])
    ref = ref.loc[order].reset_index()  # the study's (judge, system) order
    alpha = study.settings["alpha"]
    # naive: p_hat on the test rows, p_hat -/+ z sqrt(p_hat (1 - p_hat) / n), clipped
    p = ref["judged_pos"] / ref["n"]
    half = norm.ppf(1 - alpha / 2) * np.sqrt(p * (1 - p) / ref["n"])
    naive = split_frame(study.replications, split, "naive_wald")
    np.testing.assert_allclose(naive[["estimate", "lower", "upper"]],
                               np.c_[p, np.clip(p - half, 0, 1), np.clip(p + half, 0, 1)],
                               atol=1e-12)
    # Lang-Reiczigel from the system's own calibration rows, and pooled over systems
    pooled = ref.groupby("judge")[["tp", "m1", "tn", "m0"]].transform("sum")
    for method, cal in (("lang_reiczigel", ref), ("lang_reiczigel_pooled", pooled)):
        ci = lang_reiczigel_rates(p, cal["tn"] / cal["m0"], cal["tp"] / cal["m1"], ref["n"],
                                  cal["m0"], cal["m1"], alpha=alpha)
        got = split_frame(study.replications, split, method)
        np.testing.assert_allclose(got[["estimate", "lower", "upper"]],
                                   np.c_[ci.estimate, ci.lower, ci.upper], atol=1e-12)


def test_every_method_on_the_same_splits_and_bayesian_fits_match_direct_ones(study, table):
    rep = study.replications
    assert list(pd.unique(rep["method"])) == list(METHODS)
    per_method = rep.groupby(["judge", "method"]).size()
    for judge in JUDGES:
        for method in METHODS:
            n = N_HIER if method == "hierarchical" else N_SPLITS
            assert per_method[(judge, method)] == n * len(SYSTEMS)
    assert len(study.diagnostics) == len(JUDGES) * N_HIER
    assert (study.diagnostics["error"] == "").all()
    # only Lang-Reiczigel is undefined on a split (q0_hat + q1_hat <= 1 from ~5 rows a class)
    undefined = rep[rep[["estimate", "lower", "upper"]].isna().any(axis=1)]
    assert set(undefined["method"]) <= {"lang_reiczigel"}
    defined = rep.dropna(subset=["lower", "upper"])
    assert (defined["lower"] <= defined["upper"]).all()
    summary = study.summary(common_splits=True)
    assert (summary["n_splits"] == N_HIER).all()
    assert list(summary["system"].iloc[: len(METHODS)]) == [study.truth["system"].iloc[0]] * 5
    # the hierarchical MAP of split 0 equals a direct fit on the hand counts
    ref = hand_counts(table, study.calibration_items(0)).query("judge == 'j1'")
    counts = validate_judgment_counts(*(ref[c] for c in ("judged_pos", "n", "tp", "m1", "tn",
                                                         "m0")), systems=list(ref["system"]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        direct = HierarchicalMisclassificationModel(random_seed=0).fit(counts, method="map")
    acc = direct.predict().query("quantity == 'accuracy'").set_index("system")
    got = split_frame(rep, 0, "hierarchical").query("judge == 'j1'").set_index("system")
    # Laplace draws of two seeds: importance-resampled (ESS >= 100) or, where Pareto k
    # says no, the Gaussian's own (flagged): the means agree to a fraction of the sd
    diff = np.abs(got.loc[acc.index, "estimate"] - acc["mean"])
    assert (diff < 0.75 * acc["sd"]).all(), pd.DataFrame({"diff": diff, "sd": acc["sd"]})
    # the per-system posterior equals the exact sampler on the hand counts, up to Monte
    # Carlo error (4000 draws in the study: sd 0.011 of the mean where m1 = 2)
    post = bayes_posterior_theta(*(ref[c].to_numpy() for c in ("judged_pos", "n", "tp", "m1",
                                                              "tn", "m0")), n_draws=50_000, rng=0)
    got = split_frame(rep, 0, "bayes").query("judge == 'j1'").set_index("system")
    np.testing.assert_allclose(got.loc[ref["system"], "estimate"], post.mean, atol=0.04)


def test_ids_come_back_as_written_and_mixed_types_are_not_sorted(study, table):
    assert list(study.truth["system"]) == list(pd.unique(table["system"])) * len(JUDGES)
    assert "007" in set(study.counts["system"]) and 7 not in set(study.counts["system"])
    assert all(isinstance(s, str) for s in study.replications["system"])
    mixed = table.assign(system=table["system"].replace({"sys-A": 7}).astype(object),
                         judge=table["judge"].replace({"j2": 2}).astype(object))
    out = misclassification_study(mixed, n_splits=3, bayes=False, hierarchical_splits=0,
                                  progressbar=False, random_seed=5)
    systems = list(pd.unique(mixed["system"]))
    assert list(out.truth["system"]) == systems * 2
    assert {type(s) for s in out.summary()["system"]} == {int, str}
    assert {type(j) for j in out.counts["judge"]} == {int, str}
    assert 7 in set(out.counts["system"]) and "7" not in set(out.counts["system"])
    # the same numbers as with the string ids
    a = study.counts.query("split < 3").reset_index(drop=True)
    b = out.counts.reset_index(drop=True)
    np.testing.assert_array_equal(a[["judged_pos", "n", "tp", "m1", "tn", "m0"]],
                                  b[["judged_pos", "n", "tp", "m1", "tn", "m0"]])


def test_bool_labels_and_no_judge_column(table):
    kw = dict(n_splits=3, hierarchical_splits=0, n_draws=200, progressbar=False)
    one = table[table["judge"] == "j1"]
    ints = misclassification_study(one.drop(columns="judge"), **kw)
    bools = misclassification_study(
        one.drop(columns="judge").astype({"judge_label": bool, "human_label": bool}), **kw)
    pd.testing.assert_frame_equal(ints.replications, bools.replications)
    assert set(ints.truth["judge"]) == {"judge"}


def test_a_system_without_test_rows_on_a_split_is_nan_not_an_error(table):
    """A tiny system: where its only item calibrates, it has no test row (n = 0).

    Seed 5 puts that item in split 0's calibration set; the hierarchical fit of split 0
    then runs on the three other systems.
    """
    tiny = table[(table["item"] == "000") & (table["system"] == "sys-A")].assign(system="tiny")
    assert len(tiny) == len(JUDGES)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = misclassification_study(pd.concat([table, tiny], ignore_index=True),
                                      n_splits=12, hierarchical_splits=1,
                                      hierarchical_method="map", n_draws=200,
                                      progressbar=False, random_seed=5)
    cal = [r for r in range(12) if "000" in set(out.calibration_items(r))]
    assert cal[0] == 0
    rep = out.replications.query("split in @cal")
    for method in ("naive_wald", "hierarchical"):
        part = rep[rep["method"] == method]
        assert part.loc[part["system"] == "tiny", "estimate"].isna().all()
        assert part.loc[part["system"] != "tiny", "estimate"].notna().all()
    assert (out.diagnostics["error"] == "").all()
    # elsewhere the tiny system has its one test row per judge
    others = out.counts.query("system == 'tiny' and split not in @cal")
    assert len(others) and (others["n"] == 1).all()


# ------------------------------------------------------------------- PandaLM, executors


def test_pandalm_through_the_generic_function_equals_the_wrapper():
    pandalm = load_pandalm()
    kw = dict(n_splits=4, hierarchical_splits=0, n_draws=500, progressbar=False,
              random_seed=11)
    table = pandalm_misclassification_table(data=pandalm)
    assert list(table.columns) == ["judge", "system", "item", "judge_label", "human_label"]
    generic = misclassification_study(table, **kw)
    wrapped = pandalm_misclassification_study(data=pandalm, **kw)
    for name in ("truth", "counts", "replications"):
        pd.testing.assert_frame_equal(getattr(generic, name), getattr(wrapped, name))
    # the generic truth over the table's rows is pandalm_win_rate_truth's truth
    # (GPT-3.5's 50 rows with an unparsable verdict dropped)
    old = pandalm_win_rate_truth(data=pandalm)
    np.testing.assert_array_equal(generic.truth[["judge", "system"]], old[["judge", "system"]])
    np.testing.assert_allclose(generic.truth[["truth", "q0", "q1", "expected_naive_bias"]],
                               old[["truth", "q0", "q1", "expected_naive_bias"]], atol=1e-12)
    np.testing.assert_array_equal(generic.truth["n_items"], old["n_items"])
    assert len(generic.items) == 999 and (generic.masks.sum(axis=1) == 100).all()


def test_progress_bar_reproducibility_and_executor_check(study, table, capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        again = misclassification_study(table, **{**FAST, "progressbar": True})
    err = capsys.readouterr().err
    assert "hierarchical fits" in err and f"{len(JUDGES) * N_HIER}/{len(JUDGES) * N_HIER}" in err
    pd.testing.assert_frame_equal(again.replications, study.replications)
    with pytest.raises(ValueError, match="executor must be None"):
        misclassification_study(table, executor="threads")


@pytest.mark.slow
def test_joblib_gives_the_same_replications_as_in_process(table):
    kw = dict(n_splits=4, hierarchical_splits=3, hierarchical_method="nuts", draws=100,
              tune=100, chains=2, n_draws=500, progressbar=False, random_seed=9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        here = misclassification_study(table, **kw)
        there = misclassification_study(table, executor="joblib", **kw)
    pd.testing.assert_frame_equal(here.replications, there.replications)
    pd.testing.assert_frame_equal(here.counts, there.counts)
    assert there.settings["executor"] == "joblib"
    cols = ["judge", "split", "max_rhat", "divergences", "error"]
    pd.testing.assert_frame_equal(here.diagnostics[cols], there.diagnostics[cols])


# ------------------------------------------------------------------- bad input


def test_input_errors_name_the_column_and_the_fix(table):
    cases = [
        (table.drop(columns="human_label"), r"missing column\(s\) \['human_label'\].*Rename"),
        (table.assign(judge_label=table["judge_label"].replace({0: 2})),
         r"table\.judge_label must be 0 or 1.*row \d+: 2.*Fix: map"),
        (table.assign(human_label=table["human_label"].astype(float).where(
            table.index != 4)), r"table\.human_label .*1 row\(s\).*row 4: nan.*Fix"),
        (pd.concat([table, table.iloc[[3]]]),
         r"2 rows sharing their \(judge, system, item\).*at rows \[3, 3\].*Fix: keep one row"),
        (table.assign(item=table["item"].where(table.index != 2)), r"table\.item .*rows \[2\]"),
        (table[~((table["judge"] == "j2") & (table["system"] == "007"))],
         r"table\.system: judge 'j2' has no rows for system\(s\) \['007'\].*Fix"),
    ]
    for bad, message in cases:
        with pytest.raises(DataValidationError, match=message):
            misclassification_study(bad, n_splits=2, progressbar=False)
    with pytest.raises(DataValidationError, match=r"column 'item' leaves 200 calibration and "
                                                  r"0 test items.*Fix"):
        misclassification_study(table, calibration_fraction=0.999, progressbar=False)
    with pytest.raises(DataValidationError, match="hierarchical_splits=0"):
        misclassification_study(table[table["system"] == "007"], n_splits=2,
                                progressbar=False)
    with pytest.raises(DataValidationError, match="hierarchical_method"):
        misclassification_study(table, hierarchical_method="vi")
    with pytest.raises(DataValidationError, match="hierarchical_splits"):
        misclassification_study(table, hierarchical_splits=-1)


# ------------------------------------------------------------------- coverage


@pytest.fixture(scope="module")
def population():
    """Known truth: five systems' theta, two judges' q0/q1 (shared across systems).

    2000 items x 2 systems x 2 judges; 10% calibration is ~80 rows per system.
    """
    systems = ("s1", "s2", "s3", "s4", "s5")
    theta = dict(zip(systems, (0.2, 0.35, 0.5, 0.65, 0.8)))
    judges = {"good": (0.9, 0.9), "weak": (0.7, 0.8)}
    return simulate_table(2000, systems, judges, theta, seed=42)


def coverage(out, common_splits=False) -> pd.DataFrame:
    s = out.summary(common_splits=common_splits)
    return s.set_index(["judge", "system", "method"])["coverage"].unstack("method")


def test_intervals_cover_the_finite_population_truth(population):
    """Lang-Reiczigel and the per-system posterior over 200 splits.

    They cover the finite-population truth at the nominal 95% or above (conservative:
    the test sets overlap); the naive Wald interval misses where the judge's bias is
    large, which is what gives the check its power.
    """
    out = misclassification_study(population, n_splits=200, hierarchical_splits=0,
                                  n_draws=2000, progressbar=False, random_seed=1)
    cov = coverage(out)
    for method in ("lang_reiczigel", "bayes"):
        assert cov[method].mean() >= 0.93, cov[method]
        assert cov[method].min() >= 0.9, cov[method]
    assert cov.loc["weak", "naive_wald"].min() < 0.2
    bias = out.summary().query("method == 'lang_reiczigel'")["bias"].abs()
    assert bias.max() < 0.02


@pytest.mark.slow
def test_hierarchical_nuts_covers_the_finite_population_truth(population):
    """Partial pooling by NUTS on 20 splits per judge: covers, and is shorter than LR on average."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        out = misclassification_study(population, n_splits=20, n_draws=2000, draws=300,
                                      tune=300, progressbar=False, random_seed=1)
    cov = coverage(out, common_splits=True)
    assert cov["hierarchical"].mean() >= 0.93, cov["hierarchical"]
    assert cov["hierarchical"].min() >= 0.85, cov["hierarchical"]
    length = out.summary().set_index(["judge", "system", "method"])["mean_length"]
    ratio = length.xs("hierarchical", level="method") / length.xs("lang_reiczigel",
                                                                     level="method")
    assert ratio.mean() < 0.9 and ratio.max() < 1.1, ratio
    assert (out.diagnostics["error"] == "").all()
    assert out.diagnostics["max_rhat"].max() < 1.1
