"""Locating and reading the data files of :mod:`bayesjudge.datasets`."""

from __future__ import annotations

import gzip
import json
from collections.abc import Sequence
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

import numpy as np
import pandas as pd

from bayesjudge.data import DataValidationError, check_header_rows

__all__ = ["SHARED_DATA", "SeedLike", "read_json", "require_columns", "resolve_data_file"]

#: Optional fallback location of the upstream files in a source checkout: <repo>/../shared/data.
SHARED_DATA = Path(__file__).resolve().parents[3] / "shared" / "data"

SeedLike = int | np.random.Generator | None


def resolve_data_file(
    name: str, path: str | Path | None, shared_subdir: str, allow_gzip: bool
) -> Path | Traversable:
    """Find a data file: an explicit path, the copy shipped in bayesjudge/data, ../shared/data.

    Parameters
    ----------
    name : str
        Upstream file name.
    path : str, Path or None
        A file, or a folder holding ``name`` (or ``name + '.gz'``); None searches the
        shipped copy, then :data:`SHARED_DATA` / ``shared_subdir``.
    shared_subdir : str
        Sub-folder of :data:`SHARED_DATA` to search.
    allow_gzip : bool
        Also accept ``name + '.gz'``.

    Returns
    -------
    Path or importlib.resources.abc.Traversable

    Raises
    ------
    FileNotFoundError
        When no candidate exists; the message says where it looked.
    """
    names = [name, name + ".gz"] if allow_gzip else [name]
    if path is not None:
        p = Path(path)
        if p.is_file():
            return p
        for n in names:
            if (p / n).is_file():
                return p / n
        raise FileNotFoundError(
            f"path={str(path)!r}: neither a file nor a folder holding {' or '.join(names)}; "
            "pass the upstream file (or its folder), or path=None for the shipped copy."
        )
    try:
        packaged = resources.files("bayesjudge.data")
    except ModuleNotFoundError:  # pragma: no cover
        packaged = None
    for root in ([packaged] if packaged is not None else []) + [SHARED_DATA / shared_subdir]:
        for n in names:
            candidate = root / n
            if candidate.is_file():
                return candidate
    raise FileNotFoundError(
        f"{name} is neither shipped in bayesjudge/data nor in {SHARED_DATA / shared_subdir}; "
        "pass path= to the upstream file."
    )


def read_json(res: Path | Traversable) -> list[dict]:
    """Parse a JSON file, gunzipping it first when its name ends in ``.gz``."""
    raw = res.read_bytes()
    if res.name.endswith(".gz"):
        raw = gzip.decompress(raw)
    return json.loads(raw.decode("utf-8"))


def require_columns(df: pd.DataFrame, columns: Sequence[str], table: str) -> None:
    """Raise :class:`~bayesjudge.data.DataValidationError` naming the columns ``table`` lacks,
    or the rows that repeat the header line."""
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise DataValidationError(
            f"{table}: missing column(s) {missing}; got {list(df.columns)}. "
            f"Provide a table with columns {list(columns)}."
        )
    check_header_rows(df, table)  # a repeated header line (concatenated files)
