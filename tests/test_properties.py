"""Numerical properties of every number bayesjudge reports, checked with hypothesis.

Fits are made once (MAP fits of every registered model on its ``example_data`` in
this module; the Davidson NUTS fit is the session fixture of ``conftest.py``) and
hypothesis varies what goes *into* ``predict``: tables, row order, ids, ``ci_prob``.
Refits are MAP fits of already compiled graphs (milliseconds each).

Registry-generic properties (a new model is covered without touching this file):

* row order and id spelling change nothing but the labels, in ``predict`` and in
  ``fit`` (``"000"``, ``"1.10"``, ``"NA"`` stay the strings they are);
* probabilities lie in [0, 1], ``p_<outcome>`` columns sum to 1, every interval
  brackets its median (and its mean from ``ci_prob`` 0.8 on: ``MEAN_INSIDE_FROM``),
  and a wider ``ci_prob`` gives nested intervals -- on NUTS draws for Davidson, on
  the Laplace draws of MAP fits for every model (one nutpie compilation per model
  would not fit this file's time budget; ``test_coverage.py`` samples them all);
* nothing valid yields NaN silently: example tables of any seed give finite
  output, and a table with NaN / None / a non-number in one cell, or a label
  outside {-1, 0, +1}, raises ``DataValidationError``.

Model-specific properties (one section per model family; add a section for a new
family): Davidson left/right mirror symmetry (predictions and fits); the
misclassification estimates in [0, 1] for any valid counts and their
label-flip symmetry (closed forms and the Bayesian MAP); metrics in range.

Two defects hypothesis found are fixed and tested here: the Laplace step at boundary
MAPs (``test_laplace_exists_at_boundary_counts``) and the MAP's local mode when the
calibration says the judge is worse than chance
(``test_map_is_the_mle_when_calibration_says_worse_than_chance``).
About 30 s on 2 shared cores (15 examples per property).
"""

from __future__ import annotations

import string
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from bayesjudge import DataValidationError, registered_models
from bayesjudge.data import ID_COLUMNS
from bayesjudge.datasets import simulate_davidson_votes
from bayesjudge.engine import ConvergenceWarning
from bayesjudge.estimators import BoundaryWarning, lang_reiczigel_interval, rogan_gladen
from bayesjudge.metrics import mae, pairwise_accuracy
from bayesjudge.models.davidson.aggregator import DavidsonAggregator
from bayesjudge.models.misclassification.hierarchical import HierarchicalMisclassificationModel
from bayesjudge.models.misclassification.model import IdentifiabilityWarning, MisclassificationModel

MODELS = registered_models()
NAMES = sorted(MODELS)
PREDICTORS = [n for n in NAMES if MODELS[n].example_data().predict_args]
#: Models whose predict reports fitted items (new ids are refused with an error).
PREDICTS_FITTED_ITEMS = {"PreferenceDistribution"}

PROPERTY = settings(
    max_examples=15, deadline=None, database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
FEW = settings(PROPERTY, max_examples=6)

#: Warnings a fit on random (possibly degenerate) data may legitimately give.
EXPECTED_WARNINGS = (ConvergenceWarning, IdentifiabilityWarning, BoundaryWarning)
#: Columns holding labels; every label set of the schema lies inside {-1, 0, +1}.
LABEL_COLUMNS = ("vote", "label", "judge_label", "human_label")
#: From this ``ci_prob`` on, an equal-tailed interval must hold the posterior mean. Not
#: a theorem: a log-normal's mean sits at its Phi(sigma / 2) quantile, and the
#: posterior of p(+1) for 11,234 votes against is log-normal-like with sigma ~1.4, so
#: its mean lies above the 75% quantile (hypothesis found it at ci_prob = 0.5). At 0.8
#: the mean would need sigma > 2.6 (about e^3 more votes for one side).
MEAN_INSIDE_FROM = 0.8
#: Quantities of a posterior table (column ``quantity``) that are probabilities.
PROBABILITY_QUANTITIES = {"accuracy", "judged_rate", "specificity", "sensitivity"}


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EXPECTED_WARNINGS)
        return fn(*args, **kwargs)


# --------------------------------------------------------------------------- strategies
#: Ids that break naive readers: numeric-looking, NA-looking, empty, whitespace.
TRICKY_IDS = ["000", "0", "00", "1.10", "1.1", "NA", "nan", "None", "null", "", " ", "-1",
              "1e3", "TRUE", "item 1", "ü", "x,y", '"q"', "\t"]
