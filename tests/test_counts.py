"""The count column ``n``: a row with n = k is k identical rows, in every table family.

Each property test builds a random table with an ``n`` column and its expansion (rows
repeated n times, built here with pandas, independently of the package) and checks
that the validated sufficient statistics are equal exactly and that the MAP fits,
predictions, baselines, metrics and reported counts agree to 1e-6. Tables whose rows
carry a unique key (judgments and calibration: ``item`` per system; annotations:
``(item, annotator)``) expand to rows with distinct ids (``id#0``, ``id#1``, ...): a
counted row stands for k items (annotators) with the same labels. Also: columns a
family does not use are named in a warning; bad counts are refused.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bayesjudge import (
    DavidsonAggregator,
    DavidsonBT,
    MisclassificationModel,
    PreferenceDistribution,
    symmetrize,
)
from bayesjudge.baselines import avg_prob, ci_self_consistency, soft_self_consistency
from bayesjudge.baselines.ranking import temperature_calibrate
from bayesjudge.data import (
    DataValidationError,
    validate_annotations,
    validate_comparisons,
    validate_judge_outputs,
    validate_labels,
    validate_misclassification,
    validate_votes,
)
from bayesjudge.data.counts import UnusedColumnWarning, expand_counts
from bayesjudge.metrics import metric_table
from bayesjudge.metrics.ranking import cycle_rate
from bayesjudge.rewards import sft_targets

ARENA = Path(__file__).resolve().parents[2] / "shared" / "data" / "arena_ppr" / "battles.csv"
TOL = dict(rtol=0, atol=1e-6)


def _expand(df: pd.DataFrame, distinct: str | None = None) -> pd.DataFrame:
    """Rows repeated n times (n dropped); ``distinct``: a column made unique per copy."""
    rep = np.repeat(np.arange(len(df)), df["n"].to_numpy())
    out = df.iloc[rep].drop(columns="n").reset_index(drop=True)
    if distinct is not None:
        copy = pd.Series(rep).groupby(rep).cumcount().to_numpy()
        out[distinct] = [f"{v}#{k}" for v, k in zip(out[distinct], copy)]
    return out


def _map(model) -> dict:
    return {k: np.asarray(v, float) for k, v in model.map_.items()}


def _assert_same_map(a, b):
    ma, mb = _map(a), _map(b)
    assert ma.keys() == mb.keys()
    for k in ma:
        np.testing.assert_allclose(ma[k], mb[k], **TOL, err_msg=k)


# ----------------------------------------------------------------------- comparisons
def _comparisons(rng, kind="hard", rows=40):
    items = np.array(list("abcde"))
    left = rng.integers(0, 5, rows)
    right = (left + rng.integers(1, 5, rows)) % 5
    df = pd.DataFrame({"judge": rng.choice(["j1", "j2"], rows), "left": items[left],
                       "right": items[right]})
    if kind == "hard":
        df["outcome"] = rng.choice(["left", "tie", "right"], rows, p=[0.45, 0.2, 0.35])
    else:
        df["prob"] = rng.uniform(0.05, 0.95, rows).round(3)
    df["n"] = rng.integers(1, 5, rows)
    return df


@pytest.mark.parametrize("kind", ["hard", "soft"])
def test_comparison_cells_baselines_and_metrics_equal_the_expanded_rows(kind):
    df = _comparisons(np.random.default_rng(1 if kind == "hard" else 2), kind)
    long = _expand(df)
    a, b = validate_comparisons(df), validate_comparisons(long)
    for f in ("left", "right", "judge", "n", "prob_sum", "outcomes"):
        np.testing.assert_allclose(getattr(a, f), getattr(b, f), **TOL, err_msg=f)
    assert a.n_rows == b.n_rows == df["n"].sum() == len(long)
    assert list(a.items) == list(b.items) and list(a.judges) == list(b.judges)
    pd.testing.assert_frame_equal(avg_prob(df, per_judge=True), avg_prob(long, per_judge=True))
    for sym in (True, False):
        pd.testing.assert_frame_equal(cycle_rate(df, symmetrize=sym),
                                      cycle_rate(long, symmetrize=sym))
    # symmetrize keeps the counts: the expansion of its output is its output on the rows
    pd.testing.assert_frame_equal(_expand(symmetrize(df)), symmetrize(long))
    if kind == "soft":
        human = pd.DataFrame({"left": list("abcd"), "right": list("bcde"),
                              "prob": [1.0, 0.0, 1.0, 1.0], "n": [2, 1, 3, 1]})
        scaled, temps = temperature_calibrate(df, human)
        scaled_long, temps_long = temperature_calibrate(long, _expand(human))
        pd.testing.assert_series_equal(temps, temps_long)
        np.testing.assert_allclose(_expand(scaled)["prob"], scaled_long["prob"], **TOL)


def test_davidson_bt_on_counts_equals_the_expanded_rows_with_n_comparisons():
    df = _comparisons(np.random.default_rng(3))
    df.loc[3, "n"] = 0  # no observation: dropped (its items have other rows: no warning)
    long = _expand(df)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        counted = DavidsonBT(random_seed=0).fit(df)
    full = DavidsonBT(random_seed=0).fit(long)
    _assert_same_map(counted, full)
    np.testing.assert_allclose(counted.ranking()["skill"], full.ranking()["skill"], **TOL)
    jc, jf = counted.judges(), full.judges()
    assert jc["n_comparisons"].tolist() == jf["n_comparisons"].tolist()
    assert jc["n_comparisons"].sum() == df["n"].sum()


def test_arena_counts_table_equals_the_long_table():
    if not ARENA.exists():
        pytest.skip("shared arena_ppr data not available")
    raw = pd.read_csv(ARENA, dtype=str)
    long = raw.loc[raw["judge"] == "human", ["judge", "left", "right", "outcome"]]
    counts = long.groupby(["judge", "left", "right", "outcome"], sort=False).size()
    counts = counts.rename("n").reset_index()
    assert counts["n"].sum() == len(long) == 26_919 and len(counts) < 1_200
    a = DavidsonBT(random_seed=0).fit(counts).ranking().set_index("item")
    b = DavidsonBT(random_seed=0).fit(long.reset_index(drop=True)).ranking().set_index("item")
    np.testing.assert_allclose(a["skill"], b.loc[a.index, "skill"], **TOL)


# ------------------------------------------------------------------------ votes, labels
def _votes(rng, items=12):
    df = pd.DataFrame({"item": np.repeat([f"i{k}" for k in range(items)], 3),
                       "vote": np.tile([1, 0, -1], items)})
    df["confidence"] = rng.uniform(0.3, 1.0, len(df)).round(2)
    df["n"] = rng.integers(0, 4, len(df))
    df.loc[df.groupby("item").head(1).index, "n"] += 1  # every item keeps a vote
    return df


def test_votes_counts_models_and_baselines_equal_the_expanded_rows():
    rng = np.random.default_rng(4)
    votes = _votes(rng)
    long = _expand(votes)
    a, b = validate_votes(votes), validate_votes(long)
    assert list(a.items) == list(b.items) and np.array_equal(a.counts, b.counts)
    for reduce in ("min", "mean", "prod"):
        pd.testing.assert_series_equal(soft_self_consistency(votes, reduce=reduce),
                                       soft_self_consistency(long, reduce=reduce))
    pd.testing.assert_series_equal(ci_self_consistency(votes), ci_self_consistency(long))
    labels = pd.DataFrame({"item": [f"i{k}" for k in range(12)],
                           "label": rng.choice([-1, 0, 1], 12), "n": 1})
    labels.loc[11, "n"] = 0  # dropped: i11 stays in votes, unlabelled
    fit_labels = labels.iloc[:11].drop(columns="n")
    with pytest.warns(UserWarning, match=r"n = 0 .* item \['i11'\]"):
        counted = DavidsonAggregator(random_seed=0).fit(votes, labels)
    full = DavidsonAggregator(random_seed=0).fit(long, fit_labels)
    _assert_same_map(counted, full)
    np.testing.assert_allclose(counted.predict(votes).select_dtypes(float),
                               full.predict(long).select_dtypes(float), **TOL)


def test_vote_and_label_counts_are_refused_where_they_cannot_mean_rows():
    with pytest.raises(DataValidationError, match="n_pos.*and a count column n"):
        validate_votes(pd.DataFrame({"item": ["a"], "n_pos": [1], "n_tie": [0],
                                     "n_neg": [0], "n": [2]}))
    with pytest.raises(DataValidationError, match=r"labels.n is above 1.*\['b'\]"):
        validate_labels(pd.DataFrame({"item": ["a", "b"], "label": [1, 0], "n": [1, 2]}))


# ------------------------------------------------------------- judgments, calibration
def test_misclassification_counts_equal_the_expanded_items():
    rng = np.random.default_rng(5)
    systems = np.repeat(["s1", "s2"], 4)
    test = pd.DataFrame({"system": systems, "item": [f"t{k}" for k in range(8)],
                         "judge_label": np.tile([0, 1], 4), "n": rng.integers(1, 30, 8)})
    cal = pd.DataFrame({"system": np.repeat(["s1", "s2"], 4),
                        "item": [f"c{k}" for k in range(8)],
                        "judge_label": np.tile([0, 1, 0, 1], 2),
                        "human_label": np.tile([0, 0, 1, 1], 2), "n": rng.integers(1, 12, 8)})
    test.loc[0, "n"] = 0  # t0 is dropped: its id vanishes, with a warning
    with pytest.warns(UserWarning, match=r"n = 0.*item \['t0'\]"):
        a = validate_misclassification(test, cal, by_system=True)
    b = validate_misclassification(_expand(test, "item"), _expand(cal, "item"), by_system=True)
    pd.testing.assert_frame_equal(a.to_frame(), b.to_frame())
    one = test["system"] == "s1"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # t0 again
        counted = MisclassificationModel(random_seed=0).fit(test[one], cal[cal.system == "s1"])
    full = MisclassificationModel(random_seed=0).fit(
        _expand(test[one], "item"), _expand(cal[cal.system == "s1"], "item"))
    _assert_same_map(counted, full)
    np.testing.assert_allclose(counted.predict().select_dtypes(float),
                               full.predict().select_dtypes(float), **TOL)


# ------------------------------------------------------------ annotations, judge outputs
def test_annotation_counts_models_and_metrics_equal_the_expanded_annotators():
    rng = np.random.default_rng(6)
    items = [f"x{k}" for k in range(10)]
    ann = pd.DataFrame({"item": np.repeat(items, 3), "annotator": np.tile(["A", "T", "B"], 10),
                        "label": np.tile(["A", "tie", "B"], 10), "n": rng.integers(0, 4, 30)})
    ann.loc[ann.index % 3 == 2, "n"] += 1  # every item keeps a label
    long = _expand(ann, "annotator")
    a, b = validate_annotations(ann), validate_annotations(long)
    assert list(a.items) == list(b.items) and np.array_equal(a.counts, b.counts)
    pd.testing.assert_frame_equal(sft_targets(ann), sft_targets(long))
    outputs = pd.DataFrame({"item": items, "prob": rng.uniform(0.05, 0.95, 10).round(2)})
    pd.testing.assert_frame_equal(metric_table(outputs, ann, n_boot=20),
                                  metric_table(outputs, long, n_boot=20))
    counted = PreferenceDistribution(random_seed=0).fit(ann)
    full = PreferenceDistribution(random_seed=0).fit(long)
    _assert_same_map(counted, full)
    with pytest.raises(DataValidationError, match=r"judge outputs.n must be 1.*\[2\]"):
        validate_judge_outputs(outputs.assign(n=[1] * 9 + [2]))
    validate_judge_outputs(outputs.assign(n=1))  # one prediction per item: fine


# --------------------------------------------------------------- bad n, unused columns
@pytest.mark.parametrize("bad, shown", [(-1, "-1"), (1.5, "1.5"), (np.nan, "nan"),
                                        ("many", "'many'")])
def test_bad_counts_are_refused_naming_rows_and_values(bad, shown):
    df = pd.DataFrame({"judge": "j", "left": ["a", "b"], "right": ["b", "a"],
                       "outcome": ["left", "tie"], "n": [1, bad]}, index=[7, 8])
    with pytest.raises(DataValidationError, match=rf"comparisons.n .*\[{shown}\] at rows \[8\]"):
        validate_comparisons(df)


def test_all_zero_counts_are_refused_and_expand_counts_drops_zero_rows():
    df = pd.DataFrame({"item": ["a", "b"], "vote": [1, 0], "n": [0, 0]})
    with pytest.raises(DataValidationError, match="n is 0 on every row"):
        validate_votes(df)
    with pytest.warns(UserWarning, match=r"n = 0 .* item \['b'\]"):
        assert expand_counts(df.assign(n=[2, 0]), "votes")["item"].tolist() == ["a", "a"]


TABLES = {
    "votes": (validate_votes, {"item": ["a"], "vote": [1]}),
    "labels": (validate_labels, {"item": ["a"], "label": [1]}),
    "comparisons": (validate_comparisons, {"judge": ["j"], "left": ["a"], "right": ["b"],
                                           "outcome": ["left"]}),
    "annotations": (validate_annotations, {"item": ["a"], "annotator": ["u"], "label": ["A"]}),
    "judge outputs": (validate_judge_outputs, {"item": ["a"], "prob": [0.3]}),
    "judgments": (lambda df: validate_misclassification(
        df, pd.DataFrame({"item": ["c"], "judge_label": [1], "human_label": [1]})),
        {"item": ["a"], "judge_label": [1]}),
    "calibration": (lambda df: validate_misclassification(
        pd.DataFrame({"item": ["t"], "judge_label": [1]}), df),
        {"item": ["a"], "judge_label": [1], "human_label": [0]}),
}


@pytest.mark.parametrize("family", list(TABLES))
def test_unused_columns_are_named_in_a_warning(family):
    validate, columns = TABLES[family]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        validate(pd.DataFrame({**columns, "n": [1]}))  # the known columns: quiet
    table = pd.DataFrame({**columns, "weight": [3], "judeg": ["x"]})
    with pytest.warns(UnusedColumnWarning, match=rf"{family} has column\(s\) \['weight', "
                      r"'judeg'\] that are not used") as record:
        validate(table)
    text = str(record[0].message)
    assert "rename it to `n`" in text and "df.drop(columns=['weight', 'judeg'])" in text
    assert record[0].filename == __file__  # points at the caller, not the package


# ------------------------------------------------------------------------------- CLI
def test_cli_rank_and_report_read_the_count_column(tmp_path):
    from bayesjudge.cli import main

    def rank(df, name):
        df.to_csv(tmp_path / f"{name}.csv", index=False)
        assert main(["rank", str(tmp_path / f"{name}.csv"), "--model", "davidson-bt",
                     "--out", str(tmp_path / f"{name}-rank.csv"),
                     "--judges", str(tmp_path / f"{name}-judges.csv")]) == 0
        return (pd.read_csv(tmp_path / f"{name}-rank.csv"),
                pd.read_csv(tmp_path / f"{name}-judges.csv"))

    df = _comparisons(np.random.default_rng(3))
    (rc, jc), (rf, jf) = rank(df, "counts"), rank(_expand(df), "long")
    np.testing.assert_allclose(rc["skill"], rf["skill"], **TOL)
    assert jc["n_comparisons"].tolist() == jf["n_comparisons"].tolist()

    test = pd.DataFrame({"item": ["a", "b"], "judge_label": [1, 0], "n": [70, 30]})
    cal = pd.DataFrame({"item": ["p", "q", "r", "s"], "judge_label": [1, 0, 0, 1],
                        "human_label": [1, 1, 0, 0], "n": [40, 5, 30, 8]})
    tables = {}
    for name, (j, c) in {"counts": (test, cal),
                         "long": (_expand(test, "item"), _expand(cal, "item"))}.items():
        j.to_csv(tmp_path / f"{name}-j.csv", index=False)
        c.to_csv(tmp_path / f"{name}-c.csv", index=False)
        assert main(["report", str(tmp_path / f"{name}-j.csv"), "--calibration",
                     str(tmp_path / f"{name}-c.csv"), "--out",
                     str(tmp_path / f"{name}-report.csv")]) == 0
        tables[name] = pd.read_csv(tmp_path / f"{name}-report.csv")
    pd.testing.assert_frame_equal(tables["counts"], tables["long"])
    assert tables["counts"][["n", "m0", "m1"]].iloc[0].tolist() == [100, 38, 45]


def test_columns_a_loader_adds_for_the_reader_are_quiet():
    from bayesjudge.data.counts import mark_info_columns
    from bayesjudge.datasets import pandalm_judge_outputs, pandalm_jury

    votes = mark_info_columns(pd.DataFrame({"item": ["a", "b"], "vote": [1, 0],
                                            "segment": [1, 2]}), ["segment"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        validate_votes(votes[votes["vote"] >= 0].rename(columns={"item": "item"}))
        validate_comparisons(pandalm_jury(unparsable="drop"))  # its `item` column
        out = pandalm_judge_outputs(unparsable="drop")  # its `verdict` column
        validate_judge_outputs(out[out["judge"] == out["judge"].iloc[0]])
    with pytest.warns(UnusedColumnWarning, match="segment"):  # a user's own column warns
        validate_votes(pd.DataFrame(votes))
