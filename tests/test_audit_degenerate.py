"""Degenerate results that came back without a word (a session's audit, 2026-11-28)."""

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, stats

import bayesjudge as bj
from bayesjudge.data import DataValidationError, MisclassificationCounts
from bayesjudge.data.identification import unidentified_biases
from bayesjudge.models.misclassification import IdentifiabilityWarning
from bayesjudge.models.misclassification.checks import (
    CalibrationConflictWarning,
    conflict_statistic,
)


def _chain(k=1):
    rows = ([("a", "b", "left")] * 5 + [("a", "b", "right")] * 2 + [("b", "c", "left")] * 4
            + [("b", "c", "tie")] * 2 + [("c", "d", "left")] * 3 + [("c", "d", "right")] * 3)
    return pd.DataFrame(rows * k, columns=["left", "right", "outcome"])


@pytest.mark.parametrize("design, expected", [
    ((["a", "b", "c"], ["b", "c", "d"], [0, 0, 0]), [0]),        # chain, one order
    ((["a", "b", "c"], ["b", "c", "a"], [0, 0, 0]), []),         # a cycle identifies it
    ((["a", "b", "b"], ["b", "a", "c"], [0, 0, 0]), []),         # one pair in both orders
    ((["z", "z", "z"], ["a", "b", "c"], [0, 0, 0]), [0]),        # baseline always left
    ((["a", "b", "a", "b", "c"], ["b", "c", "b", "c", "a"], [0, 0, 1, 1, 1]), []),
    ((["a", "b"], ["b", "a"], [0, 1]), [0, 1]),                  # each judge one order
])
def test_position_bias_identification_by_hand(design, expected):
    left, right, judge = design
    items = sorted(set(left) | set(right))
    code = {v: i for i, v in enumerate(items)}
    got = unidentified_biases(np.array([code[v] for v in left]),
                              np.array([code[v] for v in right]), np.array(judge),
                              len(items), max(judge) + 1)
    assert got.tolist() == expected
    # independent: b_k is confounded iff the bias column lies in the span of the others
    a = np.zeros((len(left), len(items) + max(judge) + 1))
    for r, (lft, rgt, j) in enumerate(zip(left, right, judge)):
        a[r, code[lft]], a[r, code[rgt]], a[r, len(items) + j] = 1, -1, 1
    rank = np.linalg.matrix_rank(a)
    spanned = [j for j in range(max(judge) + 1)
               if np.linalg.matrix_rank(np.delete(a, len(items) + j, axis=1)) == rank]
    assert spanned == expected


def _graded(frame):
    return frame.assign(outcome=frame["outcome"].map({"left": "A>B", "tie": "A=B",
                                                       "right": "B>A"}))


@pytest.mark.parametrize("make, prep", [
    (lambda **k: bj.DavidsonBT(position_bias=True, **k), lambda f: f),
    # before: OrdinalBT had no design check at all (prior-driven bias, no word)
    (lambda **k: bj.OrdinalBT(levels=["B>A", "A=B", "A>B"], position_bias=True, **k),
     _graded)])
def test_unidentified_position_bias_warns_or_is_refused(make, prep, tmp_path):
    # before: judges() returned the Normal(0, 1) prior's interval with laplace_ok=True, and
    # under flat priors intervals of +-7e5 with laplace_ok=True
    with pytest.warns(UserWarning, match=r"position bias of judge\(s\).*not identified") as rec:
        fit = make().fit(prep(_chain()), method="map")
    # the warning points at the caller's line, not at the library or the interpreter
    assert {w.filename for w in rec if "not identified" in str(w.message)} == {__file__}
    # and the judges table says it where the bias is read (before: stderr only)
    assert fit.judges()["position_bias_identified"].tolist() == [False]
    fit.save(tmp_path / "m")
    assert (type(fit).load(tmp_path / "m").judges()["position_bias_identified"].tolist()
            == [False])
    with pytest.raises(DataValidationError, match="not identified.*flat prior"):
        make(priors="flat").fit(prep(_chain()), method="map")
    both = pd.concat([_chain(), _chain().rename(columns={"left": "right", "right": "left"})])
    # a second judge that sees one order only, beside one that identifies the skills
    one_order = _chain().assign(judge="one order")
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        fit = make().fit(prep(both.assign(judge="both")), method="map")  # no warning
    assert fit.judges()["position_bias_identified"].tolist() == [True]
    mixed = prep(pd.concat([both.assign(judge="both"), one_order]))
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        fit = make().fit(mixed, method="map")  # the skills are known from "both"
    assert fit.judges()["position_bias_identified"].tolist() == [True, True]


