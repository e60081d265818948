"""Safety of the on-disk engine cache (bayesjudge.engine.disk_cache).

A pickle runs code when loaded and the cache writes files, so: nothing is read or
written in a directory others can write; no planted file or symlink is ever written
through; a damaged or foreign entry is recompiled (with a log record), never a crash;
the cache's size stays under its bound.
"""

from __future__ import annotations

import logging
import os
import pickle
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bayesjudge import MisclassificationModel
from bayesjudge.engine import compiled, disk_cache

COUNTS = (300, 500, 40, 50, 35, 50)
LOGGER = "bayesjudge.engine.disk_cache"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    monkeypatch.setenv("BAYESJUDGE_CACHE_DIR", str(folder))
    monkeypatch.delenv("BAYESJUDGE_CACHE_MAX_MB", raising=False)
    disk_cache._refused.clear()
    compiled.clear_cache()
    yield folder
    compiled.clear_cache()


def _spy(monkeypatch):
    """Record every compilation and every entry name the engine asks for."""
    made, names = [], []
    compile_, entry_name = compiled.Engine._compile, disk_cache.entry_name

    def counting(self, role):
        made.append(role)
        return compile_(self, role)

    def naming(key, role):
        name = entry_name(key, role)
        names.append(name)
        return name

    monkeypatch.setattr(compiled.Engine, "_compile", counting)
    monkeypatch.setattr(disk_cache, "entry_name", naming)
    return made, names


def _fit():
    compiled.clear_cache()  # as in a new process: nothing compiled in memory
    fit = MisclassificationModel(priors="flat").fit_counts(*COUNTS)
    q0, q1, p = 35 / 50, 40 / 50, 300 / 500  # flat-prior MAP = Rogan-Gladen
    np.testing.assert_allclose(fit.map_["accuracy"], (p + q0 - 1) / (q0 + q1 - 1), rtol=1e-6)
    return fit


def _listing(folder):
    return {p.name: (p.lstat().st_size, p.lstat().st_mtime_ns) for p in folder.iterdir()}


def test_planted_symlinks_are_never_written_through(cache, tmp_path, monkeypatch):
    compiled, names = _spy(monkeypatch)
    _fit()  # learn the entry names this fit uses
    assert len(names) == 2 and all(names)
    target = tmp_path / "precious.txt"
    target.write_text("do not overwrite")
    # every name the cache could write: the entries, and the temporary names a writer
    # could predict (the former '.<entry>.<pid>.tmp')
    planted = [*names, *(f".{n}.{os.getpid()}.tmp" for n in names)]
    for shared_mode in (0o777, 0o700):  # others could plant them; or an old mistake
        for p in cache.iterdir():
            p.unlink()
        os.chmod(cache, shared_mode)
        for name in planted:
            (cache / name).symlink_to(target)
        compiled.clear()
        _fit()
        assert sorted(compiled) == ["constrain", "fgh"]  # a symlink is never loaded
        assert target.read_text() == "do not overwrite"
        if shared_mode == 0o777:  # nothing written at all
            assert sorted(p.name for p in cache.iterdir()) == sorted(planted)
        else:  # the entries replaced the symlinks (rename, not write-through)
            assert all((cache / n).is_file() and not (cache / n).is_symlink() for n in names)


def test_a_folder_others_can_write_is_neither_read_nor_written(cache, monkeypatch, caplog):
    compiled, _ = _spy(monkeypatch)
    _fit()
    assert len(list(cache.glob("*.pkl"))) == 2  # private: stored
    compiled.clear()
    _fit()
    assert compiled == []  # and loaded
    os.chmod(cache, 0o777)
    before = _listing(cache)
    with caplog.at_level(logging.INFO, logger=LOGGER):
        _fit()  # the fit works, compiling afresh
    assert sorted(compiled) == ["constrain", "fgh"]  # valid entries there are not read
    assert _listing(cache) == before  # nothing written, no mtime refreshed
    assert any("not a directory private to this user" in r.getMessage() for r in caplog.records)


def _damage(kind, path):
    if kind == "truncated":
        path.write_bytes(path.read_bytes()[:200])
    elif kind == "int":
        path.write_bytes(pickle.dumps(1))
    elif kind == "bare function":  # the layout of the previous version: no header
        path.write_bytes(pickle.dumps(pickle.loads(path.read_bytes())["function"]))
    elif kind == "other version":
        entry = pickle.loads(path.read_bytes())
        entry["fingerprint"] = "0" * 64
        path.write_bytes(pickle.dumps(entry))
    elif kind == "symlink":
        other = path.parent.parent / f"elsewhere-{path.name}"
        other.write_bytes(path.read_bytes())
        path.unlink()
        path.symlink_to(other)


@pytest.mark.parametrize("kind", ["truncated", "int", "bare function", "other version",
                                  "other entry", "symlink"])
