"""Shared, session-scoped fixtures: simulated data with known truth and fitted models.

Every distinct PyMC graph compiles once per session (tens of seconds cold), so
the fitted models below are built once and reused by every test file. Treat
them as read-only: a test that needs to refit creates its own model instance
(the compiled engine is shared anyway, so that costs no compilation).

``@pytest.mark.slow`` tests (parameter recovery, coverage studies) are skipped
unless the run selects them with ``-m slow`` (or any ``-m`` expression naming
``slow``) or passes ``--runslow``.
"""

from __future__ import annotations

import warnings

import pytest

from bayesjudge import DavidsonAggregator
from bayesjudge.datasets import simulate_davidson_votes
from bayesjudge.engine import ConvergenceWarning

#: Generating parameters of the simulated Davidson data (paper eqs. 2-4).
DAVIDSON_TRUTH = {"beta": 2.0, "eta0": -0.5, "gamma": 1.0}
#: Size of the simulated calibration sets and votes per item.
DAVIDSON_N_ITEMS = 400
DAVIDSON_N_VOTES = 8
#: Small NUTS settings for the fast suite (the slow tests use their own).
NUTS_SMALL = {"method": "nuts", "chains": 2, "draws": 300, "tune": 300}


# ----------------------------------------------------------------- slow marker
def pytest_addoption(parser):
    parser.addoption(
        "--runslow", action="store_true", default=False,
        help="also run @pytest.mark.slow tests (recovery and coverage studies)",
    )


def pytest_collection_modifyitems(config, items):
    if config.getoption("--runslow") or "slow" in (config.option.markexpr or ""):
        return
    skip = pytest.mark.skip(reason="slow study: run with -m slow or --runslow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


def fit_quietly(model, *args, **kwargs):
    """``model.fit`` with ConvergenceWarning silenced.

    The fast suite samples 2 x 300 draws, which can fall just short of the
    ESS >= 400 the library warns about; the tests check what they need.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return model.fit(*args, **kwargs)


# ------------------------------------------------------------------- data
@pytest.fixture(scope="session")
def davidson_truth() -> dict[str, float]:
    """True ``beta`` (margin_scale), ``eta0`` (tie_logit) and ``gamma`` (tie_scale)."""
    return dict(DAVIDSON_TRUTH)


@pytest.fixture(scope="session")
def davidson_data():
    """(votes, labels) simulated from the global-tie model with ``davidson_truth``.

    400 items, 8 votes each, counts form (``item, n_pos, n_tie, n_neg``),
    items 0..399; every item is labelled.
    """
    return simulate_davidson_votes(
        DAVIDSON_N_ITEMS, DAVIDSON_N_VOTES, beta=DAVIDSON_TRUTH["beta"],
        eta0=DAVIDSON_TRUTH["eta0"], random_seed=20240601,
    )


@pytest.fixture(scope="session")
def davidson_local_data():
    """(votes, labels) simulated from the local-tie model (eta = gamma * t)."""
    return simulate_davidson_votes(
        DAVIDSON_N_ITEMS, DAVIDSON_N_VOTES, beta=DAVIDSON_TRUTH["beta"],
        tie="local", gamma=DAVIDSON_TRUTH["gamma"], random_seed=20240602,
    )


# ------------------------------------------------------------------- fits
@pytest.fixture(scope="session")
def davidson_map_flat(davidson_data) -> DavidsonAggregator:
    """Global-tie MAP fit with flat priors (the paper's MLE, eq. 8) on ``davidson_data``."""
    return DavidsonAggregator(priors="flat").fit(*davidson_data, method="map")


@pytest.fixture(scope="session")
def davidson_map(davidson_data) -> DavidsonAggregator:
    """Global-tie MAP fit with the default weakly-informative priors."""
    return DavidsonAggregator().fit(*davidson_data, method="map")


@pytest.fixture(scope="session")
def davidson_nuts(davidson_data) -> DavidsonAggregator:
    """Global-tie NUTS fit (default priors, 2 chains x 300 draws) on ``davidson_data``."""
    return fit_quietly(DavidsonAggregator(random_seed=1), *davidson_data, **NUTS_SMALL)


@pytest.fixture(scope="session")
def davidson_nuts_local(davidson_data) -> DavidsonAggregator:
    """Local-tie NUTS fit on the *same* ``davidson_data`` (so it can be compared)."""
    return fit_quietly(
        DavidsonAggregator(tie="local", random_seed=2), *davidson_data, **NUTS_SMALL
    )
