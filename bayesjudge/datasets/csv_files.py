"""Finding and reading the CSV files of the arena_ppr, LLMFAO and position-bias loaders.

``bayesjudge/data`` is one flat folder, so a shipped copy carries its dataset's name
as a prefix (``llmfao_battles.csv.gz`` for LLMFAO's ``battles.csv``);
:func:`find_csv` looks for that copy first, then for the upstream name in
``../shared/data/<dataset>`` of a source checkout, or in the file or folder the user
passes.
"""

from __future__ import annotations

import gzip
import io
from collections.abc import Iterable, Sequence
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

import numpy as np
import pandas as pd

from bayesjudge.data import DataValidationError
from bayesjudge.data.messages import show_values
from bayesjudge.datasets.files import SHARED_DATA, require_columns, resolve_data_file

__all__ = ["check_values", "find_csv", "read_csv_strings"]


def find_csv(
    shipped: str, name: str, path: str | Path | None, dataset: str
) -> Path | Traversable:
    """The file to read: ``path`` (a file, or a folder holding ``name`` or ``name.gz``),
    else the shipped copy ``bayesjudge/data/<shipped>``, else ``../shared/data/<dataset>``.

    Raises
    ------
    FileNotFoundError
        Saying where it looked and what to pass.
    """
    if path is not None:
        return resolve_data_file(name, path, dataset, allow_gzip=True)
    try:
        packaged = resources.files("bayesjudge.data") / shipped
    except ModuleNotFoundError:  # pragma: no cover - bayesjudge.data is always importable
        packaged = None
    if packaged is not None and packaged.is_file():
        return packaged
    for n in (name, name + ".gz"):
        candidate = SHARED_DATA / dataset / n
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(
        f"{shipped} is not shipped in bayesjudge/data and {name} is not in "
        f"{SHARED_DATA / dataset}; pass path= to the upstream {name} (or its folder)."
    )


def read_csv_strings(res: Path | Traversable, columns: Sequence[str], table: str) -> pd.DataFrame:
    """Every column of a CSV (gunzipped when its name ends in ``.gz``) as text exactly as
    written (``007`` stays ``007``, an empty field stays ``""``), after checking that it
    has ``columns`` and no repeated header line."""
    raw = res.read_bytes()
    if res.name.endswith(".gz"):
        raw = gzip.decompress(raw)
    df = pd.read_csv(io.BytesIO(raw), dtype=str, keep_default_na=False, encoding="utf-8-sig")
    require_columns(df, columns, f"{table} ({res.name})")
    return df


def check_values(df: pd.DataFrame, column: str, allowed: Iterable[str], table: str,
                 fix: str) -> None:
    """Raise :class:`~bayesjudge.data.DataValidationError` naming the values of ``column``
    outside ``allowed`` and the file lines holding them (the header is line 1)."""
    allowed = list(allowed)
    bad = ~df[column].isin(allowed).to_numpy()
    if bad.any():
        rows = np.flatnonzero(bad)
        raise DataValidationError(
            f"{table}: column {column!r} must be one of {allowed}; got "
            f"{show_values(pd.unique(df[column].to_numpy()[bad]))} on file lines "
            f"{show_values(rows + 2)}. {fix}"
        )
