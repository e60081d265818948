"""The "nutpie-cached" NUTS route: numba's log density with the GIL released, on disk.

Checked against the engine's PyTensor C function (value and gradient, also after a
data swap), against the C callback route's posterior, and across processes (a second
process loads the compiled function from the disk cache instead of compiling it).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from bayesjudge import MisclassificationModel
from bayesjudge.engine import samplers
from bayesjudge.engine.numba_nogil import NogilLogp

COUNTS = (300, 500, 40, 50, 35, 50)
OTHER = (120, 200, 25, 30, 20, 25)


@pytest.fixture(scope="module")
def fitted():
    model = MisclassificationModel(random_seed=0).fit_counts(*COUNTS)
    return model._engine


def test_equals_the_engine_density_and_follows_swapped_data(fitted):
    engine = fitted
    nogil = NogilLogp(engine.model)
    assert nogil._jit.targetoptions["nogil"] is True
    x = engine.x0 + np.linspace(-0.5, 0.5, engine.x0.size)
    for counts in (COUNTS, OTHER):
        MisclassificationModel(random_seed=0).fit_counts(*counts)  # the same engine, new data
        lp, grad = nogil.bind()(x)
        lp_c, grad_c = engine.density.logp_jac(x)
        np.testing.assert_allclose(lp, float(lp_c), rtol=1e-9)
        np.testing.assert_allclose(grad, np.asarray(grad_c), rtol=1e-7, atol=1e-9)
    assert abs(nogil.bind()(x)[0] - NogilLogp(engine.model).bind()(x)[0]) < 1e-9


@pytest.mark.filterwarnings("ignore::bayesjudge.engine.ConvergenceWarning")
def test_the_route_samples_the_callback_posterior(monkeypatch):
    kw = {"method": "nuts", "draws": 500, "tune": 500, "chains": 2}
    c_fit = MisclassificationModel(random_seed=4).fit_counts(*COUNTS, **kw)
    monkeypatch.setattr(samplers, "choose_route", lambda *a, **k: "nutpie-cached")
    fit = MisclassificationModel(random_seed=4).fit_counts(*COUNTS, **kw)
    assert c_fit.sampler_ == "nutpie-c" and fit.sampler_ == "nutpie-cached"
    assert fit.idata_.posterior.sizes == c_fit.idata_.posterior.sizes
    for name in ("accuracy", "sensitivity", "specificity"):
        a, b = (np.asarray(m.idata_.posterior[name]).ravel() for m in (fit, c_fit))
        se = a.std() * np.sqrt(1 / fit.diagnostics_["min_ess_bulk"]
                               + 1 / c_fit.diagnostics_["min_ess_bulk"])
        assert abs(a.mean() - b.mean()) < 5 * se, (name, a.mean(), b.mean(), se)


def test_a_second_process_loads_it_from_the_disk_cache(tmp_path):
    # this cache's directory is private to the test (PyTensor's own caches are not)
    script = textwrap.dedent(f"""
        import pathlib, warnings
        warnings.simplefilter("ignore")
        from bayesjudge import MisclassificationModel
        from bayesjudge.engine import numba_nogil
        from bayesjudge.engine.numba_nogil import NogilLogp
        numba_nogil.CACHE_PATH = pathlib.Path({str(tmp_path)!r})
        engine = MisclassificationModel(random_seed=0).fit_counts(300, 500, 40, 50, 35, 50)._engine
        nogil = NogilLogp(engine.model)
        print(nogil.bind()(engine.x0)[0], nogil.cached)
        stats = nogil._jit.stats
        print(sum(stats.cache_hits.values()), sum(stats.cache_misses.values()))
    """)
    runs = [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           timeout=600) for _ in range(2)]
    for run in runs:
        assert run.returncode == 0, run.stderr[-2000:]
    (lp1, cached1), (hits1, misses1) = (line.split() for line in runs[0].stdout.split("\n")[:2])
    (lp2, cached2), (hits2, misses2) = (line.split() for line in runs[1].stdout.split("\n")[:2])
    assert cached1 == cached2 == "True" and lp1 == lp2
    assert (hits1, misses1) == ("0", "1") and (hits2, misses2) == ("1", "0")
    assert any(tmp_path.iterdir())


def test_an_unwritable_cache_directory_means_no_cache_not_an_error(tmp_path, monkeypatch):
    from bayesjudge.engine import numba_nogil

    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setattr(numba_nogil, "CACHE_PATH", blocker / "sub")  # mkdir fails
    copy = lambda x: x  # noqa: E731
    numba_nogil._KEYS[copy] = "key"
    assert numba_nogil._NogilLocator.from_function(copy, "<string>") is None
    monkeypatch.setattr(numba_nogil, "CACHE_PATH", tmp_path / "ok")
    assert numba_nogil._NogilLocator.from_function(copy, "<string>") is not None
    assert numba_nogil._NogilLocator.from_function(lambda x: x, "<string>") is None
