"""On-disk cache of compiled log densities, so a fresh process does not recompile them.

PyTensor caches the C code of a graph under ``~/.pytensor``, but every new process
still rebuilds the graph, differentiates it and runs the rewrites before it can
look the C module up: about a second per compiled function for the smallest
models, most of a first fit. This cache stores the compiled ``pytensor`` functions
themselves (pickled after rewriting; unpickling relinks them to the cached C modules
in ~0.1 s), keyed by

* the model's structure key (the same key the in-process engine cache uses),
* the versions of bayesjudge, PyMC, PyTensor, numpy and Python, PyTensor's
  ``floatX``, and
* a hash of bayesjudge's own source files (all but the studies, datasets, CLI and
  plots, which build no graph), so an edited model never loads a stale graph.

A key whose ``repr`` is not reproducible across processes (an object printed with
its address) is never cached. Entries are written atomically; an entry that fails
to load is recompiled and overwritten. Functions are stored only while their data
are small (:data:`MAX_DATA_BYTES`).

What is (un)pickled: only functions this package compiled, never the user's data.
Every shared value (the ``pm.Data`` arrays, dim lengths) is zeroed in the stored copy
-- the engine writes the current data into them on load -- so no table, count or id
reaches the disk. A pickle runs code when loaded, so entries are read only from a
directory owned by the current user and writable by no one else (created with mode
0700, entries 0600); anything else is ignored and the functions are compiled afresh.

Location: ``$BAYESJUDGE_CACHE_DIR`` if set (empty or ``0``: no disk cache), else
``$XDG_CACHE_HOME/bayesjudge`` or ``~/.cache/bayesjudge``. Safe to delete at any time.
"""

from __future__ import annotations

import hashlib
import logging
import os
import pickle
import platform
import sys
from collections.abc import Hashable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

_log = logging.getLogger(__name__)

#: Largest total size of a function's shared data (bytes) that is written to disk.
MAX_DATA_BYTES = 2_000_000
_PACKAGE = Path(__file__).resolve().parent
# Parts of the package that never build a model graph (left out of the source hash,
# so editing a study or the CLI keeps the cache).
_NO_GRAPHS = {"experiments", "cli", "datasets", "demo.py", "plots.py"}


def cache_dir() -> Path | None:
    """The cache directory, or None when the disk cache is switched off."""
    env = os.environ.get("BAYESJUDGE_CACHE_DIR")
    if env is not None:
        return None if env.strip() in ("", "0", "off", "none") else Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "bayesjudge"


@cache
def _environment_fingerprint() -> str:
    import numpy
    import pymc
    import pytensor

    from bayesjudge.constants import __version__

    h = hashlib.sha256()
    for part in (__version__, pymc.__version__, pytensor.__version__, numpy.__version__,
                 sys.version, platform.machine(), pytensor.config.floatX):
        h.update(str(part).encode())
    for path in sorted(_PACKAGE.rglob("*.py")):
        if path.relative_to(_PACKAGE).parts[0] in _NO_GRAPHS:
            continue
        h.update(str(path.relative_to(_PACKAGE)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def entry_name(key: Hashable, role: str) -> str | None:
    """File name of one compiled function of a structure, or None if ``key`` can't be cached."""
    text = repr(key)
    if " at 0x" in text or "object at" in text:
        return None
    h = hashlib.sha256(_environment_fingerprint().encode())
    h.update(text.encode())
    h.update(role.encode())
    return f"{h.hexdigest()[:40]}.pkl"


def _private(path: Path) -> bool:
    """True if ``path`` is owned by this user and not writable by group or others (POSIX)."""
    if not hasattr(os, "getuid"):  # Windows: per-user profile folders
        return True
    st = path.stat()
    return st.st_uid == os.getuid() and not st.st_mode & 0o022


def load(name: str | None) -> Any | None:
    """The cached function stored under ``name`` (None on a miss or an unreadable entry)."""
    directory = cache_dir()
    if name is None or directory is None:
        return None
    path = directory / name
    try:
        if not (_private(directory) and _private(path)):
            _log.info("engine cache %s is not private to this user; not loading it", path)
            return None
        with open(path, "rb") as fh:
            return pickle.load(fh)
    except FileNotFoundError:
        return None
    except Exception as err:  # a truncated or incompatible entry: recompile, overwrite
        _log.info("engine cache entry %s unreadable (%s); recompiling", path, err)
        return None


def store(name: str | None, fn: Any, data: Mapping[str, Any]) -> None:
    """Write ``fn`` under ``name`` if caching is on and ``data`` is small; never raises.

    The stored copy has every shared value zeroed (the user's data never reach the
    disk); ``fn`` itself is left as it was.
    """
    directory = cache_dir()
    if name is None or directory is None:
        return
    if sum(getattr(v, "nbytes", 0) for v in data.values()) > MAX_DATA_BYTES:
        return
    shared = [(var, var.get_value(borrow=True)) for var in fn.get_shared()]
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        tmp = directory / f".{name}.{os.getpid()}.tmp"
        for var, value in shared:
            var.set_value(np.zeros_like(value), borrow=True)
        with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as fh:
            pickle.dump(fn, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, directory / name)
    except Exception as err:  # unpicklable op, read-only home, full disk: just don't cache
        _log.info("engine cache: not storing %s (%s)", name, err)
    finally:
        for var, value in shared:
            var.set_value(value, borrow=True)
