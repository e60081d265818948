"""OrdinalBT (graded verdicts) against independent references.

* the MAP under flat priors equals a hand-written ordered-logit maximum likelihood
  (differences of logistic CDFs on the raw rows, scipy.optimize) with per-judge cut
  points and position bias, and with free cut points and discriminators;
* three levels with symmetric cut points, one pair: the closed-form MLE
  (x = (logit p_L - logit p_R) / 2, c = -(logit p_L + logit p_R) / 2) and the closed-form
  level probabilities sigma(x - c), sigma(x + c) - sigma(x - c), sigma(-x - c);
* the ranking agrees with DavidsonBT on the same data collapsed to three levels;
* labels, levels and repeated rows as the family reads them.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, stats
from scipy.special import expit, logit

import bayesjudge as bj
from bayesjudge.data import DataValidationError
from bayesjudge.data.graded import DEFAULT_LEVELS, collapse_levels
from bayesjudge.models.bradley_terry.ordinal_core import ordinal_log_probs

LEVELS = list(DEFAULT_LEVELS)


def simulate(skills, cut, n_rep, rng, judges=("j1",), bias=None, sigma=None, levels=LEVELS):
    """Every ordered pair x judge, n_rep rows each, levels drawn from the ordered-logit model.

    ``cut``: cut points (K-1,) or per judge (J, K-1). Independent of the library: the
    level is the number of cut points below x + logistic noise.
    """
    items = [f"m{i}" for i in range(len(skills))]
    rows = [(i, j, k) for i in range(len(skills)) for j in range(len(skills)) if i != j
            for k in range(len(judges)) for _ in range(n_rep)]
    i, j, k = (np.array(v) for v in zip(*rows))
    x = (skills[i] - skills[j]) / (1.0 if sigma is None else np.asarray(sigma)[k])
    x = x + (0.0 if bias is None else np.asarray(bias)[k])
    cut = np.asarray(cut, float)
    theta = cut[k] if cut.ndim == 2 else cut[None, :]
    latent = x + rng.logistic(size=len(x))
    code = (latent[:, None] > theta).sum(axis=1)
    return pd.DataFrame({"judge": np.asarray(judges)[k], "left": np.asarray(items)[i],
                         "right": np.asarray(items)[j],
                         "outcome": np.asarray(levels, dtype=object)[code]})


def reference_nll(x, table, n_items, judges, per_judge, bias, disc, free, k=5):
    """Negative log-likelihood: P(level m) = F(x - theta_m) - F(x - theta_{m+1}), F logistic."""
    items = {f"m{i}": i for i in range(n_items)}
    li = table["left"].map(items).to_numpy()
    ri = table["right"].map(items).to_numpy()
    ji = table["judge"].map({j: n for n, j in enumerate(judges)}).to_numpy()
    y = table["outcome"].map({lev: n for n, lev in enumerate(LEVELS)}).to_numpy()
    n_j = len(judges)
    pos = 0

    def take(m):
        nonlocal pos
        out = x[pos:pos + m]
        pos += m
        return out

    s = take(n_items - 1)
    s = np.append(s, -s.sum())
    n_sets = n_j if per_judge else 1
    if free:  # theta_1 and log gaps, per set
        raw = take(n_sets * (k - 1)).reshape(n_sets, k - 1)
        theta = raw[:, :1] + np.concatenate(
            [np.zeros((n_sets, 1)), np.cumsum(np.exp(raw[:, 1:]), axis=1)], axis=1)
    else:  # log gaps of the positive half, mirrored
        c = np.cumsum(np.exp(take(n_sets * 2).reshape(n_sets, 2)), axis=1)
        theta = np.concatenate([-c[:, ::-1], c], axis=1)
    b = take(n_j) if bias else np.zeros(n_j)
    if disc:
        z = take(n_j - 1)
        log_sigma = np.append(z, -z.sum())
    else:
        log_sigma = np.zeros(n_j)
    xm = (s[li] - s[ri]) / np.exp(log_sigma[ji]) + b[ji]
    th = theta[ji if per_judge else np.zeros_like(ji)]
    th = np.concatenate([np.full((len(y), 1), -np.inf), th, np.full((len(y), 1), np.inf)], 1)
    rows = np.arange(len(y))
    p = expit(xm - th[rows, y]) - expit(xm - th[rows, y + 1])  # the logistic CDF
    return -np.log(p).sum(), s, theta, b, np.exp(log_sigma)


def reference_mle(table, n_items, judges, **config):
    n_sets = len(judges) if config["per_judge"] else 1
    n = (n_items - 1 + n_sets * (4 if config["free"] else 2)
         + (len(judges) if config["bias"] else 0) + (len(judges) - 1 if config["disc"] else 0))
    x0 = np.zeros(n)
    fun = lambda v: reference_nll(v, table, n_items, judges, **config)[0]  # noqa: E731
    res = optimize.minimize(fun, x0, method="BFGS", options={"gtol": 1e-9, "maxiter": 5000})
    res = optimize.minimize(fun, res.x, method="BFGS", options={"gtol": 1e-10})  # polish
    return reference_nll(res.x, table, n_items, judges, **config)[1:]


@pytest.fixture(scope="module")
def parity_table():
    rng = np.random.default_rng(11)
    return simulate(np.array([0.9, 0.3, -0.2, -1.0]), [[-2.5, -0.5, 0.5, 2.5],
                                                     [-1.5, -0.3, 0.3, 1.5]],
                    n_rep=12, rng=rng, judges=("j1", "j2"), bias=[0.3, -0.2])


def test_log_probs_equal_logistic_cdf_differences():
    rng = np.random.default_rng(0)
    theta = np.sort(rng.normal(0, 2, size=(50, 4)), axis=1)
    x = rng.normal(0, 4, size=50)
    th = np.concatenate([np.full((50, 1), -np.inf), theta, np.full((50, 1), np.inf)], 1)
    ref = stats.logistic.cdf(x[:, None] - th[:, :-1]) - stats.logistic.cdf(x[:, None] - th[:, 1:])
    np.testing.assert_allclose(np.exp(ordinal_log_probs(x, theta)), ref, rtol=1e-10, atol=1e-14)
    # far tails: the product form keeps the log accurate where the difference underflows
    lp = ordinal_log_probs(np.array([60.0]), np.array([[-1.0, 0.0, 1.0, 2.0]]))
    assert np.isfinite(lp).all() and lp[0, 0] == pytest.approx(-61.0, abs=1e-12)


def test_flat_map_equals_scipy_mle_per_judge_cutpoints_and_bias(parity_table):
    model = bj.OrdinalBT(per_judge_cutpoints=True, position_bias=True, priors="flat")
    model.fit(parity_table)
    s, theta, b, _ = reference_mle(parity_table, 4, ["j1", "j2"], per_judge=True, bias=True,
                                   disc=False, free=False)
    print("parity (per-judge cut points, bias): max abs error",
          max(np.abs(model.map_["skill"] - s).max(), np.abs(model.map_["cutpoint"] - theta).max(),
              np.abs(model.map_["position_bias"] - b).max()))
    np.testing.assert_allclose(model.map_["skill"], s, atol=1e-5)
    np.testing.assert_allclose(model.map_["cutpoint"], theta, atol=1e-5)
    np.testing.assert_allclose(model.map_["position_bias"], b, atol=1e-5)


def test_predict_and_pointwise_log_likelihood_by_hand_with_per_judge_cut_points(parity_table):
    # per-judge cut points and biases in the numpy reports: predict with a judge column
    # uses that judge's cut points and bias, without it the consensus (the judges' mean
    # cut points, no bias); the pointwise log-likelihood is every row's log P(its level)
    model = bj.OrdinalBT(per_judge_cutpoints=True, position_bias=True, priors="flat")
    model.fit(parity_table)
    skill = dict(zip([f"m{i}" for i in range(4)], model.map_["skill"]))
    theta, bias = model.map_["cutpoint"], model.map_["position_bias"]

    def by_hand(left, right, judge):
        k = None if judge is None else ["j1", "j2"].index(judge)
        x = skill[left] - skill[right] + (0.0 if k is None else bias[k])
        cdf = np.concatenate([[1.0], expit(x - (theta.mean(0) if k is None else theta[k])),
                              [0.0]])
        return cdf[:-1] - cdf[1:]  # F(x - theta_m) - F(x - theta_m+1), F logistic

    pairs = pd.DataFrame({"left": ["m0", "m2", "m3", "m1"], "right": ["m1", "m0", "m2", "m3"],
                          "judge": ["j1", "j2", "j2", "j1"]})
    cols = [f"p_{lev}" for lev in LEVELS]
    np.testing.assert_allclose(model.predict(pairs)[cols],
                               [by_hand(*row) for row in pairs.itertuples(index=False)],
                               atol=1e-12)
    np.testing.assert_allclose(model.predict(pairs.drop(columns="judge"))[cols],
                               [by_hand(lft, rgt, None) for lft, rgt, _ in
                                pairs.itertuples(index=False)], atol=1e-12)
    point = {k: np.asarray(v)[None, None] for k, v in model.map_.items()}
    ll = model._pointwise_loglik(point, model._fit_data)["comparison"]
    code = parity_table["outcome"].map({lev: n for n, lev in enumerate(LEVELS)})
    raw = sum(np.log(by_hand(lft, rgt, j)[c]) for (j, lft, rgt), c in
              zip(parity_table[["judge", "left", "right"]].itertuples(index=False), code))
    np.testing.assert_allclose(ll.sum(), raw, rtol=1e-10)


def test_flat_map_equals_scipy_mle_free_cutpoints_and_discriminators(parity_table):
    model = bj.OrdinalBT(cutpoints="free", discriminators=True, priors="flat")
    model.fit(parity_table)
    s, theta, _, sigma = reference_mle(parity_table, 4, ["j1", "j2"], per_judge=False,
                                       bias=False, disc=True, free=True)
    print("parity (free cut points, discriminators): max abs error",
          max(np.abs(model.map_["skill"] - s).max(),
              np.abs(model.map_["cutpoint"] - theta[0]).max(),
              np.abs(model.map_["discriminator"] - sigma).max()))
    np.testing.assert_allclose(model.map_["skill"], s, atol=1e-5)
    np.testing.assert_allclose(model.map_["cutpoint"], theta[0], atol=1e-5)
    np.testing.assert_allclose(model.map_["discriminator"], sigma, atol=1e-5)


def test_three_levels_closed_form():
    # one pair, one judge: the MLE matches the observed shares of left and right
    levels = ["b wins", "draw", "a wins"]
    counts = {"a wins": 9, "draw": 5, "b wins": 4}
    table = pd.DataFrame({"judge": "j", "left": "a", "right": "b",
                          "outcome": [lab for lab, n in counts.items() for _ in range(n)]})
    model = bj.OrdinalBT(levels=levels, priors="flat").fit(table)
    p_left, p_right = 9 / 18, 4 / 18
    x = (logit(p_left) - logit(p_right)) / 2
    c = -(logit(p_left) + logit(p_right)) / 2
    np.testing.assert_allclose(model.map_["skill"], [x / 2, -x / 2], atol=1e-6)
    np.testing.assert_allclose(model.map_["cutpoint"], [-c, c], atol=1e-6)
    pred = model.predict(pd.DataFrame({"left": ["b", "a"], "right": ["a", "b"]}))
    xs = np.array([-x, x])
    np.testing.assert_allclose(pred["p_a wins"], expit(xs - c), atol=1e-6)
    np.testing.assert_allclose(pred["p_draw"], expit(xs + c) - expit(xs - c), atol=1e-6)
    np.testing.assert_allclose(pred["p_b wins"], expit(-xs - c), atol=1e-6)
    np.testing.assert_allclose(pred[["p_left", "p_tie", "p_right"]].to_numpy(),
                               pred[["p_a wins", "p_draw", "p_b wins"]].to_numpy())
    np.testing.assert_allclose(pred.loc[1, ["p_a wins", "p_draw"]], [p_left, 5 / 18], atol=1e-6)


def test_ranking_agrees_with_davidson_on_three_levels():
    rng = np.random.default_rng(5)
    skills = np.array([1.5, 0.9, 0.3, -0.3, -0.9, -1.5])
    table = simulate(skills, [-2.0, -0.6, 0.6, 2.0], n_rep=6, rng=rng, judges=("j1", "j2"))
    ordinal = bj.OrdinalBT().fit(table).ranking()
    davidson = bj.DavidsonBT().fit(collapse_levels(table)).ranking()
    truth = [f"m{i}" for i in range(6)]
    assert ordinal["item"].tolist() == truth
    assert davidson["item"].tolist() == truth
    rho = stats.spearmanr(ordinal.set_index("item").loc[truth, "skill"],
                          davidson.set_index("item").loc[truth, "skill"]).statistic
    assert rho == pytest.approx(1.0)


def test_labels_levels_and_repeated_rows(parity_table):
    table = parity_table.copy()
    table["outcome"] = table["outcome"].str.lower().radd(" ")  # letter case, spaces
    a = bj.OrdinalBT().fit(parity_table)
    b = bj.OrdinalBT().fit(table)
    np.testing.assert_allclose(a.map_["skill"], b.map_["skill"], atol=1e-8)
    assert a.judges()["n_comparisons"].tolist() == [144, 144]  # every input row counts
    assert len(a._fit_data.data["cell_pair"]) == 12  # repeated rows collapse to cells
    bad = parity_table.copy()
    bad.loc[[3, 7], "outcome"] = ["A>>>B", "much better"]
    with pytest.raises(DataValidationError, match=r"A>>>B.*much better.*B>>A', 'B>A'"):
        bj.OrdinalBT().fit(bad)
    for levels in (["A>B"], "B>A,A>B", ["A>B", "a>b "], [1, 2]):
        with pytest.raises(ValueError, match="levels"):
            bj.OrdinalBT(levels=levels).fit(parity_table)
    with pytest.raises(ValueError, match="cutpoints"):
        bj.OrdinalBT(cutpoints="ordered").fit(parity_table)


def test_judges_and_unused_levels(parity_table):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        table = bj.OrdinalBT(per_judge_cutpoints=True).fit(parity_table).judges()
    assert table["cutpoint[B>>A|B>A]"].lt(table["cutpoint[B>A|A=B]"]).all()
    assert (table["cutpoint[A>B|A>>B]_lower"] < table["cutpoint[A>B|A>>B]"]).all()
    assert table["laplace_ok"].dtype == bool
    no_tie = parity_table[parity_table["outcome"] != "A=B"]
    with pytest.warns(UserWarning, match=r"level\(s\) \['A=B'\] never observed"):
        bj.OrdinalBT().fit(no_tie)
    # symmetric cut points: "A>>B" unused is fine while its mirror "B>>A" is seen (they
    # share c_M); before, this warned that the cut point had no finite MLE
    no_top = parity_table[parity_table["outcome"] != "A>>B"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bj.OrdinalBT().fit(no_top)
    with pytest.warns(UserWarning, match=r"level\(s\) \['A>>B'\] never observed"):
        bj.OrdinalBT(cutpoints="free").fit(no_top)


def test_leave_one_cell_out_equals_the_table_without_its_rows(parity_table):
    # compare(reloo=True) / K-fold refit on _loo_data: the same fit as dropping the rows
    model = bj.OrdinalBT().fit(parity_table)
    fd = model._fit_data
    first = (parity_table["left"] == parity_table["left"][0]) & (
        parity_table["right"] == parity_table["right"][0]) & (
        parity_table["judge"] == parity_table["judge"][0])
    refit = bj.OrdinalBT()
    loo = model._loo_data(fd, "comparison", np.array([0]))
    refit._prepare = lambda *args, **kwargs: loo
    refit.fit()
    reduced = bj.OrdinalBT().fit(parity_table[~first])
    np.testing.assert_allclose(refit.map_["skill"], reduced.map_["skill"], atol=1e-6)
    np.testing.assert_allclose(refit.map_["cutpoint"], reduced.map_["cutpoint"], atol=1e-6)


def test_two_levels_are_bradley_terry(parity_table):
    table = parity_table[parity_table["outcome"] != "A=B"].copy()
    table["outcome"] = np.where(table["outcome"].str.startswith("A"), "left", "right")
    ordinal = bj.OrdinalBT(levels=["right", "left"]).fit(table)
    bt = bj.BradleyTerry(kind="hard", symmetrize=False).fit(table)
    np.testing.assert_allclose(ordinal.map_["cutpoint"], [0.0])
    np.testing.assert_allclose(ordinal.map_["skill"], bt.map_["skill"], atol=1e-6)
    pred = ordinal.predict(pd.DataFrame({"left": ["m0"], "right": ["m3"]}))
    # the levels' own columns are kept (not overwritten by the three-way ones)
    assert pred.filter(like="p_").columns.tolist() == ["p_right", "p_left", "p_tie"]
    np.testing.assert_allclose(pred["p_left"], expit(bt.map_["skill"][0] - bt.map_["skill"][3]),
                               atol=1e-6)


def test_a_counted_row_is_that_many_verdicts(parity_table):
    # issue 20, point 3: a row with n = k is k identical rows (n = 0 rows are none)
    counted = (parity_table.groupby(["judge", "left", "right", "outcome"], sort=False)
               .size().rename("n").reset_index())
    counted.loc[len(counted)] = ["j1", "a", "b", "A>>B", 0]  # no observation
    a = bj.OrdinalBT().fit(parity_table)
    b = bj.OrdinalBT().fit(counted)
    assert len(counted) < len(parity_table)
    np.testing.assert_allclose(b.map_["skill"], a.map_["skill"], atol=1e-6)
    assert b.judges()["n_comparisons"].tolist() == [144, 144]
