"""Tables of any dataframe library as the pandas DataFrames the validators read.

Every public function that takes a table also takes a polars DataFrame (or
LazyFrame, collected), a pyarrow Table, any other table narwhals knows (modin,
cuDF, DuckDB, ...), any object exporting an Arrow C stream (the Arrow PyCapsule
interface, ``__arrow_c_stream__``) and, while pandas still reads it, any object
speaking the older dataframe interchange protocol (``__dataframe__``). The
conversion happens once, here, through narwhals (a maintained compatibility layer
between dataframe libraries), where the table enters validation
(:func:`bayesjudge.data.schema.require_frame`, ``BayesianModel.fit``); results are
pandas.

A converted table is what pandas itself would hold: text columns come back with
pandas' default string dtype (``str``), as ``pd.DataFrame({...})`` and
``pd.read_csv`` give them, so ids are the same Python strings and every fit is the
same as on the pandas table. The index is 0, 1, ... (the other libraries have
none), so error messages name rows by their position.
"""

from __future__ import annotations

import warnings

import narwhals as nw
import pandas as pd

__all__ = ["as_pandas"]


def as_pandas(obj):
    """``obj`` as a pandas DataFrame if it is a table of another library, else ``obj``.

    A pandas DataFrame is returned as it is (the same object, no copy); anything that
    is not a table (a validated ``Comparisons``, a list, None) is returned unchanged,
    for the caller to accept or to refuse with its own message.

    Examples
    --------
    >>> import pyarrow as pa
    >>> df = as_pandas(pa.table({"item": ["000", "1.10"], "vote": [1, -1]}))
    >>> df["item"].tolist(), type(df).__name__
    (['000', '1.10'], 'DataFrame')
    """
    if isinstance(obj, pd.DataFrame):
        return obj
    frame = nw.from_native(obj, pass_through=True, allow_series=True)
    if isinstance(frame, nw.Series):
        return obj  # a column, not a table (it may export an Arrow stream too)
    if isinstance(frame, nw.LazyFrame):
        frame = frame.collect()  # a model needs every row: read the query's result once
    if isinstance(frame, nw.DataFrame):
        return frame.to_pandas()
    if hasattr(obj, "__arrow_c_stream__"):  # the Arrow PyCapsule interface
        return nw.from_arrow(obj, backend="pyarrow").to_pandas()
    if hasattr(obj, "__dataframe__"):
        # The interchange protocol is deprecated by pandas in favour of the Arrow
        # interface above; a library that only speaks it still gets its table read.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return pd.api.interchange.from_dataframe(obj)
    return obj