def _battles(rows):
    return pd.DataFrame([(f"b{k}", judge, left, right, out) for k, (judge, left, right, out)
                         in enumerate(rows)],
                        columns=["battle", "judge", "left", "right", "outcome"])


def test_unidentified_reference_position_bias_in_anchored_bt():
    # before: AnchoredBT(position_bias=True) had no design check (the BT family had)
    chain = [("human", lft, rgt, out) for lft, rgt, out in _chain().itertuples(index=False)]
    with pytest.warns(UserWarning, match="position bias of the reference 'human'.*not "
                                         "identified") as rec:
        bj.AnchoredBT(position_bias=True).fit(_battles(chain), method="map")
    assert {w.filename for w in rec if "not identified" in str(w.message)} == {__file__}
    with pytest.raises(DataValidationError, match="reference 'human'.*flat prior"):
        bj.AnchoredBT(position_bias=True, priors="flat").fit(_battles(chain), method="map")
    # another judge's verdicts on the swapped battles identify it through its channel
    swapped = [("llm", rgt, lft, out) for _, lft, rgt, out in chain]
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        bj.AnchoredBT(position_bias=True).fit(_battles(chain + swapped), method="map")


@pytest.mark.parametrize("make", [lambda: bj.BTSigma(kind="hard"),
                                  lambda: bj.DavidsonBT(discriminators=True),
                                  lambda: bj.OrdinalBT(discriminators=True,
                                                       levels=["right", "tie", "left"])])
def test_one_judges_fixed_discriminator_is_not_reported_as_an_estimate(make):
    # before: summarize() and judges() showed sigma = 1 with the interval [1, 1] (under
    # NUTS with R-hat NaN): a constant of the model (the skills carry the scale)
    one = _chain(3).assign(judge="g")
    if isinstance(make(), bj.BTSigma):
        one = one[one["outcome"] != "tie"]
    fit = make().fit(one, method="map")
    assert not fit.summarize().index.str.startswith("discriminator").any()
    assert "discriminator" not in fit.judges() and "reliability" not in fit.judges()
    two = pd.concat([one, one.assign(judge="h")])
    fit = make().fit(two, method="map")
    assert fit.summarize().index.str.startswith("discriminator").sum() == 2
    assert fit.judges()["reliability"].notna().all()


def _counts(x, n, tp, m1, tn, m0):
    return MisclassificationCounts(pd.Index(["s"]), *(np.array([v]) for v in
                                                       (x, n, tp, m1, tn, m0)))


@pytest.mark.parametrize("c", [(1000, 1000, 90, 100, 85, 100), (5, 200, 45, 50, 40, 50),
                               (700, 1000, 52, 100, 50, 100), (480, 1000, 90, 100, 85, 100),
                               # a judge worse than chance: judged rates run from q1 to 1 - q0
                               (100, 500, 5, 20, 6, 20), (20, 500, 5, 20, 6, 20),
                               (480, 500, 5, 20, 6, 20)])
def test_conflict_statistic_equals_a_numerical_likelihood_ratio(c):
    x, n, tp, m1, tn, m0 = c

    def nll(v):  # theta in [0, 1], q0, q1 free: eq. (2)'s judged rate
        th, q0, q1 = v
        p = th * q1 + (1 - th) * (1 - q0)
        return -(stats.binom.logpmf(x, n, p) + stats.binom.logpmf(tp, m1, q1)
                 + stats.binom.logpmf(tn, m0, q0))

    eps = 1e-9
    best = min((optimize.minimize(nll, s, bounds=[(0, 1), (eps, 1 - eps), (eps, 1 - eps)],
                                  method="L-BFGS-B") for s in
                ([0.5, tn / m0, tp / m1], [0.99, 0.5, 0.99], [0.01, 0.99, 0.5])),
               key=lambda r: r.fun)
    free = -(stats.binom.logpmf(x, n, x / n) + stats.binom.logpmf(tp, m1, tp / m1)
             + stats.binom.logpmf(tn, m0, tn / m0))
    assert conflict_statistic(_counts(*c))[0] == pytest.approx(2 * (best.fun - free), abs=1e-3)


