"""Flat priors and a judge whose discriminator has no finite maximum-likelihood value."""

import warnings

import numpy as np
import pandas as pd
import pytest

import bayesjudge as bj
from bayesjudge.models.bradley_terry.discriminator_check import unbounded_discriminators


def _jury(lonely_outcome: str) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    s = np.linspace(-1, 1, 5)
    rows = []
    for judge in ["a", "b", "c"]:
        for _ in range(150):
            i, j = rng.choice(5, 2, replace=False)
            won = rng.random() < 1 / (1 + np.exp(-(s[i] - s[j])))
            rows.append((judge, f"m{i}", f"m{j}", "left" if won else "right"))
    rows.append(("lonely", "m4", "m0", lonely_outcome))  # m4 is the best item
    return pd.DataFrame(rows, columns=["judge", "left", "right", "outcome"])


def _hard_bt_loglik(skill, sigma, table):
    """Hand-written log-likelihood of hard BT-sigma (eq. 13) on ``table``'s rows."""
    sk, sg = skill.to_dict(), sigma.to_dict()
    x = np.array([(sk[r.left] - sk[r.right]) / sg[r.judge] for r in table.itertuples()])
    y = (table["outcome"] == "left").to_numpy()
    return float(np.sum(np.where(y, -np.logaddexp(0, -x), -np.logaddexp(0, x))))


@pytest.mark.parametrize("outcome, side", [("left", "sigma = 0"), ("right", "sigma = infinity")])
def test_flat_prior_names_the_judge_whose_sigma_runs_off(outcome, side):
    # before: no word at fit; the MAP stopped on the ridge and only laplace_ok flagged it.
    table = _jury(outcome)
    with pytest.warns(UserWarning, match=r"discriminator of judge\(s\) \['lonely' \(1 verdict"
                                         rf"\(s\)\)\]: .*{side}") as record:
        model = bj.BTSigma(kind="hard", priors="flat").fit(table)
    assert not any("'a'" in str(w.message) for w in record)  # mixed records are bounded
    # the ridge is real (an independent computation of the likelihood): along it the
    # log-likelihood keeps rising, so the MAP's sigma is where the optimiser stopped
    # ids in the fit's order, from its state: not from idata_, whose Laplace draws need a
    # negative-definite Hessian, which a ridge may lack (it does for the generic CPU build)
    ids = model._layout_state
    skill = pd.Series(model.map_["skill"], index=ids["items"])
    sigma = pd.Series(model.map_["discriminator"], index=ids["judges"])
    assert sigma.index[-1] == "lonely"
    lonely, rest = table[table["judge"] == "lonely"], table[table["judge"] != "lonely"]
    terms = []
    for c in (1.0, 1.25, 1.5):
        if outcome == "left":  # skills and the jury x c, the lonely judge / c^3: sum log = 0
            sk, sg = skill * c, sigma * np.r_[c, c, c, 1 / c ** 3]
        else:  # the lonely judge x c, the jury and the skills / c^(1/3): sum log = 0
            sk, sg = skill / c ** (1 / 3), sigma * np.r_[[c ** (-1 / 3)] * 3, c]
        terms.append((_hard_bt_loglik(sk, sg, rest), _hard_bt_loglik(sk, sg, lonely)))
    rest_ll, lonely_ll = np.array(terms).T
    np.testing.assert_allclose(rest_ll, rest_ll[0], rtol=1e-12)  # the jury's x unchanged
    assert lonely_ll[0] < lonely_ll[1] < lonely_ll[2] < 0  # the lonely judge's keeps rising
    with warnings.catch_warnings():  # the default priors pool the sigmas: nothing to say
        warnings.simplefilter("error")
        bj.BTSigma(kind="hard").fit(table)


def test_davidson_discriminators_get_the_same_check():
    table = _jury("left")
    with pytest.warns(UserWarning, match=r"\['lonely' \(1 verdict\(s\)\)\]: every verdict"):
        bj.DavidsonBT(discriminators=True, priors="flat").fit(
            pd.concat([table, table.iloc[:40].assign(outcome="tie")], ignore_index=True))
    # with a position bias the sigma -> 0 case stands (x -> +-inf whatever b_k is)
    with pytest.warns(UserWarning, match=r"\['lonely' \(1 verdict\(s\)\)\]: every verdict"):
        bj.DavidsonBT(discriminators=True, position_bias=True, priors="flat").fit(
            pd.concat([table, table.iloc[:40].assign(outcome="tie")], ignore_index=True))


def test_unbounded_discriminators_by_hand():
    d = np.array([1.0, -0.5, 2.0, 0.3, -1.0, 0.0])
    win = np.array([1.0, 0.0, 0.5, 0.2, 0.9, 1.0])
    n = np.ones(6)
    unit = np.array([0, 0, 1, 2, 2, 3])
    sharp, blunt = unbounded_discriminators(d, win, n, unit, 5)
    # 0: both verdicts agree; 1: one tie on d > 0, slope (0.5 - 0.5) * 2 = 0 -> infinity;
    # 2: slope (0.2 - .5) .3 + (0.9 - .5)(-1) < 0; 3: a verdict on equal skills, slope 0;
    # 4: no verdicts at all
    assert sharp.tolist() == [True, False, False, False, False]
    assert blunt.tolist() == [False, True, True, True, False]
    assert not unbounded_discriminators(d, win, n, unit, 5, sharp_possible=False)[0].any()


def test_the_checking_fit_keeps_its_documentation():
    from bayesjudge.base import BayesianModel
    for cls in (bj.BTSigma, bj.DavidsonBT):  # help(model.fit) as for every other model
        assert cls.fit.__doc__ == BayesianModel.fit.__doc__
