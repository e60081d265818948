"""compare(): only fits that score the same observed data, and exact LOO where PSIS fails.

* Comparability: a fit records what its pointwise log-likelihood is a density of
  (``observed_data`` attributes); Davidson's P(outcome in {left, tie, right}) and
  Bradley-Terry's tie-as-half-a-win pseudo-likelihood are refused, as are a
  symmetrised and an unsymmetrised fit; BT on tie-free outcomes is a distribution
  over the same outcomes (P(tie) = 0) and is compared.
* ``reloo``: the exact LOO term of a flagged observation equals the log predictive
  density of that observation under an independent brute-force refit on the table
  without it (within Monte Carlo error), and the refits compile nothing.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import special

import bayesjudge as bj
from bayesjudge.comparison import loo
from bayesjudge.data.comparisons import validate_comparisons
from bayesjudge.engine import ConvergenceWarning, compilations
from bayesjudge.models.davidson.aggregator import vote_features


def _quiet_fit(model, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", UserWarning)
        return model.fit(*args, **kwargs)


# ------------------------------------------------------------------ comparability
@pytest.fixture(scope="module")
def jury_with_ties():
    return bj.DavidsonBT.example_data().fit_args[0]


def test_refuses_bt_hard_against_davidson_on_ties(jury_with_ties):
    assert (jury_with_ties["outcome"] == "tie").any()
    davidson = _quiet_fit(bj.DavidsonBT(), jury_with_ties)
    bt_hard = _quiet_fit(bj.BradleyTerry(kind="hard", symmetrize=False), jury_with_ties)
    with pytest.raises(ValueError) as err:
        bj.compare({"davidson": davidson, "bt_hard": bt_hard})
    msg = str(err.value)
    for word in ("'davidson' (DavidsonBT)", "'bt_hard' (BradleyTerry)", "half a left win",
                 "{left, tie, right}", "outcome_space"):
        assert word in msg


def test_refuses_symmetrised_against_unsymmetrised(jury_with_ties):
    table = jury_with_ties[jury_with_ties["outcome"] != "tie"]
    sym = _quiet_fit(bj.BradleyTerry(kind="hard", symmetrize=True), table)
    raw = _quiet_fit(bj.BradleyTerry(kind="hard", symmetrize=False), table)
    with pytest.raises(ValueError, match=r"different observed data .*prepared differently "
                       r"\(symmetrized: 'sym' \(BradleyTerry\) 'symmetrize=True"):
        bj.compare({"sym": sym, "raw": raw})
    # a table symmetrised by hand is the same observed data: comparable
    by_hand = _quiet_fit(bj.BradleyTerry(kind="hard", symmetrize=False), bj.symmetrize(table))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        assert len(bj.compare({"sym": sym, "by_hand": by_hand})) == 2


def test_bt_hard_and_davidson_compare_on_tie_free_outcomes(jury_with_ties):
    table = jury_with_ties[jury_with_ties["outcome"] != "tie"]
    davidson = _quiet_fit(bj.DavidsonBT(), table)
    bt_hard = _quiet_fit(bj.BradleyTerry(kind="hard", symmetrize=False), table)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # Pareto k on a tiny data set
        out = bj.compare({"davidson": davidson, "bt_hard": bt_hard})
    assert set(out.index) == {"davidson", "bt_hard"}
    # BT is Davidson with P(tie) = 0, so on tie-free data it scores the same outcome
    ll_d = davidson.idata_["log_likelihood"]["comparison"].values
    ll_b = bt_hard.idata_["log_likelihood"]["comparison"].values
    assert ll_d.shape[2:] == ll_b.shape[2:]


def test_refuses_a_fit_without_the_record(jury_with_ties, tmp_path):
    a = _quiet_fit(bj.DavidsonBT(), jury_with_ties)
    a.save(tmp_path / "a.nc")
    old = bj.load(tmp_path / "a.nc")
    del old.idata_["observed_data"].attrs["outcome_space"]  # as written by older versions
    with pytest.raises(ValueError, match="does not record what its log-likelihood"):
        bj.compare({"a": a, "old": old})


# ------------------------------------------------------------------ exact LOO
@pytest.fixture(scope="module")
def small_davidson():
    """Davidson votes with a 16-item calibration set (PSIS is strained on small sets)."""
    votes, labels = bj.DavidsonAggregator.example_data(random_seed=3).fit_args
    return votes, labels.iloc[:16].reset_index(drop=True)


def _log_pred(model, votes, item, label) -> np.ndarray:
    """Independent log p(label | votes of item) per draw (eq. 4 in numpy)."""
    row = votes[votes["item"] == item]
    counts = np.array([[int((row["vote"] == v).sum()) for v in (1, 0, -1)]])
    s, _ = vote_features(counts)
    post = model.idata_["posterior"]
    beta = post["margin_scale"].values.ravel()
    eta = post["tie_logit"].values.ravel()
    logits = np.stack([-beta * s[0], eta, beta * s[0]], axis=-1)  # -1, 0, +1
    return special.log_softmax(logits, axis=-1)[:, label + 1]


def test_exact_loo_equals_brute_force_refit_and_compiles_nothing(small_davidson):
    votes, labels = small_davidson
    settings = {"method": "nuts", "chains": 2, "draws": 1000, "tune": 500}
    model = _quiet_fit(bj.DavidsonAggregator(random_seed=5), votes, labels, **settings)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        psis = loo(model)
    k = psis.pareto_k.values
    threshold = np.unique(k)[-3]  # refit the observations of the two largest k values
    before = compilations()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no Pareto k warning once the flagged are refitted
        warnings.simplefilter("ignore", ConvergenceWarning)
        exact = loo(model, reloo=True, k_threshold=threshold,
                    refit_kwargs={"tune": 500})
    assert compilations() == before, "exact LOO refits must reuse the compiled engine"
    flagged = np.flatnonzero(k > threshold)
    assert 2 <= len(flagged) <= 6
    np.testing.assert_array_equal(exact.pareto_k.values[flagged], 0.0)
    others = np.setdiff1d(np.arange(len(k)), flagged)
    np.testing.assert_allclose(exact.elpd_i.values[others], psis.elpd_i.values[others])
    np.testing.assert_allclose(exact.elpd, exact.elpd_i.values.sum())
    for i in flagged:
        item, label = labels["item"].iloc[i], int(labels["label"].iloc[i])
        # brute force: the table without item i, another seed, the held-out density by hand
        refit = _quiet_fit(bj.DavidsonAggregator(random_seed=11), votes,
                           labels.drop(index=i), **settings)
        lp = _log_pred(refit, votes, item, label)
        brute = special.logsumexp(lp) - np.log(lp.size)
        # MC standard error of log mean exp(lp) (delta method); the ESS of this
        # two-parameter posterior is ~ the draw count, 4x margin for autocorrelation
        w = np.exp(lp - lp.max())
        se = w.std() / w.mean() / np.sqrt(lp.size / 4)
        # two independent estimates: 5 sd of their difference (false alarm ~ 6e-7)
        assert abs(exact.elpd_i.values[i] - brute) < 5 * np.sqrt(2) * se + 1e-9, (i, se)


def test_compare_reloo_has_no_unreliable_rows_nor_warning(small_davidson):
    votes, labels = small_davidson
    fits = {f"seed {s}": bj.DavidsonAggregator(random_seed=s).fit(votes, labels) for s in (0, 1)}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # k_threshold 0.3 refits more than the default 0.7 would: deterministic across CPUs
        table = bj.compare(fits, reloo=True, k_threshold=0.3)
    assert (table["diag_elpd"].fillna("") == "").all()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        plain = bj.compare(fits)
    # refitting changes only the flagged terms: the ELPDs stay of the same size
    assert np.all(np.abs(table["elpd"] - plain.loc[table.index, "elpd"]) < 5)


def test_exact_loo_of_a_pairwise_unit_matches_refit_without_its_rows(jury_with_ties):
    model = _quiet_fit(bj.DavidsonBT(), jury_with_ties)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        psis = loo(model)
    k = psis.pareto_k.values
    cells = model._fit_data.extra["comps"].to_frame()

    def rows_of(u):
        cell = cells.iloc[u]
        rows = ((jury_with_ties["judge"] == cell["judge"])
                & (jury_with_ties["left"] == cell["left"])
                & (jury_with_ties["right"] == cell["right"]))
        if "context" in jury_with_ties:
            rows &= jury_with_ties["context"] == cell["context"]
        return rows.to_numpy()

    def same_layout(u):  # the table without the cell keeps every id and cell in order
        rest = validate_comparisons(jury_with_ties[~rows_of(u)])
        return rest.to_frame().equals(cells.drop(index=u).reset_index(drop=True))

    # the unit of largest k whose removal keeps the layout, so that the refit's draws
    # (same seed, same dimension) line up with the model's parameters
    u = next(int(i) for i in np.argsort(-k, kind="stable") if same_layout(i))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        exact = loo(model, reloo=True, k_threshold=k[u] - 1e-9)
    assert exact.pareto_k.values[u] == 0.0
    refit = _quiet_fit(bj.DavidsonBT(), jury_with_ties[~rows_of(u)])
    post = refit.idata_["posterior"]
    params = {name: post[name].values for name in post.data_vars if not name.endswith("__")}
    ll = model._pointwise_loglik(params, model._fit_data)["comparison"][..., u].ravel()
    brute = special.logsumexp(ll) - np.log(ll.size)
    # same data values, seed and dimension: the same Laplace draws up to the optimiser
    assert abs(exact.elpd_i.values[u] - brute) < 1e-6


def test_kfold_with_one_item_per_fold_is_brute_force_loo(small_davidson):
    votes, labels = small_davidson
    model = bj.DavidsonAggregator().fit(votes, labels)  # MAP + Laplace: deterministic refits
    before = compilations()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        brute = loo(model, reloo=True, k_threshold=-np.inf)  # every item refitted
    kfold = loo(model, kfold=len(labels))
    assert compilations() == before
    # the same refit (same data values, seed and dimension) for each left-out item
    np.testing.assert_allclose(kfold.elpd_i.values, brute.elpd_i.values, rtol=0, atol=1e-9)
    other = bj.DavidsonAggregator(random_seed=1).fit(votes, labels)
    table = bj.compare({"a": model, "b": other}, kfold=4)
    assert set(table.index) == {"a", "b"} and np.isfinite(table["elpd"]).all()
