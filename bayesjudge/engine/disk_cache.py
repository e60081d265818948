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
its address) is never cached. Functions are stored only while their data are small
(:data:`MAX_DATA_BYTES`).

What is (un)pickled: only functions this package compiled, never the user's data.
Every shared value (the ``pm.Data`` arrays, dim lengths) is zeroed in the stored copy
-- the engine writes the current data into them on load -- so no table, count or id
reaches the disk. A pickle runs code when loaded, so the cache is used -- read *and*
written -- only in a directory owned by the current user and writable by no one else
(created with mode 0700); in any other directory (e.g. a shared 0777 one) it does
nothing and every function is compiled afresh. Entries are written to a fresh
temporary file (``tempfile.mkstemp``: ``O_EXCL``, ``O_NOFOLLOW``, mode 0600) in the
cache directory and renamed over the entry (``os.replace``), so no planted file or
symlink is ever written through; entries are opened with ``O_NOFOLLOW`` and read only
if they are regular files private to the user. Each entry carries a header (format,
environment fingerprint, its own name): an entry that is truncated, not a function
this package stored (e.g. a pickle of an int), or from another version is ignored
with a log line (logger ``bayesjudge.engine.disk_cache``), recompiled and overwritten.

Size: the entries are kept under ``$BAYESJUDGE_CACHE_MAX_MB`` megabytes (default
:data:`DEFAULT_MAX_MB`; an entry is 50-650 kB): after each write the least recently
used entries (by modification time, refreshed on every load) are deleted until the
total fits. Entries of an older bayesjudge/PyMC/source version are never read again
and so are the first to go.

Location: ``$BAYESJUDGE_CACHE_DIR`` if set (empty or ``0``: no disk cache), else
``$XDG_CACHE_HOME/bayesjudge`` or ``~/.cache/bayesjudge``. Safe to delete at any time.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import pickle
import platform
import re
import stat
import sys
import tempfile
import time
from collections.abc import Hashable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from pytensor.compile.builders import OpFromGraph

_log = logging.getLogger(__name__)