def test_misclassification_models_warn_about_a_conflict_and_weak_identification():
    # before: accuracy 0.999 [0.996, 1.000] with sensitivity moved from 90/100 to 0.99, no word
    with pytest.warns(CalibrationConflictWarning, match=r"1000/1000 = 1\.000"):
        bj.MisclassificationModel().fit_counts(1000, 1000, 90, 100, 85, 100)
    # before: q0_hat + q1_hat = 1.02 passed the "<= 1" check; the MAP interval [0.77, 0.997]
    # described one mode (NUTS: [0.005, 0.997])
    with pytest.warns(IdentifiabilityWarning, match="within two standard errors"):
        bj.MisclassificationModel().fit_counts(510, 1000, 52, 100, 50, 100)
    with warnings.catch_warnings():  # a good judge on consistent data: neither warning
        warnings.simplefilter("error", UserWarning)
        bj.MisclassificationModel().fit_counts(600, 1000, 88, 100, 85, 100)
    # the rule's boundary, two standard errors (a_k = (count + 1/2) / (m + 1)): by hand,
    # q0 + q1 = 1.10 with se 0.070 is within 2 se of 1 (warned), 1.15 with se 0.070 not
    for tp, tn, warned in ((55, 55, True), (58, 57, False)):
        a1, a0 = (tp + 0.5) / 101, (tn + 0.5) / 101
        se = np.sqrt(a0 * (1 - a0) / 100 + a1 * (1 - a1) / 100)
        assert bool((tp + tn) / 100 - 2 * se <= 1) is warned
        assert (tp + tn) / 100 - 1 * se > 1  # a one-se rule would warn about neither
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            bj.MisclassificationModel().fit_counts(600, 1000, tp, 100, tn, 100)
        assert any(issubclass(w.category, IdentifiabilityWarning) for w in rec) is warned


def test_prior_only_concentration_and_margin_scale_warn():
    # before: concentration = its prior's mode 5.0 [1.2, 47] at 80 or 2,000 items, no word
    ann = pd.DataFrame({"item": [f"i{k}" for k in range(40)], "annotator": "u",
                        "label": ["A", "B"] * 20})
    with pytest.warns(UserWarning, match="every item has one annotation"):
        bj.PreferenceDistribution().fit(ann)
    # before: margin_scale = its N(0, 5) prior, and unanimous +1 items got decision 0
    ex = bj.DavidsonAggregator.example_data()
    votes, labels = ex.fit_args
    votes = votes.assign(vote=np.where(votes["item"].isin(labels["item"]), 0, votes["vote"]))
    with pytest.warns(UserWarning, match="vote margin of 0"):
        bj.DavidsonAggregator().fit(votes, labels)


def test_hierarchical_ranking_names_a_map_outside_its_interval():
    # before: a system with one test item was ranked 1 by its MAP accuracy 1.000, outside
    # its own interval [0.07, 0.96], without a word
    judgments, calibration = bj.HierarchicalMisclassificationModel.example_data().fit_args
    one = pd.concat([judgments[judgments.system != "system-c"],
                     judgments[judgments.system == "system-c"].head(1)])
    fit = bj.HierarchicalMisclassificationModel().fit(one, calibration)
    with pytest.warns(UserWarning, match=r"MAP accuracy or rank outside its own interval.*"
                                         r"system-c"):
        table = fit.ranking()
    row = table.set_index("system").loc["system-c"]
    assert not row.accuracy_lower <= row.accuracy <= row.accuracy_upper


def test_no_false_alarms_on_data_from_the_models():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from test_coverage import _hierarchical

    from bayesjudge.data import validate_misclassification

    # 200 data sets of 4 systems drawn from the hierarchical model (partial pooling):
    # each system against its own calibration, p < 0.001 -> ~0.8 expected alarms at most
    alarms = sum(int((conflict_statistic(validate_misclassification(
        *_hierarchical(rep)[0], by_system=True)) > 10.83).sum()) for rep in range(200))
    assert alarms <= 3
    # a narrow interval (1%) of a skewed Beta may exclude its mean: no degenerate-interval
    # warning for that, only for zero width
    ex = bj.PreferenceDistribution.example_data()
    fit = bj.PreferenceDistribution().fit(*ex.fit_args)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        fit.predict(*ex.predict_args, ci_prob=0.01)