def test_a_damaged_or_foreign_entry_is_recompiled_with_a_log_record(cache, monkeypatch,
                                                                      caplog, kind):
    compiled, _ = _spy(monkeypatch)
    _fit()
    entries = sorted(cache.glob("*.pkl"))
    if kind == "other entry":  # valid entries, each under the other's name
        contents = [p.read_bytes() for p in entries]
        for entry, content in zip(entries, contents[::-1]):
            entry.write_bytes(content)
    for entry in entries if kind != "other entry" else ():
        _damage(kind, entry)
    compiled.clear()
    with caplog.at_level(logging.INFO, logger=LOGGER):
        _fit()
    assert sorted(compiled) == ["constrain", "fgh"]
    assert sum("recompiling" in r.getMessage() for r in caplog.records) == 2
    compiled.clear()
    _fit()  # the entries were overwritten with good ones
    assert compiled == []


def test_eviction_keeps_the_cache_under_its_bound(cache, monkeypatch):
    # the cache's own entries, oldest first; files that are not entries are never touched
    sizes = [1000, 1000, 1000, 1000, 1000]
    names = [f"{i:040x}" + ".pkl" for i in range(len(sizes))]
    for i, (name, size) in enumerate(zip(names, sizes)):
        (cache / name).write_bytes(b"x" * size)
        os.utime(cache / name, (1_000_000 + i, 1_000_000 + i))
    (cache / "notes.pkl").write_bytes(b"y" * 5000)
    for tmp in (f".bayesjudge-{'a' * 8}.tmp", f".{'b' * 40}.pkl.123.tmp"):  # killed writers
        (cache / tmp).write_bytes(b"z" * 10)
        os.utime(cache / tmp, (1_000_000, 1_000_000))
    monkeypatch.setenv("BAYESJUDGE_CACHE_MAX_MB", "0.0025")  # 2,500 bytes
    disk_cache.evict(cache)
    assert sorted(p.name for p in cache.iterdir()) == sorted([*names[-2:], "notes.pkl"])
    # a fit stores its entries and trims the cache to the bound, whatever it held
    bound = 0.3e6
    monkeypatch.setenv("BAYESJUDGE_CACHE_MAX_MB", str(bound / 1e6))
    _fit()
    entries = list(cache.glob("[0-9a-f]*.pkl"))
    assert entries and sum(p.stat().st_size for p in entries) <= bound
    assert not set(names) & {p.name for p in entries}  # the oldest went first
    monkeypatch.setenv("BAYESJUDGE_CACHE_MAX_MB", "0")  # a bound of 0 keeps nothing
    _fit()
    assert not list(cache.glob("[0-9a-f]*.pkl"))


def test_the_size_bound_is_settable(monkeypatch, caplog):
    monkeypatch.delenv("BAYESJUDGE_CACHE_MAX_MB", raising=False)
    assert disk_cache.max_bytes() == disk_cache.DEFAULT_MAX_MB * 1e6
    monkeypatch.setenv("BAYESJUDGE_CACHE_MAX_MB", "50")
    assert disk_cache.max_bytes() == 50_000_000
    for bad in ("-1", "lots", "nan"):
        monkeypatch.setenv("BAYESJUDGE_CACHE_MAX_MB", bad)
        with caplog.at_level(logging.WARNING, logger=LOGGER):
            assert disk_cache.max_bytes() == disk_cache.DEFAULT_MAX_MB * 1e6
        assert "BAYESJUDGE_CACHE_MAX_MB" in caplog.records[-1].getMessage()


def test_the_cache_key_hashes_every_module_that_builds_a_graph():
    # the engine lives in bayesjudge/engine/, the models in bayesjudge/models/<family>/: a
    # change to a model's graph must change the key (the hash once covered engine/ only)
    package = Path(disk_cache.__file__).resolve().parents[1]
    hashed = {str(p.relative_to(package)) for p in disk_cache.hashed_sources()}
    for source in ("base.py", "priors.py", "engine/compiled.py", "models/davidson/aggregator.py",
                   "models/bradley_terry/kernel.py", "models/misclassification/model.py",
                   "models/preference/temperature.py", "data/comparisons.py"):
        assert source in hashed, source
    assert not any(s.startswith(("cli/", "experiments/", "datasets/")) for s in hashed)


def test_graphs_with_a_differentiated_op_from_graph_are_stored(cache, monkeypatch, caplog):
    """AnchoredBT's graph holds pt.logsumexp, an OpFromGraph whose pullback (a local
    closure, which pickle refuses) is cached on the op once the gradient is taken: every
    one of its functions went unstored and was compiled anew in each process. Stored now
    (the caches emptied as they are pickled): a new process compiles nothing, and gives
    the same fit and Laplace draws."""
    from bayesjudge import AnchoredBT

    example = AnchoredBT.example_data()
    caplog.set_level(logging.INFO, logger=LOGGER)
    first = AnchoredBT(random_seed=0).fit(*example.fit_args)
    before = first.ranking()
    assert not [r for r in caplog.records if "not storing" in r.getMessage()]
    made, _ = _spy(monkeypatch)
    compiled.clear_cache()  # as in a new process
    again = AnchoredBT(random_seed=0).fit(*example.fit_args)
    after = again.ranking()
    assert made == []
    np.testing.assert_allclose(again.map_["skill"], first.map_["skill"], rtol=1e-12)
    np.testing.assert_allclose(after["skill_lower"], before["skill_lower"], rtol=1e-10)


