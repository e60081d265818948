"""How the data layer names what is wrong: its error class, the id columns, values and rows.

The lowest module of :mod:`bayesjudge.data` (the validators of :mod:`~bayesjudge.data.schema`
and the look-alike checks of :mod:`~bayesjudge.data.lookalikes` both use it).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from bayesjudge.data.vocabulary import ID_COLUMNS, LINE_INDEX

__all__ = ["ID_COLUMNS", "LINE_INDEX", "PACKAGE_DIR", "DataValidationError", "show_rows",
           "show_values"]

PACKAGE_DIR = str(Path(__file__).resolve().parents[1])
"""The package's folder: the data layer's warnings skip it (``skip_file_prefixes``), so they
point at the user's line."""


class DataValidationError(ValueError):
    """Raised when a user table does not follow the documented schema."""


def show_values(values: Iterable, k: int = 5, fmt=repr) -> str:
    """The first ``k`` values for an error message, e.g. ``[1, 2, 3] ... (8 in all)``
    (each shown by ``fmt``: ``str`` for values that are already formatted)."""
    import numpy as np  # (not at import: the command line's parser uses this module)

    values = [v.item() if isinstance(v, np.generic) else v for v in values]
    head = ", ".join(fmt(v) for v in values[:k])
    more = f" ... ({len(values)} in all)" if len(values) > k else ""
    return f"[{head}{more}]"


def show_rows(index, k: int = 5) -> str:
    """Where rows are, for an error message: ``file lines [4, 9]`` for a table read from
    a file (index named :data:`LINE_INDEX`), else ``rows [0, 7]`` (the index labels)."""
    what = "file lines" if getattr(index, "name", None) == LINE_INDEX else "rows"
    return f"{what} {show_values(index, k)}"