#: Largest total size of a function's shared data (bytes) that is written to disk.
MAX_DATA_BYTES = 2_000_000
#: The bayesjudge package (this module is in its engine/ subfolder): its model code is hashed.
_PACKAGE = Path(__file__).resolve().parents[1]
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
    for path in hashed_sources():
        h.update(str(path.relative_to(_PACKAGE)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def hashed_sources() -> list[Path]:
    """The package's source files that can build a model graph (their bytes key the cache)."""
    return [path for path in sorted(_PACKAGE.rglob("*.py"))
            if path.relative_to(_PACKAGE).parts[0] not in _NO_GRAPHS]


def entry_name(key: Hashable, role: str) -> str | None:
    """File name of one compiled function of a structure, or None if ``key`` can't be cached."""
    text = repr(key)
    if " at 0x" in text or "object at" in text:
        return None
    h = hashlib.sha256(_environment_fingerprint().encode())
    h.update(text.encode())
    h.update(role.encode())
    return f"{h.hexdigest()[:40]}.pkl"


#: Version of the entry layout (the header checked on load).
FORMAT = 2
#: Default bound on the cache's total size (megabytes; ``$BAYESJUDGE_CACHE_MAX_MB``).
DEFAULT_MAX_MB = 200.0
_ENTRY = re.compile(r"[0-9a-f]{40}\.pkl")
_TMP_PREFIX, _TMP_SUFFIX = ".bayesjudge-", ".tmp"
_OLD_TMP = re.compile(r"\.[0-9a-f]{40}\.pkl\.\d+\.tmp")  # the previous version's temporaries
#: A temporary file older than this (seconds) was left by a killed process: deleted.
_STALE_TMP_S = 3600.0
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_refused: set[str] = set()  # directories already reported as not private (log once)


def max_bytes() -> int:
    """The size bound in bytes: ``$BAYESJUDGE_CACHE_MAX_MB`` (default :data:`DEFAULT_MAX_MB`)."""
    env = os.environ.get("BAYESJUDGE_CACHE_MAX_MB")
    if env is None or not env.strip():
        return int(DEFAULT_MAX_MB * 1e6)
    try:
        value = float(env)
        if not (value >= 0 and np.isfinite(value)):
            raise ValueError
    except ValueError:
        _log.warning("BAYESJUDGE_CACHE_MAX_MB=%r is not a size in megabytes >= 0; using the "
                     "default %g", env, DEFAULT_MAX_MB)
        return int(DEFAULT_MAX_MB * 1e6)
    return int(value * 1e6)


def _private(st: os.stat_result) -> bool:
    """True if ``st`` is owned by this user and not writable by group or others (POSIX)."""
    if not hasattr(os, "getuid"):  # Windows: per-user profile folders
        return True
    return st.st_uid == os.getuid() and not st.st_mode & 0o022


def _usable_dir(create: bool) -> Path | None:
    """The cache directory if it is private to this user (created 0700 if ``create``).

    None when the cache is off, the directory is missing (and not ``create``), or
    anyone else could write there: then the cache neither reads nor writes.
    """
    directory = cache_dir()
    if directory is None:
        return None
    try:
        if create:
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = os.stat(directory)
    except OSError:  # missing, read-only parent: no cache
        return None
    if stat.S_ISDIR(st.st_mode) and _private(st):
        return directory
    if str(directory) not in _refused:
        _refused.add(str(directory))
        _log.warning("engine cache %s is not a directory private to this user (owner uid "
                     "%d, mode %o): not reading or writing it; compiled functions are not "
                     "cached", directory, st.st_uid, stat.S_IMODE(st.st_mode))
    return None


def load(name: str | None) -> Any | None:
    """The cached function stored under ``name`` (None on a miss or an unusable entry)."""
    directory = _usable_dir(create=False) if name is not None else None
    if directory is None:
        return None
    path = directory / name
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW)
    except FileNotFoundError:
        return None
    except OSError as err:  # a symlink (ELOOP), no permission: recompile, overwrite
        _log.info("engine cache entry %s not opened (%s); recompiling", path, err)
        return None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not (stat.S_ISREG(st.st_mode) and _private(st)):
            _log.info("engine cache entry %s is not a regular file private to this user; "
                      "recompiling", path)
            return None
        try:
            entry = pickle.load(fh)
        except Exception as err:  # truncated, from another PyTensor: recompile, overwrite
            _log.info("engine cache entry %s unreadable (%s: %s); recompiling", path,
                      type(err).__name__, err)
            return None
    fn = _function_of(entry, name)
    if fn is None:
        _log.info("engine cache entry %s is not a function this version stored; "
                  "recompiling", path)
        return None
    try:
        os.utime(path)  # least recently used goes first on eviction
    except OSError:
        pass
    return fn


def _function_of(entry: Any, name: str) -> Any | None:
    """The compiled function in ``entry`` if its header matches this environment."""
    from pytensor.compile import Function

    if not (isinstance(entry, dict) and entry.get("format") == FORMAT
            and entry.get("fingerprint") == _environment_fingerprint()
            and entry.get("name") == name):
        return None
    fn = entry.get("function")
    return fn if isinstance(fn, Function) else None


def store(name: str | None, fn: Any, data: Mapping[str, Any]) -> None:
    """Write ``fn`` under ``name`` if caching is on and ``data`` is small; never raises.

    The stored copy has every shared value zeroed (the user's data never reach the
    disk); ``fn`` itself is left as it was. Then the cache is trimmed to
    :func:`max_bytes`.
    """
    if name is None or sum(getattr(v, "nbytes", 0) for v in data.values()) > MAX_DATA_BYTES:
        return
    directory = _usable_dir(create=True)
    if directory is None:
        return
    shared = [(var, var.get_value(borrow=True)) for var in fn.get_shared()]
    tmp = None
    try:
        for var, value in shared:
            var.set_value(np.zeros_like(value), borrow=True)
        entry = {"format": FORMAT, "fingerprint": _environment_fingerprint(), "name": name,
                 "function": fn}
        # mkstemp: an unpredictable name, O_CREAT | O_EXCL | O_NOFOLLOW, mode 0600
        fd, tmp = tempfile.mkstemp(prefix=_TMP_PREFIX, suffix=_TMP_SUFFIX, dir=directory)
        with os.fdopen(fd, "wb") as fh:
            _Pickler(fh, protocol=pickle.HIGHEST_PROTOCOL).dump(entry)
        os.replace(tmp, directory / name)  # renames over a planted symlink, never through it
        tmp = None
    except Exception as err:  # unpicklable op, read-only home, full disk: just don't cache
        _log.info("engine cache: not storing %s (%s)", name, err)
    finally:
        for var, value in shared:
            var.set_value(value, borrow=True)
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    evict(directory, newest=name)


class _Pickler(pickle.Pickler):
    """Pickles a compiled function with the gradient caches of its OpFromGraph ops emptied.

    A compiled function never differentiates again, but an OpFromGraph whose pullback
    was built (``pt.logsumexp``'s LogSumExp, once the model's gradient was taken) keeps it
    as a local closure, which pickle refuses: the whole entry was then not stored (every
    AnchoredBT function, compiled anew in each process). The caches are memos, rebuilt on
    demand; every op the pickle reaches passes here, in the compiled graph or in the one
    it was compiled from.
    """

    def reducer_override(self, obj):  # called for every object the pickle reaches
        if isinstance(obj, OpFromGraph):
            if getattr(obj, "_lop_op_cache", None):
                obj._lop_op_cache = {}
            if getattr(obj, "_rop_op_cache", None) is not None:
                obj._rop_op_cache = None
        return NotImplemented


def evict(directory: Path, newest: str | None = None) -> None:
    """Delete the least recently used entries until the cache fits :func:`max_bytes`.

    Only the cache's own files are touched (entry names and its temporaries; a
    temporary older than an hour was left by a killed process); ``newest`` goes last.
    """
    limit, now, entries = max_bytes(), time.time(), []
    try:
        with os.scandir(directory) as it:
            for item in it:
                st = item.stat(follow_symlinks=False)
                if not stat.S_ISREG(st.st_mode):
                    continue
                if (item.name.startswith(_TMP_PREFIX) and item.name.endswith(_TMP_SUFFIX)
                        or _OLD_TMP.fullmatch(item.name)):
                    if now - st.st_mtime > _STALE_TMP_S:
                        with contextlib.suppress(OSError):
                            os.unlink(item.path)
                elif _ENTRY.fullmatch(item.name):
                    entries.append((item.name == newest, st.st_mtime, st.st_size, item.path))
    except OSError as err:
        _log.info("engine cache: could not trim %s (%s)", directory, err)
        return
    total = sum(size for _, _, size, _ in entries)
    for _, _, size, path in sorted(entries):
        if total <= limit:
            break
        with contextlib.suppress(OSError):
            os.unlink(path)
            total -= size
            _log.info("engine cache: evicted %s (size bound %d bytes)", path, limit)