ids = st.one_of(
    st.sampled_from(TRICKY_IDS),
    st.text(alphabet=string.printable + "äé→", max_size=6),
    st.integers(-(10**6), 10**12),
)


def unique_ids(k: int):
    return st.lists(ids, min_size=k, max_size=k, unique=True)


@st.composite
def new_ids(draw, k: int):
    """k distinct new ids: a few drawn ones, the rest numbered after a tricky prefix."""
    head = draw(st.lists(ids, max_size=min(k, 12), unique=True), label="drawn ids")
    prefix = draw(st.sampled_from(["", "0", "00", "1.", "1.10", "NA", " ", "id-"]))
    taken = set(head)
    rest = [i for i in (f"{prefix}{j}" for j in range(2 * k + len(head))) if i not in taken]
    out = head + rest[: k - len(head)]
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1), label="id order"))
    return [out[j] for j in rng.permutation(k)]


@st.composite
def permutations_of(draw, n: int):
    """A permutation of range(n), drawn by seed (so large tables stay cheap)."""
    if n <= 8:
        return list(draw(st.permutations(range(n))))
    seed = draw(st.integers(0, 2**32 - 1), label="permutation seed")
    return np.random.default_rng(seed).permutation(n).tolist()


@st.composite
def count_tables(draw, max_rows: int = 25, max_votes: int = 12):
    """A Davidson votes table, counts form or long form (shuffled rows), any ids."""
    n = draw(st.integers(1, max_rows))
    items = draw(unique_ids(n))
    big = draw(st.booleans())
    top = 10**6 if big else max_votes
    counts = np.array(draw(st.lists(
        st.tuples(*(st.integers(0, top),) * 3), min_size=n, max_size=n)), dtype=np.int64)
    counts[counts.sum(axis=1) == 0, draw(st.integers(0, 2))] = 1  # every item has a vote
    table = pd.DataFrame({"item": pd.Series(items, dtype=object), "n_pos": counts[:, 0],
                          "n_tie": counts[:, 1], "n_neg": counts[:, 2]})
    if big or not draw(st.booleans()):
        return table
    rows = np.repeat(np.arange(n), counts.sum(axis=1))
    votes = np.concatenate([np.repeat([1, 0, -1], c) for c in counts])
    order = np.array(draw(permutations_of(len(rows))), dtype=np.intp)
    return pd.DataFrame({"item": pd.Series(items, dtype=object).iloc[rows[order]].to_numpy(),
                         "vote": votes[order]})


def mirror_votes(table: pd.DataFrame) -> pd.DataFrame:
    if "vote" in table:
        return table.assign(vote=-table["vote"])
    return table.rename(columns={"n_pos": "n_neg", "n_neg": "n_pos"})


valid_counts = st.integers(1, 2000).flatmap(lambda n: st.tuples(
    st.one_of(st.sampled_from([0, n]), st.integers(0, n)), st.just(n)))
calibration_counts = st.integers(1, 200).flatmap(lambda m: st.tuples(
    st.one_of(st.sampled_from([0, m]), st.integers(0, m)), st.just(m)))


@st.composite
def count_sets(draw):
    """(judged_pos, n, tp, m1, tn, m0), boundary counts 0 and n drawn often."""
    judged_pos, n = draw(valid_counts)
    tp, m1 = draw(calibration_counts)
    tn, m0 = draw(calibration_counts)
    return judged_pos, n, tp, m1, tn, m0


# --------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def examples():
    return {name: MODELS[name].example_data(random_seed=0) for name in NAMES}


@pytest.fixture(scope="module")
def map_fits(examples):
    return {name: quiet(MODELS[name](random_seed=1).fit, *examples[name].fit_args)
            for name in NAMES}


@pytest.fixture(scope="module")
def davidson_fits(davidson_map, davidson_nuts):
    """MAP and NUTS (2 x 300) global-tie fits of conftest's simulated data."""
    return {"map": davidson_map, "nuts": davidson_nuts}


def numeric(frame: pd.DataFrame) -> np.ndarray:
    return frame.select_dtypes("number").to_numpy(float)


def relabel(frame: pd.DataFrame, column: str, mapping: dict) -> pd.DataFrame:
    out = frame.copy()
    out[column] = pd.Series([mapping[v] for v in frame[column]], index=frame.index, dtype=object)
    return out


