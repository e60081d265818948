"""Python inputs that gave a wrong answer, an obscure failure or no word (a session's audit,
2026-12-02): each case as a user met it, with what the package does now."""

import copy
import datetime
import decimal
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest

import bayesjudge as bj
from bayesjudge.baselines import arena_hard_score, linear_reward_score
from bayesjudge.data import DataValidationError, validate_judgment_counts
from bayesjudge.engine.messages import FitError
from bayesjudge.models.misclassification import IdentifiabilityWarning


@pytest.mark.parametrize("score", [arena_hard_score, linear_reward_score])
def test_graded_baselines_count_each_row_n_times(score):
    # before: n was ignored and the ranking came out reversed (a: 0.75 against 0.375)
    counted = pd.DataFrame({"left": ["a", "a", "b"], "right": ["b", "b", "c"],
                            "outcome": ["A>>B", "B>A", "A=B"], "n": [1, 5, 2]})
    long = counted.loc[counted.index.repeat(counted["n"])].drop(columns="n")
    pd.testing.assert_frame_equal(score(counted), score(long))
    if score is arena_hard_score:  # by hand: a wins 3 of its 3 + 5 battles
        a = score(counted).set_index("item").loc["a"]
        assert (a["n_comparisons"], a["n_battles"], a["score"]) == (6, 8, 3 / 8)


def test_predict_reads_one_string_as_one_item():
    ann = pd.DataFrame({"item": ["0", "7", "07"] * 2, "annotator": ["a"] * 3 + ["b"] * 3,
                        "label": ["A", "B", "A", "A", "B", "B"]})
    model = bj.PreferenceDistribution().fit(ann)
    # before: the rows of items "0" and "7" (the characters of "07")
    assert model.predict(items="07")["item"].tolist() == ["07"]
    with pytest.raises(DataValidationError, match=r"items \[7\] were not in the fitted"):
        model.predict(items=7)  # before: TypeError: 'int' object is not iterable


@pytest.mark.parametrize("index", ["judge", "context"])
def test_a_role_column_held_in_the_index_is_refused(index):
    # before: BTSigma pooled every judge into '(one judge)' (or every context into one)
    df = pd.DataFrame({"judge": ["j1", "j2"] * 10, "context": ["x"] * 10 + ["y"] * 10,
                       "left": ["a", "b", "c", "a"] * 5, "right": ["b", "c", "a", "c"] * 5,
                       "prob": [0.9, 0.6, 0.2, 0.55] * 5})
    with pytest.raises(DataValidationError, match=rf"holds \['{index}'\] in its index.*"
                                                  r"df\.reset_index\(\)"):
        bj.BTSigma().fit(df.set_index(index))


def test_flat_davidson_refuses_a_table_of_ties_only():
    # before: tie_logit 23.6 with an interval of +-6e4, laplace_ok False only when reported
    ties = pd.DataFrame({"left": ["a", "b", "c"] * 3, "right": ["b", "c", "a"] * 3,
                         "outcome": ["tie"] * 9})
    with pytest.raises(DataValidationError, match=r"every comparison is a tie.*MLE is \+inf"):
        bj.DavidsonBT(priors="flat").fit(ties)
    bj.DavidsonBT().fit(ties)  # the default priors make it proper


@pytest.mark.parametrize("ids", [
    [datetime.date(2024, 1, 1)] * 8 + [datetime.date(2024, 1, 2)] * 8,
    pd.to_datetime(["2024-01-01"] * 8 + ["2024-01-02"] * 8),
    [decimal.Decimal("1")] * 8 + [decimal.Decimal("2")] * 8,
    [("m", "a")] * 8 + [("m", "b")] * 8,
])
def test_ids_that_cannot_be_saved_are_refused_at_fit(ids):
    # before: the fit passed; save raised "cannot serialise date", ranking() failed on tuples
    df = pd.DataFrame({"left": ["a", "b", "c", "a"] * 4, "right": ["b", "c", "a", "c"] * 4,
                       "outcome": ["left", "left", "right", "tie"] * 4, "context": ids})
    with pytest.raises(DataValidationError, match=r"comparisons\.context holds ids of type "
                                                  r".*astype\(str\)"):
        bj.DavidsonBT().fit(df)
    bj.DavidsonBT().fit(df.assign(context=df["context"].astype(str)))