def test_one_anchored_engine_serves_any_number_of_items_and_judges(cache, monkeypatch):
    """AnchoredBT's graph has no static size (the engine's ``generic_shapes``): data with
    more items and fewer judges reuse the compiled functions -- nothing is compiled, in
    memory or on disk, for the second data set -- and give exactly what a fresh engine
    gives on it; going back to the first data set reproduces the first fit."""
    from bayesjudge import AnchoredBT
    from bayesjudge.models.anchored.simulate import simulate_battles

    six, _ = simulate_battles(np.linspace(-1, 1, 6), 240, random_seed=5)
    nine, _ = simulate_battles(np.linspace(-1.5, 1.5, 9), 400, random_seed=6)
    nine = nine[nine["judge"].isin(["human", "judge-good", "judge-left"])]

    def fit(table):
        model = AnchoredBT(random_seed=0).fit(table)
        return model, model.ranking(ci_prob=0.9)

    first, first_ranks = fit(six)
    made, _ = _spy(monkeypatch)
    before = compiled.compilations()
    other, other_ranks = fit(nine)
    assert made == [] and compiled.compilations() == before
    assert len(other_ranks) == 9 and other.map_["confusion"].shape == (2, 3, 3)
    again, again_ranks = fit(six)
    np.testing.assert_allclose(again.map_["skill"], first.map_["skill"], rtol=1e-12)
    pd.testing.assert_frame_equal(again_ranks, first_ranks)
    compiled.clear_cache()  # a fresh engine, built on the nine-item data
    fresh, fresh_ranks = fit(nine)
    np.testing.assert_allclose(other.map_["skill"], fresh.map_["skill"], rtol=1e-9)
    pd.testing.assert_frame_equal(other_ranks, fresh_ranks, rtol=1e-7)


def _bt_tables(cls, per_aspect: bool):
    """Two data sets of one structure and different sizes: the example's (2 contexts x 5
    items, 3 judges) and a larger one (4 contexts x 4 items, 2 judges); with two or three
    aspects for a per-aspect model."""
    def table(seed, contexts):
        t = cls.example_data(random_seed=seed).fit_args[0]
        return t.assign(context=t["context"].astype(str) + contexts)

    small = table(0, "")
    large = pd.concat([table(1, "-b"), table(2, "-c")], ignore_index=True)
    large = large[(large["judge"] != large["judge"].iloc[0])
                  & ~large[["left", "right"]].isin([large["left"].iloc[0]]).any(axis=1)]
    if per_aspect:
        small = pd.concat([small.assign(aspect=a) for a in ("x", "y")], ignore_index=True)
        large = pd.concat([large.assign(aspect=a) for a in ("x", "y", "z")], ignore_index=True)
    return small, large.reset_index(drop=True)


@pytest.mark.filterwarnings("ignore:comparisons.outcome:UserWarning")  # an unused level
@pytest.mark.parametrize("cls, kwargs", [
    ("DavidsonBT", {"discriminators": True, "position_bias": True, "tie": "per_judge"}),
    ("BTSigma", {"per_aspect": True}),
    ("OrdinalBT", {"per_judge_cutpoints": True, "discriminators": True, "position_bias": True}),
])
def test_one_bradley_terry_engine_serves_any_number_of_items_contexts_and_judges(
        cache, monkeypatch, cls, kwargs):
    """The Bradley-Terry family's graphs have no static size either: a data set with other
    numbers of contexts, items, judges (and aspects) compiles nothing, equals a fresh
    engine on it, and the first data set's fit comes back unchanged."""
    import bayesjudge

    model_cls = getattr(bayesjudge, cls)
    small, large = _bt_tables(model_cls, kwargs.get("per_aspect", False))

    def fit(table):
        model = model_cls(random_seed=0, **kwargs).fit(table)
        return model, model.ranking(ci_prob=0.9), model.judges(ci_prob=0.9)

    first, first_ranks, first_judges = fit(small)
    made, _ = _spy(monkeypatch)
    before = compiled.compilations()
    other, other_ranks, other_judges = fit(large)
    assert made == [] and compiled.compilations() == before
    assert len(other_ranks) == 16 * (3 if "per_aspect" in kwargs else 1)  # contexts x items
    assert other_judges["judge"].nunique() == 2
    again, again_ranks, again_judges = fit(small)
    pd.testing.assert_frame_equal(again_ranks, first_ranks)
    pd.testing.assert_frame_equal(again_judges, first_judges)
    compiled.clear_cache()  # a fresh engine, built on the larger data
    fresh, fresh_ranks, fresh_judges = fit(large)
    np.testing.assert_allclose(other.map_["skill"], fresh.map_["skill"], rtol=1e-9, atol=1e-12)
    pd.testing.assert_frame_equal(other_ranks, fresh_ranks, rtol=1e-7)
    pd.testing.assert_frame_equal(other_judges, fresh_judges, rtol=1e-7)