def check_probabilities(pred: pd.DataFrame, ci_prob: float) -> None:
    """Ranges, sums and interval order of one ``predict`` table (any model)."""
    values = numeric(pred)
    assert np.isfinite(values).all(), "predict returned NaN or inf"
    cols = set(pred.columns)
    dist = sorted(c for c in cols if c.startswith("p_") and not c.endswith(("_lower", "_upper"))
                  and c != "p_hat")  # p_hat: the raw estimate of p_b, not an outcome
    for c in dist:
        assert pred[c].between(0, 1).all(), c
        if f"{c}_lower" in cols:
            lo, hi = pred[f"{c}_lower"], pred[f"{c}_upper"]
            assert (0 <= lo).all() and (hi <= 1).all() and (lo <= hi).all(), c
            if ci_prob >= MEAN_INSIDE_FROM:
                assert (lo <= pred[c] + 1e-12).all() and (pred[c] <= hi + 1e-12).all(), c
    three = [c for c in ("p_left", "p_tie", "p_right") if c in dist]
    # p_<outcome> columns form one distribution per row; OrdinalBT gives two: its levels
    # (p_<level>) and the three outcomes they fall into (p_left, p_tie, p_right)
    groups = [three, [c for c in dist if c not in three]] if len(three) == 3 else [dist]
    for group in groups:
        if len(group) >= 2:
            np.testing.assert_allclose(pred[group].sum(axis=1), 1.0, atol=1e-12)
    if {"lower", "upper", "median"} <= cols:  # posterior-table layout
        assert (pred["lower"] <= pred["median"]).all() and (pred["median"] <= pred["upper"]).all()
        if ci_prob >= MEAN_INSIDE_FROM:
            assert (pred["lower"] <= pred["mean"] + 1e-12).all()
            assert (pred["mean"] <= pred["upper"] + 1e-12).all()
        if "quantity" in cols:
            prob = pred[pred["quantity"].isin(PROBABILITY_QUANTITIES)]
            for c in ("mean", "median", "lower", "upper", "map"):
                if c in prob:
                    assert prob[c].between(0, 1).all(), c


