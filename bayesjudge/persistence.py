"""Model files: one netCDF file per fit, written atomically, read into memory.

The fit's ArviZ ``DataTree`` is stored as is; what a model needs to come back
(class, package version, constructor arguments, fit method, MAP point, extra
state) goes, as JSON, into ``bayesjudge_*`` attributes of the root node.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

__all__ = ["ModelFileError", "read_model_file", "warn_if_other_version", "write_model_file"]

_PREFIX = "bayesjudge_"
_FIELDS = ("class", "version", "params", "method", "map", "state")
_JSON_FIELDS = ("params", "map", "state")
_MIXED = _PREFIX + "mixed_ids"  # coordinates of ids of several types, as written


class ModelFileError(ValueError):
    """A file given to ``load`` is not a bayesjudge model file (or is damaged)."""


def write_model_file(tree: xr.DataTree, path, meta: dict[str, Any]) -> None:
    """Write ``tree`` with ``meta`` (keys :data:`_FIELDS`) to ``path``, atomically.

    The data go to a temporary file in the target folder, which is then renamed
    over ``path``: an interrupted write leaves the old file intact, and a file
    that is open (a loaded model's source) can be replaced.
    """
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"save path {str(path)!r} is a folder; give a file name, "
                                f"e.g. {str(path / 'fit.nc')!r}.")
    if not path.parent.is_dir():
        raise FileNotFoundError(f"folder {str(path.parent)!r} of save path {str(path)!r} "
                                f"does not exist; create it first.")
    tree, mixed = _ids_as_text(tree)
    if mixed:
        tree.attrs[_MIXED] = json.dumps(mixed)
    for key in _FIELDS:
        value = meta[key]
        tree.attrs[_PREFIX + key] = (json.dumps(value, default=_json_default)
                                     if key in _JSON_FIELDS else value)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        tree.to_netcdf(tmp, engine="h5netcdf")
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def read_model_file(path) -> tuple[xr.DataTree, dict[str, Any]]:
    """Read a model file into memory (the file is closed on return).

    Returns
    -------
    tree : xarray.DataTree
        The fit's groups, without the ``bayesjudge_*`` attributes.
    meta : dict
        The fields written by :func:`write_model_file`, JSON decoded.

    Raises
    ------
    FileNotFoundError
        ``path`` does not exist.
    ModelFileError
        The file is not a netCDF/HDF5 file written by bayesjudge, or is damaged.
    """
    if not Path(path).is_file():
        raise FileNotFoundError(f"model file {str(path)!r} does not exist.")
    hint = "Model files come from model.save(path)."
    try:
        with xr.open_datatree(path, engine="h5netcdf") as opened:
            tree = opened.load()
    except Exception as exc:  # h5py/netCDF raise many types for a foreign or cut file
        raise ModelFileError(f"{path} is not a bayesjudge model file (or is damaged): "
                             f"{type(exc).__name__}. {hint}") from None
    if _PREFIX + "class" not in tree.attrs:
        raise ModelFileError(f"{path} is not a bayesjudge model file (or is damaged): it was "
                             f"not written by bayesjudge (no bayesjudge_class attr). {hint}")
    try:
        meta = {key: tree.attrs[_PREFIX + key] for key in _FIELDS}
        for key in _JSON_FIELDS:
            meta[key] = json.loads(meta[key])
    except (KeyError, ValueError, TypeError) as exc:
        raise ModelFileError(f"{path} is a damaged bayesjudge model file: {exc!r}. "
                             f"{hint}") from None
    mixed = json.loads(tree.attrs.get(_MIXED, "{}"))
    for key in [k for k in tree.attrs if k.startswith(_PREFIX)]:
        del tree.attrs[key]
    return (_ids_restored(tree, mixed) if mixed else tree), meta


def _ids_as_text(tree: xr.DataTree) -> tuple[xr.DataTree, dict[str, list]]:
    """A copy of ``tree`` whose coordinates of mixed-type ids (``7`` and ``"7"``, which
    netCDF cannot store in one variable) are written as text, and those ids as they were
    (``"<group>|<coordinate>" -> values``), for :func:`_ids_restored`."""
    groups, mixed = {}, {}
    for node in tree.subtree:
        ds = node.to_dataset(inherit=False)
        for name in list(ds.coords):
            values = ds[name].values
            if values.dtype == object and len({type(v) for v in values.ravel().tolist()}) > 1:
                mixed[f"{node.path}|{name}"] = values.tolist()
                ds = ds.assign_coords({name: (ds[name].dims,
                                              np.asarray([str(v) for v in values.tolist()]))})
        groups[node.path] = ds
    if not mixed:
        return tree.copy(), {}
    return xr.DataTree.from_dict(groups), mixed


def _ids_restored(tree: xr.DataTree, mixed: dict[str, list]) -> xr.DataTree:
    """The tree with the mixed-type ids :func:`_ids_as_text` wrote as text back."""
    groups = {node.path: node.to_dataset(inherit=False) for node in tree.subtree}
    for key, values in mixed.items():
        path, name = key.split("|", 1)
        ds = groups[path]
        groups[path] = ds.assign_coords({name: (ds[name].dims, np.asarray(values, dtype=object))})
    return xr.DataTree.from_dict(groups)


def _json_default(obj):
    """JSON form of numpy values and of objects with ``to_dict`` (Prior)."""
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if hasattr(obj, "to_dict"):
        return obj.to_dict()
    raise TypeError(f"cannot serialise {type(obj).__name__}")


def warn_if_other_version(path, saved: str, current: str) -> None:
    """UserWarning (blamed on the caller of ``load``) when a file is from another version."""
    from bayesjudge.engine.messages import warn_user

    if saved != current:
        warn_user(f"{path} was saved by bayesjudge {saved}, this is {current}; refit if "
                  f"predictions look different.")


class PicklesAsModelFile:
    """A fitted model pickles as its model file: ``pickle``, ``joblib`` and
    ``multiprocessing`` carry the fit as :meth:`~bayesjudge.base.BayesianModel.save`
    writes it and get back what :func:`~bayesjudge.load` returns.

    A fit holds compiled functions, which do not pickle (before 2026-12-02:
    "'functools.partial' object has no attribute '__name__'"). An unfitted model pickles
    as any object; ``copy.copy`` stays a shallow copy (``bj.compare``'s refits use it).
    A MAP fit's Laplace draws are made on pickling, as on saving.
    """

    def __reduce_ex__(self, protocol):
        if not hasattr(self, "method_"):
            return super().__reduce_ex__(protocol)
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "fit.nc"
            self.save(path)
            return _unpickle_fit, (type(self).load, path.read_bytes())

    def __copy__(self):
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        return new


def _unpickle_fit(load, data: bytes):
    """The model a pickled fit's model file holds (:class:`PicklesAsModelFile`), read by
    the model class's own ``load``."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "fit.nc"
        path.write_bytes(data)
        return load(path)