def test_a_fitted_model_pickles_as_its_model_file(tmp_path):
    # before: "'functools.partial' object has no attribute '__name__'"
    df = pd.DataFrame({"left": ["a", "b", "c", "a"] * 4, "right": ["b", "c", "a", "c"] * 4,
                       "outcome": ["left", "left", "right", "tie"] * 4,
                       "context": ["007"] * 8 + ["7"] * 8})
    model = bj.DavidsonBT().fit(df)
    back = pickle.loads(pickle.dumps(model))
    pd.testing.assert_frame_equal(back.ranking(), model.ranking())
    assert back.ranking()["context"].unique().tolist() == ["007", "7"]
    assert pickle.loads(pickle.dumps(bj.DavidsonBT(tie="per_judge"))).get_params() == \
        bj.DavidsonBT(tie="per_judge").get_params()
    shallow = copy.copy(model)  # bj.compare's refits: still a shallow copy
    assert shallow._engine is model._engine and shallow is not model


def test_judges_counts_comparisons_in_whole_numbers():
    df = pd.DataFrame({"judge": ["j1", "j2"] * 10, "left": ["a", "b", "c", "a"] * 5,
                       "right": ["b", "c", "a", "c"] * 5, "prob": [0.9, 0.6, 0.2, 0.55] * 5})
    counts = bj.BTSigma().fit(df).judges()["n_comparisons"]
    assert counts.dtype == np.int64 and counts.tolist() == [10, 10]


@pytest.mark.parametrize("pooling, tp, who", [
    ("none", [100, 40], r"a: sensitivity: 100 of 100"),
    ("complete", [100, 50], r"all systems pooled, sensitivity: 150 of 150"),
    ("partial", [100, 50], r"all systems pooled, sensitivity: 150 of 150")])
def test_hierarchical_flat_prior_on_a_perfect_calibration_class_says_why_no_interval(
        pooling, tp, who):
    # before: a ConvergenceWarning at fit, then summarize()'s FitError advised NUTS, which
    # cannot sample an improper posterior (Haldane's Beta(0, 0) on a perfect class).
    counts = validate_judgment_counts([480, 300], [1000, 600], tp, [100, 50], [70, 30],
                                      [100, 40], systems=["a", "b"])
    with pytest.warns(IdentifiabilityWarning, match=who + r" .*improper"):
        model = bj.HierarchicalMisclassificationModel(pooling=pooling, priors="flat").fit(counts)
    if pooling == "none":  # the MAP is each system's MLE, eq. (5)
        np.testing.assert_allclose(model.map_["accuracy"], [(0.48 + 0.7 - 1) / 0.7,
                                                            (0.5 + 0.75 - 1) / 0.55], atol=1e-6)
    with pytest.raises(FitError, match=who + r".*improper.*default priors") as err:
        model.summarize()
    assert "nuts" not in str(err.value)
    with warnings.catch_warnings():  # one system's imperfect class alone is proper
        warnings.simplefilter("error")
        if pooling != "none":
            bj.HierarchicalMisclassificationModel(pooling=pooling, priors="flat").fit(
                validate_judgment_counts([480, 300], [1000, 600], [100, 40], [100, 50],
                                         [70, 30], [100, 40], systems=["a", "b"]))


def test_flat_prior_on_a_perfect_calibration_class_flags_its_zero_width_interval(tmp_path):
    # before: no word at fit, and summarize() gave sensitivity [1, 1] with laplace_ok=True.
    # Haldane's Beta(0, 0) with tp = m1 leaves the posterior q1^(m1-1) / (1 - q1): improper.
    with pytest.warns(IdentifiabilityWarning, match=r"sensitivity: 100 of 100 .*improper"):
        model = bj.MisclassificationModel(priors="flat").fit_counts(480, 1000, 100, 100, 70, 100)
    theta_hat = (0.48 + 0.7 - 1) / (0.7 + 1.0 - 1)  # eq. (5): the MAP is still the MLE
    assert float(model.map_["accuracy"]) == pytest.approx(theta_hat, abs=1e-6)
    # (the advice is a proper prior: NUTS cannot sample an improper posterior)
    with pytest.warns(UserWarning, match=r"laplace_ok=False\): \['sensitivity'\]\. "
                                         r"sensitivity rest\(s\) on 0 or 1 .*default priors"):
        table = model.summarize()
    assert table["laplace_ok"].to_dict() == {"accuracy": True, "specificity": True,
                                             "sensitivity": False}
    model.save(tmp_path / "fit.nc")
    with pytest.warns(UserWarning, match=r"\['sensitivity'\]"):
        assert not bj.load(tmp_path / "fit.nc").summarize().loc["sensitivity", "laplace_ok"]
    with warnings.catch_warnings():  # a proper prior: an interval exists, nothing to say
        warnings.simplefilter("error")
        proper = bj.MisclassificationModel().fit_counts(480, 1000, 100, 100, 70, 100)
        assert proper.summarize()["laplace_ok"].all()