# =========================================================================== generic
@pytest.mark.parametrize("name", PREDICTORS)
@PROPERTY
@given(data=st.data())
def test_predict_permuted_relabelled_rows_change_only_labels(name, examples, map_fits, data):
    example, model = examples[name], map_fits[name]
    table, col = example.predict_args[0], example.id_column
    old = pd.unique(table[col])
    mapping = dict(zip(old, data.draw(new_ids(len(old)), label="new ids")))
    if name in PREDICTS_FITTED_ITEMS:  # p* exists only for annotated items: order moves, ids stay
        mapping = {v: v for v in old}
    order = data.draw(permutations_of(len(table)), label="row order")
    shuffled = relabel(table.iloc[order].reset_index(drop=True), col, mapping)
    got = model.predict(shuffled, *example.predict_args[1:])
    ref = model.predict(*example.predict_args)
    first_seen = list(pd.unique(shuffled[col]))
    assert got[col].tolist() == first_seen  # input order, ids exactly as given
    assert [type(v) for v in got[col]] == [type(v) for v in first_seen]
    expected = relabel(ref, col, mapping).set_index(col).loc[first_seen]
    np.testing.assert_array_equal(got.columns, ref.columns)
    np.testing.assert_allclose(numeric(got.set_index(col)), numeric(expected), rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", NAMES)
@FEW
@given(data=st.data())
def test_fit_ignores_row_order_and_item_spelling(name, examples, map_fits, data):
    example = examples[name]
    # Items are relabelled where a table has an item column; comparisons tables
    # (left, right) name items in the summary's labels, so only their row order moves.
    tables = [a for a in example.fit_args if isinstance(a, pd.DataFrame) and "item" in a]
    old = pd.unique(pd.concat([t["item"] for t in tables])) if tables else []
    mapping = dict(zip(old, data.draw(new_ids(len(old)), label="new item ids")))
    args = []
    for arg in example.fit_args:
        if isinstance(arg, pd.DataFrame):
            order = data.draw(permutations_of(len(arg)), label="row order")
            arg = arg.iloc[order].reset_index(drop=True)
            if "item" in arg:
                arg = relabel(arg, "item", mapping)
        args.append(arg)
    refit = quiet(MODELS[name](random_seed=1).fit, *args)
    ref = map_fits[name].summarize()
    got = refit.summarize().loc[ref.index]  # same labels (systems may come in another order)
    np.testing.assert_allclose(got["map"], ref["map"], rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", NAMES)
@PROPERTY
@given(ci_prob=st.floats(0.01, 0.99), wider=st.floats(0.0, 0.5))
def test_probabilities_in_range_and_intervals_nested(name, examples, map_fits, ci_prob, wider):
    model, example = map_fits[name], examples[name]
    outer = min(0.995, ci_prob + wider)
    pred = model.predict(*example.predict_args, ci_prob=ci_prob)
    check_probabilities(pred, ci_prob)
    wide = model.predict(*example.predict_args, ci_prob=outer)
    if {"lower", "upper"} <= set(pred.columns):
        assert (wide["lower"] <= pred["lower"]).all() and (pred["upper"] <= wide["upper"]).all()
    summary = model.summarize(ci_prob=ci_prob)
    lb, ub = summary.filter(like="_lb").iloc[:, 0], summary.filter(like="_ub").iloc[:, 0]
    assert np.isfinite(summary.select_dtypes("number").to_numpy(float)).all()
    assert (lb <= ub).all()
    if ci_prob >= MEAN_INSIDE_FROM:
        assert (lb <= summary["mean"] + 1e-12).all() and (summary["mean"] <= ub + 1e-12).all()


@pytest.mark.parametrize("method", ["map", "nuts"])
@PROPERTY
@given(table=count_tables(), ci_prob=st.floats(0.01, 0.99))
def test_davidson_probabilities_on_random_tables(davidson_fits, method, table, ci_prob):
    pred = davidson_fits[method].predict(table, ci_prob=ci_prob)
    assert len(pred) == table["item"].nunique()
    check_probabilities(pred, ci_prob)
    assert set(pred["decision"]) <= {-1, 0, 1}


@pytest.mark.parametrize("name", NAMES)
@FEW
@given(seed=st.integers(0, 2**32 - 1))
def test_example_tables_of_any_seed_give_finite_output(name, seed):
    example = MODELS[name].example_data(random_seed=seed)
    model = quiet(MODELS[name](random_seed=seed).fit, *example.fit_args)
    assert all(np.isfinite(np.asarray(v, float)).all() for v in (model.map_ or {}).values())
    pred = model.predict(*example.predict_args)
    assert np.isfinite(numeric(pred)).all()
    assert np.isfinite(numeric(model.summarize())).all()


@pytest.mark.parametrize("case", ["single_boundary_counts", "hierarchical_seed_452"])
def test_laplace_exists_at_boundary_counts(case):
    if case == "single_boundary_counts":  # judged_pos = 0 of 2, tp = 0 of 1, tn = 0 of 1
        model = quiet(MisclassificationModel().fit_counts, 0, 2, 0, 1, 0, 1)
    else:
        tables = HierarchicalMisclassificationModel.example_data(random_seed=452).fit_args
        model = quiet(HierarchicalMisclassificationModel().fit, *tables)
    assert np.isfinite(numeric(model.predict())).all()


#: Columns a model's ``predict`` reads (others, e.g. a pair id or the annotator of an
#: items table, are passed through or ignored, so a bad value there is not an error).
PREDICT_READS = ("item", "left", "right", "context", "judge", "aspect", "prob",
                 "prob_swapped", "vote", "n_pos", "n_tie", "n_neg", "confidence")


def _corrupt(data, tables: list, id_only_missing: bool = True, only=None):
    """One table with one cell set to a value no schema accepts; returns (position, table)."""
    frames = [i for i, t in enumerate(tables) if isinstance(t, pd.DataFrame)]
    pos = data.draw(st.sampled_from(frames), label="table")
    table = tables[pos].copy()
    columns = [c for c in table.columns if only is None or c in only]
    col = data.draw(st.sampled_from(columns), label="column")
    row = data.draw(st.integers(0, len(table) - 1), label="row")
    if col in ID_COLUMNS:  # any value is a valid id, except a missing one
        bad = data.draw(st.sampled_from([np.nan, None]), label="value")
    elif col in LABEL_COLUMNS and data.draw(st.booleans()):
        bad = data.draw(st.one_of(
            st.integers(-10, 10).filter(lambda v: v not in (-1, 0, 1)),
            st.floats(-3, 3).filter(lambda v: v != int(v)),
        ), label="label outside the set")
    else:
        bad = data.draw(st.sampled_from([np.nan, None, "x", np.inf, -np.inf, "", "1 1"]),
                        label="value")
    table[col] = table[col].astype(object)
    table.iloc[row, table.columns.get_loc(col)] = bad
    return pos, table


@pytest.mark.parametrize("name", NAMES)
@PROPERTY
@given(data=st.data())
def test_invalid_cell_raises_data_validation_error(name, examples, map_fits, data):
    example = examples[name]
    args = list(example.fit_args)
    pos, args[pos] = _corrupt(data, args)
    with pytest.raises(DataValidationError):
        quiet(MODELS[name]().fit, *args)
    if example.predict_args:
        pargs = list(example.predict_args)
        pos, pargs[pos] = _corrupt(data, pargs, only=PREDICT_READS)
        with pytest.raises(DataValidationError):
            map_fits[name].predict(*pargs)


# =========================================================================== Davidson
@pytest.mark.parametrize("method", ["map", "nuts"])
@PROPERTY
@given(table=count_tables())
def test_davidson_mirrored_votes_mirror_every_prediction(davidson_fits, method, table):
    model = davidson_fits[method]
    pred, mirrored = model.predict(table), model.predict(mirror_votes(table))
    assert mirrored["item"].tolist() == pred["item"].tolist()
    pairs = [("p_neg", "p_pos"), ("p_tie", "p_tie"), ("risk_neg", "risk_pos"),
             ("risk_tie", "risk_tie")]
    if method == "nuts":
        pairs += [("p_neg_lower", "p_pos_lower"), ("p_neg_upper", "p_pos_upper"),
                  ("p_tie_lower", "p_tie_lower"), ("p_tie_upper", "p_tie_upper")]
    for a, b in pairs:
        np.testing.assert_allclose(mirrored[a], pred[b], rtol=0, atol=1e-12, err_msg=a)
        np.testing.assert_allclose(mirrored[b], pred[a], rtol=0, atol=1e-12, err_msg=b)
    # decision -> -decision, except where two risks tie to rounding (then the
    # documented tie-break, tie before -1 before +1, is not mirror-symmetric)
    risks = np.sort(pred[["risk_neg", "risk_tie", "risk_pos"]].to_numpy(), axis=1)
    clear = risks[:, 1] - risks[:, 0] > 1e-9
    exact_tie = risks[:, 1] == risks[:, 0]
    assert (mirrored["decision"][clear] == -pred["decision"][clear]).all()
    # an exact -1/+1 risk tie happens only when p_neg == p_pos, where the tie wins
    assert (pred["decision"][exact_tie & (pred["p_neg"] == pred["p_pos"])] == 0).all()


def _mirror_fit_data(votes: pd.DataFrame, labels: pd.DataFrame):
    return mirror_votes(votes), labels.assign(label=-labels["label"])


@pytest.mark.parametrize("tie", ["global", "local"])
@FEW
@given(seed=st.integers(0, 2**32 - 1), n_items=st.integers(30, 300),
       n_votes=st.integers(1, 12))
def test_davidson_mirrored_fit_has_the_same_parameters_map(tie, seed, n_items, n_votes):
    truth = {"eta0": -0.5} if tie == "global" else {"gamma": 1.0}
    votes, labels = simulate_davidson_votes(n_items, n_votes, beta=2.0, random_seed=seed,
                                            tie=tie, **truth)
    assume(set(labels["label"]) == {-1, 0, 1})
    fit = quiet(DavidsonAggregator(tie=tie).fit, votes, labels)
    mirrored = quiet(DavidsonAggregator(tie=tie).fit, *_mirror_fit_data(votes, labels))
    for name in ("margin_scale", fit._tie_param):
        assert float(mirrored.map_[name]) == pytest.approx(float(fit.map_[name]),
                                                           rel=1e-6, abs=1e-6), name


def test_davidson_mirrored_fit_has_the_same_posterior_nuts(davidson_data, davidson_nuts):
    """Same compiled graph and seed, mirrored data: equal posteriors within MC error."""
    mirrored = quiet(DavidsonAggregator(random_seed=1).fit, *_mirror_fit_data(*davidson_data),
                     method="nuts", chains=2, draws=300, tune=300)
    a, b = davidson_nuts.summarize(), mirrored.summarize()
    for name in ("margin_scale", "tie_logit"):
        se = np.hypot(a.loc[name, "mcse_mean"], b.loc[name, "mcse_mean"])
        assert abs(a.loc[name, "mean"] - b.loc[name, "mean"]) < 4 * se, name
        assert b.loc[name, "sd"] == pytest.approx(a.loc[name, "sd"], rel=0.2), name


# =========================================================================== misclassification
def _flip(judged_pos, n, tp, m1, tn, m0):
    """Counts after relabelling judge_label and human_label 0 <-> 1."""
    return n - judged_pos, n, tn, m0, tp, m1


@PROPERTY
@given(counts=count_sets())
def test_closed_forms_in_range_and_label_flip_symmetric(counts):
    judged_pos, n, tp, m1, tn, m0 = counts
    hat = tn / m0 + tp / m1
    tilde = (tn + 1) / (m0 + 2) + (tp + 1) / (m1 + 2)
    if hat <= 1:
        with pytest.raises(DataValidationError, match="q0 \\+ q1 <= 1"):
            rogan_gladen(*counts)
        with pytest.raises(DataValidationError, match="q0 \\+ q1 <= 1"):
            lang_reiczigel_interval(*counts)
        return
    theta = rogan_gladen(*counts)
    assert 0 <= theta <= 1
    assert rogan_gladen(*_flip(*counts)) == pytest.approx(1 - theta, abs=1e-12)
    raw, raw_flip = rogan_gladen(*counts, clip=False), rogan_gladen(*_flip(*counts), clip=False)
    assert np.isfinite(raw) and raw_flip == pytest.approx(1 - raw, abs=1e-9)
    if tilde <= 1:
        with pytest.raises(DataValidationError, match="adjusted"):
            lang_reiczigel_interval(*counts)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BoundaryWarning)
        ci, flip = lang_reiczigel_interval(*counts), lang_reiczigel_interval(*_flip(*counts))
    assert 0 <= ci.lower <= ci.upper <= 1 and 0 <= ci.estimate <= 1
    assert ci.at_boundary == (ci.lower == ci.upper)
    # exact up to rounding (the centre is ~1/(q0~ + q1~ - 1), so relative)
    assert flip.lower == pytest.approx(1 - ci.upper, abs=1e-9)
    assert flip.upper == pytest.approx(1 - ci.lower, abs=1e-9)
    assert flip.center == pytest.approx(1 - ci.center, rel=1e-9, abs=1e-12)
    assert (flip.q0, flip.q1) == (pytest.approx(ci.q1), pytest.approx(ci.q0))


@PROPERTY
@given(counts=count_sets(), flat=st.booleans())
def test_bayesian_map_in_range_and_label_flip_symmetric(counts, flat):
    priors = "flat" if flat else None
    fit = quiet(MisclassificationModel(priors=priors).fit_counts, *counts)
    flip = quiet(MisclassificationModel(priors=priors).fit_counts, *_flip(*counts))
    for name in ("accuracy", "specificity", "sensitivity", "judged_rate"):
        assert 0 <= float(fit.map_[name]) <= 1, name
        assert 0 <= float(flip.map_[name]) <= 1, name
    judged_pos, n, tp, m1, tn, m0 = counts
    if tn / m0 + tp / m1 > 1:  # identified; else the MAP is a local mode, see below
        _assert_flipped(fit.map_, flip.map_)
    if not flat:  # Laplace intervals (flat: the logit of an empty class has no curvature)
        pred = fit.predict()
        check_probabilities(pred, 0.95)


def _assert_flipped(fit: dict, flip: dict, atol: float = 1e-6) -> None:
    np.testing.assert_allclose(flip["accuracy"], 1 - np.asarray(fit["accuracy"]), atol=atol)
    np.testing.assert_allclose(flip["specificity"], fit["sensitivity"], atol=atol)
    np.testing.assert_allclose(flip["sensitivity"], fit["specificity"], atol=atol)


def test_map_is_the_mle_when_calibration_says_worse_than_chance():
    fit = quiet(MisclassificationModel().fit_counts, 1, 60, 0, 2, 0, 2)
    flip = quiet(MisclassificationModel().fit_counts, *_flip(1, 60, 0, 2, 0, 2))
    _assert_flipped(fit.map_, flip.map_)


def _flip_tables(judgments: pd.DataFrame, calibration: pd.DataFrame):
    return (judgments.assign(judge_label=1 - judgments["judge_label"]),
            calibration.assign(judge_label=1 - calibration["judge_label"],
                               human_label=1 - calibration["human_label"]))


@pytest.mark.parametrize("pooling", ["partial", "complete", "none"])
@FEW
@given(seed=st.integers(0, 2**32 - 1))
def test_hierarchical_map_label_flip_symmetric(pooling, seed):
    tables = HierarchicalMisclassificationModel.example_data(random_seed=seed).fit_args
    fit = quiet(HierarchicalMisclassificationModel(pooling=pooling).fit, *tables)
    flip = quiet(HierarchicalMisclassificationModel(pooling=pooling).fit, *_flip_tables(*tables))
    _assert_flipped(fit.map_, flip.map_)


@st.composite
def judgment_tables(draw):
    """Random single-system tables: any labels, both calibration classes present."""
    n, m = draw(st.integers(1, 40)), draw(st.integers(2, 30))
    judge = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    human = draw(st.lists(st.integers(0, 1), min_size=m, max_size=m).filter(
        lambda h: 0 < sum(h) < len(h)))
    cal_judge = draw(st.lists(st.integers(0, 1), min_size=m, max_size=m))
    names = draw(new_ids(n + m))
    return (pd.DataFrame({"item": pd.Series(names[:n], dtype=object), "judge_label": judge}),
            pd.DataFrame({"item": pd.Series(names[n:], dtype=object), "judge_label": cal_judge,
                          "human_label": human}))


@PROPERTY
@given(tables=judgment_tables())
def test_misclassification_random_tables_give_finite_estimates(tables):
    fit = quiet(MisclassificationModel().fit, *tables)
    assert all(np.isfinite(v).all() for v in fit.map_.values())
    pred = fit.predict()
    check_probabilities(pred, 0.95)


# =========================================================================== metrics
labels3 = st.sampled_from([-1, 0, 1])


@PROPERTY
@given(data=st.data(), n_items=st.integers(1, 40), n_splits=st.integers(1, 6))
def test_metrics_in_range(data, n_items, n_splits):
    y_true = np.array(data.draw(st.lists(labels3, min_size=n_items, max_size=n_items)))
    y_pred = np.array(data.draw(st.lists(labels3, min_size=n_items, max_size=n_items)))
    m, pa = mae(y_pred, y_true), pairwise_accuracy(y_pred, y_true)
    assert 0 <= m <= 2 and 0 <= pa <= 1
    assert (m == 0) == (pa == 1) == bool((y_pred == y_true).all())
    assert m >= 1 - pa - 1e-12  # every miss costs at least 1
    stack = np.array(data.draw(st.lists(st.lists(labels3, min_size=n_items, max_size=n_items),
                                        min_size=n_splits, max_size=n_splits)))
    mask = np.array(data.draw(st.lists(st.lists(st.booleans(), min_size=n_items,
                                                max_size=n_items).filter(any),
                                       min_size=n_splits, max_size=n_splits)))
    per_split_mae = mae(stack, y_true, mask=mask)
    per_split_pa = pairwise_accuracy(stack, y_true, mask=mask)
    assert per_split_mae.shape == per_split_pa.shape == (n_splits,)
    assert ((0 <= per_split_mae) & (per_split_mae <= 2)).all()
    assert ((0 <= per_split_pa) & (per_split_pa <= 1)).all()


@PROPERTY
@given(data=st.data(), n_items=st.integers(1, 20))
def test_metrics_reject_nan_and_labels_outside_the_set(data, n_items):
    y_true = np.array(data.draw(st.lists(labels3, min_size=n_items, max_size=n_items)), float)
    y_pred = y_true.copy()
    bad = data.draw(st.one_of(st.just(np.nan), st.integers(-9, 9).filter(lambda v: abs(v) > 1),
                              st.floats(-1, 1).filter(lambda v: v not in (-1, 0, 1))))
    where = data.draw(st.integers(0, n_items - 1))
    target = data.draw(st.sampled_from(["pred", "true"]))
    (y_pred if target == "pred" else y_true)[where] = bad
    for metric in (mae, pairwise_accuracy):
        with pytest.raises(DataValidationError):
            metric(y_pred, y_true)
